"""Stored analysis documents: the hindsight replay's key `recommendation` becomes
`hindsight_reference` (issue 20: no key named `recommendation` that differs from
`what_to_buy`), with the words that say what it is."""

from typing import Any

from django.db import migrations

WORDS = ("What you would have bought knowing the future: the exact cost-minimising "
         "commitment if the past repeated exactly. A backtest reference, not a recommendation.")


def rename_key(apps: Any, schema_editor: Any) -> None:
    AnalysisRun = apps.get_model("planner", "AnalysisRun")
    for run in AnalysisRun.objects.filter(result__has_key="recommendation").iterator():
        document = dict(run.result)
        reference = document.pop("recommendation")
        if isinstance(reference, dict):
            reference.pop("savings_plans", None)
            document["hindsight_reference"] = {"words": WORDS, **reference}
        run.result = document
        run.save(update_fields=["result"])


def restore_key(apps: Any, schema_editor: Any) -> None:
    AnalysisRun = apps.get_model("planner", "AnalysisRun")
    for run in AnalysisRun.objects.filter(result__has_key="hindsight_reference").iterator():
        document = dict(run.result)
        reference = dict(document.pop("hindsight_reference") or {})
        reference.pop("words", None)
        document["recommendation"] = reference
        run.result = document
        run.save(update_fields=["result"])


class Migration(migrations.Migration):
    dependencies = [("planner", "0012_capacity_sweeps")]
    operations = [migrations.RunPython(rename_key, restore_key)]
