"""Exported reports: a rendered file of one plan or purchase-mix analysis (owner only)."""

from django.conf import settings
from django.db import models

from planner.reports.core.model import file_stem
from planner.runs import TrackedRun


class Report(TrackedRun):
    """One export rendered in the background (PDF): the report model it renders, then the file.

    `document` is the report model (planner.reports.core.Report.to_dict()) taken when the
    export was asked for, so the file shows the plan or analysis as it was then.
    """

    TASK_NAME = "planner.render_report"

    class Kind(models.TextChoices):
        PLAN = "plan", "Plan"
        HISTORY = "history", "Purchase-mix analysis"
        CAPACITY = "capacity", "Capacity sweep"

    class Format(models.TextChoices):
        PDF = "pdf", "PDF"
        XLSX = "xlsx", "XLSX"
        CSV = "csv", "CSV"
        HTML = "html", "HTML"

    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="reports"
    )
    kind = models.CharField(max_length=8, choices=Kind.choices)
    subject_id = models.PositiveIntegerField(help_text="The plan's or the history's id")
    fmt = models.CharField("format", max_length=4, choices=Format.choices)
    title = models.CharField(max_length=255)
    document = models.JSONField(help_text="The report model rendered into the file")
    file = models.FileField(upload_to="reports/", blank=True)
    size_bytes = models.PositiveIntegerField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["owner", "-created_at"])]

    def __str__(self) -> str:
        return f"{self.title} ({self.fmt})"

    @property
    def filename(self) -> str:
        """The report's title and the day it was asked for, e.g.
        "worked-example-llama-2-7b-on-1-t-tokens-within-30-days-2026-12-01.pdf"."""
        stem = file_stem(self.title, self.created_at.date().isoformat() if self.created_at else "")
        return f"{stem or f'{self.kind}-{self.subject_id}'}.{self.fmt}"
