"""The report of a stored plan (planner.reports builds and renders it)."""

from django.utils import timezone

from planner.plans.core.fields import SCENARIO_FIELDS
from planner.plans.models import PlanScenario
from planner.reports.core.model import Report as ReportDocument
from planner.reports.core.plan_report import report_from_plan


def plan_report(*, scenario: PlanScenario) -> ReportDocument:
    """The report model of a finished plan; ValueError while it is not done."""
    if scenario.status != PlanScenario.Status.DONE or not scenario.result:
        raise ValueError(f"result: plan {scenario.pk} is {scenario.status}, not done yet")
    if "no_fit" in scenario.result:
        raise ValueError(f"result: plan {scenario.pk} has no configuration that fits; "
                         "nothing to export")
    if not scenario.result.get("n_feasible"):
        fix = (scenario.result.get("what_would_work") or {}).get("fix") or ""
        raise ValueError(f"result: no option of plan {scenario.pk} meets its deadline and "
                         f"budget; nothing to export. {fix}".strip())
    return report_from_plan(
        scenario.result, inputs=scenario.inputs, name=scenario.name, subject_id=scenario.pk,
        generated_at=timezone.now().isoformat(timespec="seconds"),
        labels=FIELD_LABELS, units=FIELD_UNITS,
    )


# The inputs in the report are worded as the plan form words them.
FIELD_LABELS = {f.name: f.label for f in SCENARIO_FIELDS}
FIELD_UNITS = {f.name: f.unit for f in SCENARIO_FIELDS}
