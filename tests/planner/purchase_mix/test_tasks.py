import io

import pytest

from planner.models import AnalysisRun
from planner.purchase_mix import services, tasks
from planner.runs import Attempt, run_claim
from tests.planner.conftest import GENERIC_CSV


@pytest.fixture
def queued_run(user, loaded_catalog) -> AnalysisRun:
    data = GENERIC_CSV.encode()
    outcome = services.history_create(
        owner_id=user.pk, upload=io.BytesIO(data), name="jobs.csv", size_bytes=len(data),
        options=services.ParseOptions(fmt="generic"),
        run_options=services.RunOptions(provider="aws", region="us-east-1"),
    )
    assert outcome.run is not None
    return outcome.run


def test_task_runs_once_and_a_second_delivery_changes_nothing(queued_run):
    tasks.analyze_run_task(queued_run.pk)
    queued_run.refresh_from_db()
    assert queued_run.status == "done" and queued_run.progress_pct == 100
    first = (queued_run.result, queued_run.finished_at)
    tasks.analyze_run_task(queued_run.pk)
    queued_run.refresh_from_db()
    assert (queued_run.result, queued_run.finished_at) == first
    assert AnalysisRun.objects.count() == 1
    plans = queued_run.result["what_to_buy"]["replay"]["plans"]
    assert {plan["offer"]["gpu_type"] for plan in plans} == {"A100-80GB", "H100"}


def test_claim_is_conditional(queued_run):
    assert run_claim(AnalysisRun, queued_run.pk, Attempt("a"), "started") is not None
    assert run_claim(AnalysisRun, queued_run.pk, Attempt("b"), "started") is None


def test_bad_input_marks_the_run_failed_without_retry(queued_run, monkeypatch):
    def broken(*args, **kwargs):
        raise ValueError("no demand hours")

    monkeypatch.setattr(services, "recommendation_document", broken)
    tasks.analyze_run_task(queued_run.pk)
    queued_run.refresh_from_db()
    assert queued_run.status == "failed" and queued_run.error == "no demand hours"
