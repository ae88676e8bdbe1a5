"""Uploaded job histories and their purchase-mix analysis runs (private to the uploader)."""

from django.conf import settings
from django.db import models

from planner.purchase_mix.core.upload.settings import SETTINGS_BY_NAME
from planner.runs import TrackedRun


class History(models.Model):
    """One uploaded job-history file: the original, the parsed rows and the hourly demand.

    `upload`, `parsed` (parquet of the parsed jobs or usage samples) and `demand` (parquet of
    the hourly firm and interruptible GPUs per type) are stored under random names.
    """

    # The formats of the upload-settings table (purchase_mix.core.upload.settings).
    Format = models.TextChoices(  # type: ignore[misc]
        "Format", [(value.upper(), (value, words))
                   for value, words in SETTINGS_BY_NAME["format"].choices])

    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="job_histories"
    )
    name = models.CharField(max_length=255, help_text="The uploaded file's name")
    fmt = models.CharField("format", max_length=16, choices=Format.choices)
    column_map = models.JSONField(default=dict, blank=True)
    time_unit = models.CharField(max_length=8, blank=True)
    origin = models.CharField(max_length=64, blank=True)
    default_gpu_type = models.CharField(max_length=64, blank=True)
    is_skipping_bad_rows = models.BooleanField(default=False)
    upload = models.FileField(upload_to="histories/")
    parsed = models.FileField(upload_to="histories/")
    demand = models.FileField(upload_to="histories/")
    size_bytes = models.BigIntegerField()
    rows_read = models.PositiveIntegerField()
    rows_skipped = models.PositiveIntegerField(default=0)
    rows_ignored = models.PositiveIntegerField(default=0)
    records = models.PositiveIntegerField(help_text="Jobs or usage samples kept")
    encoding = models.CharField(max_length=32)
    delimiter = models.CharField(max_length=4)
    gpu_types = models.JSONField(default=list)
    is_usage = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name_plural = "histories"

    def __str__(self) -> str:
        return self.name



class AnalysisRun(TrackedRun):
    """Analysis and recommendation of one history for one set of purchase options.

    `result` holds the recommendation document (see services.recommendation_document).
    """

    TASK_NAME = "planner.analyze_run"

    history = models.ForeignKey(History, on_delete=models.CASCADE, related_name="runs")
    provider = models.CharField(max_length=32, blank=True, help_text="Blank: cheapest offered")
    region = models.CharField(max_length=64, blank=True, help_text="Blank: any region")
    lookback_days = models.PositiveSmallIntegerField(
        null=True, blank=True, help_text="Fit on the last N days; blank: the whole history"
    )
    spot_bands = models.JSONField(default=dict, blank=True, help_text="provider -> band")
    accelerator_map = models.JSONField(default=dict, blank=True, help_text="GPU type -> slug")
    growth_scenarios = models.JSONField(
        default=list, blank=True, help_text="Demand growth per year (fractions); [] = defaults"
    )
    is_spot_alternative = models.BooleanField(
        default=False, help_text="Spot (with its interruption overhead) counts as an alternative"
    )
    is_elsewhere_alternative = models.BooleanField(
        default=False,
        help_text="On-demand in another region or provider counts as the baseline (default: "
        "on-demand of the same provider, region and instance type)",
    )

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"run {self.pk} of {self.history_id} ({self.status})"
