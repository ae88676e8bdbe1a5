"""Planning scenarios and their plans (private to their owner)."""

from django.conf import settings
from django.db import models

from planner.runs import TrackedRun


class PlanScenario(TrackedRun):
    """A training scenario and its ranked, costed configurations (the plan)."""

    TASK_NAME = "planner.run_plan"

    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="plan_scenarios"
    )
    name = models.CharField(max_length=200)
    inputs = models.JSONField(help_text="The normalised scenario (planner.plans.scenario)")
    is_saved = models.BooleanField(default=False)

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["owner", "-created_at"])]

    def __str__(self) -> str:
        return self.name
