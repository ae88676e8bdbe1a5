"""Stored simulation requests and results, and users' own measured runs."""

from django.conf import settings
from django.db import models

from planner.runs import TrackedRun
from simulator.core import PRESETS


class SimulationRun(TrackedRun):
    """One simulation (a configuration) or sweep (the whole catalog) and its stored result.

    `request` holds the JSON the service validated: workload, goal and hardware choice.
    """

    TASK_NAME = "simulator.run_simulation"

    class Kind(models.TextChoices):
        SINGLE = "single", "Single configuration"
        SWEEP = "sweep", "Whole-catalog sweep"

    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="simulations"
    )
    kind = models.CharField(max_length=8, choices=Kind.choices, default=Kind.SINGLE)
    request = models.JSONField()

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["owner", "-created_at"])]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} #{self.pk} ({self.status})"

    @property
    def preset_name(self) -> str:
        """The requested preset's name ('Llama 2 7B'), '' for a custom model: a sweep's result
        has no workload name to show."""
        preset = ((self.request or {}).get("workload") or {}).get("preset") or ""
        return PRESETS[preset].name if preset in PRESETS else preset


class MeasuredRun(models.Model):
    """A training run a user measured, in the reference-runs schema, to check the model on."""

    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="measured_runs"
    )
    run_id = models.CharField(max_length=200)
    row = models.JSONField(help_text="The CSV row, reference_runs.csv columns")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["run_id"]
        constraints = [
            models.UniqueConstraint(fields=["owner", "run_id"], name="measured_run_unique_id")
        ]

    def __str__(self) -> str:
        return self.run_id


class UserCalibration(models.Model):
    """A calibration refitted on the reference runs plus a user's own runs."""

    owner = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="calibration"
    )
    params = models.JSONField()
    n_runs = models.PositiveIntegerField(help_text="rows the fit used")
    is_active = models.BooleanField(default=True)
    fitted_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"calibration of {self.owner} ({self.n_runs} runs)"


class CalibrationFit(TrackedRun):
    """One refit of a user's calibration on the reference runs plus their measured runs (a
    Celery task: a few seconds). `result` holds the FitOutcome: runs used, and the median abs
    % error on the user's runs before and after. One at a time per user."""

    TASK_NAME = "simulator.fit_calibration"

    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="calibration_fits"
    )

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["owner", "-created_at"])]

    def __str__(self) -> str:
        return f"calibration fit #{self.pk} ({self.status})"
