"""A stored serving plan: the checked input and the ranked result document."""

from django.conf import settings
from django.db import models


class ServingPlan(models.Model):
    """One serving plan of a user. Computed in the request (whole catalog in well under a
    second, benchmarks/bench_serving.py), so it is stored complete or not at all."""

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE,
                              related_name="serving_plans")
    name = models.CharField(max_length=200)
    inputs = models.JSONField(help_text="The checked input (planner.serving.core.fields)")
    result = models.JSONField(help_text="The plan document (planner.serving.services)")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["owner", "-created_at"])]

    def __str__(self) -> str:
        return self.name
