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


class PlanSweepChunk(TrackedRun):
    """One part of a large plan's catalog sweep, run by its own task so several workers share
    the sweep; the part that finishes last merges them and stores the plan (services)."""

    TASK_NAME = "planner.run_plan_chunk"

    scenario = models.ForeignKey(PlanScenario, on_delete=models.CASCADE, related_name="chunks")
    index = models.PositiveSmallIntegerField(help_text="0-based position in the sweep")
    n_chunks = models.PositiveSmallIntegerField(help_text="How many parts the sweep has")
    instance_keys = models.JSONField(help_text="Instance type ids this part sweeps")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["scenario", "index"],
                                               name="one_chunk_per_scenario_index")]

    def __str__(self) -> str:
        return f"part {self.index + 1} of {self.n_chunks} of plan {self.scenario_id}"
