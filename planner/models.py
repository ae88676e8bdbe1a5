"""The planner app's models, defined in their feature folders (one app label: `planner`)."""

from planner.capacity.models import CapacityPart, CapacityRun
from planner.outbox import OutboxEntry
from planner.plans.models import PlanScenario, PlanSweepChunk
from planner.purchase_mix.models import AnalysisRun, History
from planner.reports.models import Report
from planner.serving.models import ServingPlan
from planner.throttle import ThrottleCounter
from planner.tokens import ApiToken

__all__ = ["AnalysisRun", "ApiToken", "CapacityPart", "CapacityRun", "History", "OutboxEntry",
           "PlanScenario", "PlanSweepChunk", "Report", "ServingPlan", "ThrottleCounter"]
