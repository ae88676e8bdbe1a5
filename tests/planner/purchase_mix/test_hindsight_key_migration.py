"""An analysis stored before issue 20 reads its hindsight replay under `hindsight_reference`
after the migration (and back, reversed)."""

import importlib

import pytest
from django.apps import apps

from planner.models import AnalysisRun, History

pytestmark = pytest.mark.django_db
migration = importlib.import_module("planner.migrations.0013_analysis_hindsight_reference_key")


def test_the_old_recommendation_key_becomes_the_hindsight_reference(user) -> None:
    history = History.objects.create(owner=user, name="old.csv", fmt="generic", size_bytes=10,
                                     rows_read=1, records=1, encoding="utf-8", delimiter=",")
    old = {"what_to_buy": {"lines": []},
           "recommendation": {"plans": [], "savings_plans": [], "n_hours": 48}}
    run = AnalysisRun.objects.create(history=history, status="done", result=old)
    migration.rename_key(apps, None)
    run.refresh_from_db()
    assert "recommendation" not in run.result
    assert run.result["hindsight_reference"]["n_hours"] == 48
    assert run.result["hindsight_reference"]["words"].startswith("What you would have bought")
    migration.restore_key(apps, None)
    run.refresh_from_db()
    assert run.result["recommendation"] == {"plans": [], "n_hours": 48}
