"""Capacity sweeps of an analysed history (private to the history's owner)."""

from django.db import models

from planner.purchase_mix.models import AnalysisRun, History
from planner.runs import TrackedRun


class CapacityRun(TrackedRun):
    """One frontier sweep of a history's jobs of one GPU type, priced with the offers of a
    finished purchase-mix analysis. `result` holds the capacity document
    (planner.capacity.documents.plan_document)."""

    TASK_NAME = "planner.run_capacity"

    history = models.ForeignKey(History, on_delete=models.CASCADE,
                                related_name="capacity_runs")
    analysis = models.ForeignKey(AnalysisRun, on_delete=models.SET_NULL, null=True,
                                 related_name="capacity_runs",
                                 help_text="The analysis whose prices and no-wait commitment "
                                           "it uses")
    inputs = models.JSONField(help_text="planner.capacity.core.inputs.CapacityInputs.to_dict()")

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"capacity sweep {self.pk} of history {self.history_id} ({self.status})"


class CapacityPart(TrackedRun):
    """One part of a large sweep (grid points [start, stop)), run by its own task so several
    workers share it; the part that finishes last merges them and stores the sweep."""

    TASK_NAME = "planner.run_capacity_part"

    capacity_run = models.ForeignKey(CapacityRun, on_delete=models.CASCADE,
                                     related_name="parts")
    index = models.PositiveSmallIntegerField(help_text="0-based position in the sweep")
    n_parts = models.PositiveSmallIntegerField(help_text="How many parts the sweep has")
    start = models.PositiveIntegerField(help_text="First grid point of this part")
    stop = models.PositiveIntegerField(help_text="One past its last grid point")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["capacity_run", "index"],
                                               name="one_capacity_part_per_index")]

    def __str__(self) -> str:
        return f"part {self.index + 1} of {self.n_parts} of capacity sweep {self.capacity_run_id}"
