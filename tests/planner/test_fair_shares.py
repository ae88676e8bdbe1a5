"""Fair shares (planner.fair_shares): creating plans, simulations and reports is rate-limited per
user (429 with Retry-After, JSON on the API), a user with USER_MAX_ACTIVE_RUNS runs queued
is told to wait, each kind has a stored-count quota (403; deleting makes room), every kind
can be deleted (page and API), and the storage quota counts derived files and reports."""

import json
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.files.storage import default_storage
from django.test import Client

from planner.fair_shares import active_runs
from planner.models import PlanScenario
from planner.plans import reports as plan_reports
from planner.plans import services as plan_services
from planner.purchase_mix.models import History
from planner.reports import services as report_services
from planner.reports.models import Report
from planner.runs import Attempt
from simulator.models import SimulationRun
from tests.planner.conftest import GENERIC_CSV, csv_upload

pytestmark = pytest.mark.django_db
PLAN = {"workload": "llama2-7b", "tokens": 1e11, "providers": ["aws"],
        "purchase_options": ["on_demand"]}
SWEEP = {"kind": "sweep", "workload": {"preset": "llama2-7b"}, "layout": {}}


def _post_plan(client: Client) -> Any:
    return client.post("/api/plans", json.dumps(PLAN), content_type="application/json")


def test_the_plan_api_answers_429_json_with_retry_after_past_the_rate(
        user_client: Client, other_client: Client, settings: Any, loaded_catalog: None,
        eager_celery: None, django_capture_on_commit_callbacks: Any) -> None:
    settings.PLANS_PER_MINUTE = 3
    for _ in range(3):
        with django_capture_on_commit_callbacks(execute=True):
            assert _post_plan(user_client).status_code == 201
    refused = _post_plan(user_client)
    assert refused.status_code == 429 and refused["Content-Type"] == "application/json"
    assert "at most 3 a minute" in refused.json()["detail"]
    assert 0 < int(refused["Retry-After"]) <= 60
    # The page form is refused the same way, as a page; another user is not limited.
    page = user_client.post("/plans/new", {"workload": "llama2-7b", "tokens": "1e11",
                                           "deadline_days": "30", "providers": "aws"})
    assert page.status_code == 429 and "at most 3 a minute" in page.content.decode()
    with django_capture_on_commit_callbacks(execute=True):
        assert _post_plan(other_client).status_code == 201
    assert PlanScenario.objects.filter(owner__username="ada").count() == 3


def test_a_user_with_runs_queued_waits_for_them_and_others_do_not(
        user: User, user_client: Client, other_client: Client, settings: Any,
        loaded_catalog: None, eager_celery: None,
        django_capture_on_commit_callbacks: Any) -> None:
    settings.USER_MAX_ACTIVE_RUNS = 2
    for status in ("queued", "running"):  # one sweep each, still in the queue or a worker
        SimulationRun.objects.create(owner=user, kind="sweep", request={}, status=status)
    refused = _post_plan(user_client)
    assert refused.status_code == 429 and refused["Retry-After"] == "10"
    assert "2 runs queued or running" in refused.json()["detail"]
    simulation = user_client.post("/api/simulations", json.dumps(SWEEP),
                                  content_type="application/json")
    assert simulation.status_code == 429  # every kind of run counts
    with django_capture_on_commit_callbacks(execute=True):
        assert _post_plan(other_client).status_code == 201
    SimulationRun.objects.filter(owner=user).update(status="done")
    with django_capture_on_commit_callbacks(execute=True):
        assert _post_plan(user_client).status_code == 201


def test_a_full_plan_quota_is_403_until_one_is_deleted(
        user: User, user_client: Client, settings: Any, loaded_catalog: None,
        eager_celery: None, django_capture_on_commit_callbacks: Any) -> None:
    settings.USER_MAX_PLANS = 2
    for _ in range(2):
        with django_capture_on_commit_callbacks(execute=True):
            assert _post_plan(user_client).status_code == 201
    refused = _post_plan(user_client)
    assert refused.status_code == 403
    assert "You keep 2 plans, the most one account may keep (2)" in refused.json()["detail"]
    oldest = PlanScenario.objects.filter(owner=user).earliest("id")
    assert user_client.delete(f"/api/plans/{oldest.pk}").status_code == 204
    with django_capture_on_commit_callbacks(execute=True):
        assert _post_plan(user_client).status_code == 201


def test_simulations_have_a_quota_and_are_deleted_by_page_and_api(
        user: User, user_client: Client, other_client: Client, settings: Any,
        loaded_catalog: None, eager_celery: None,
        django_capture_on_commit_callbacks: Any) -> None:
    settings.USER_MAX_SIMULATIONS = 2
    ids = []
    for _ in range(2):
        with django_capture_on_commit_callbacks(execute=True):
            created = user_client.post("/api/simulations", json.dumps(SWEEP),
                                       content_type="application/json")
        assert created.status_code == 201
        ids.append(created.json()["id"])
    over = user_client.post("/api/simulations", json.dumps(SWEEP),
                            content_type="application/json")
    assert over.status_code == 403 and "2 simulations" in over.json()["detail"]
    page = user_client.get(f"/simulations/{ids[0]}")
    assert f'href="/simulations/{ids[0]}/delete"' in page.content.decode()
    assert other_client.post(f"/simulations/{ids[0]}/delete").status_code == 404
    assert other_client.delete(f"/api/simulations/{ids[0]}").status_code == 404
    confirm = user_client.get(f"/simulations/{ids[0]}/delete")
    assert confirm.status_code == 200 and "cannot be undone" in confirm.content.decode()
    assert user_client.post(f"/simulations/{ids[0]}/delete").status_code == 302
    assert user_client.delete(f"/api/simulations/{ids[1]}").status_code == 204
    assert not SimulationRun.objects.filter(owner=user).exists()
    assert user_client.delete(f"/api/simulations/{ids[1]}").status_code == 404


def _done_plan(user: User, eager: Any) -> PlanScenario:
    with eager(execute=True):
        plan = plan_services.scenario_create(owner_id=user.pk, raw=PLAN)
    plan.refresh_from_db()
    assert plan.status == "done", plan.error
    return plan


def _report(user: User, eager: Any) -> Report:
    plan = _done_plan(user, eager)
    document = plan_reports.plan_report(scenario=plan)
    with eager(execute=True):
        report = report_services.report_create(owner_id=user.pk, document=document, fmt="csv")
    report.refresh_from_db()
    return report


def test_reports_are_deleted_with_their_file_by_page_and_api(
        user: User, user_client: Client, other_client: Client, loaded_catalog: None,
        eager_celery: None, django_capture_on_commit_callbacks: Any) -> None:
    first = _report(user, django_capture_on_commit_callbacks)
    second = _report(user, django_capture_on_commit_callbacks)
    assert first.status == "done" and default_storage.exists(first.file.name)
    assert [r["id"] for r in user_client.get("/api/reports").json()] == [second.pk, first.pk]
    assert other_client.get("/api/reports").json() == []
    assert other_client.delete(f"/api/reports/{first.pk}").status_code == 404
    assert f'href="/reports/{first.pk}/delete"' in user_client.get(
        f"/reports/{first.pk}").content.decode()
    with django_capture_on_commit_callbacks(execute=True):
        assert user_client.post(f"/reports/{first.pk}/delete").status_code == 302
    with django_capture_on_commit_callbacks(execute=True):
        assert user_client.delete(f"/api/reports/{second.pk}").status_code == 204
    assert not Report.objects.exists()
    assert not default_storage.exists(first.file.name)
    assert not default_storage.exists(second.file.name)


def test_a_report_deleted_while_it_renders_leaves_no_file(
        user: User, settings: Any, loaded_catalog: None, eager_celery: None,
        django_capture_on_commit_callbacks: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    plan = _done_plan(user, django_capture_on_commit_callbacks)
    document = plan_reports.plan_report(scenario=plan)
    report = report_services.report_create(owner_id=user.pk, document=document, fmt="csv")
    render = report_services.report_render

    def deleted_meanwhile(*args: Any) -> Any:
        with django_capture_on_commit_callbacks(execute=True):
            report_services.report_delete(owner_id=user.pk, report_id=report.pk)
        return render(*args)

    monkeypatch.setattr(report_services, "report_render", deleted_meanwhile)
    report_services.report_execute(report_id=report.pk, attempt=Attempt())
    assert not Report.objects.exists()
    folder = settings.MEDIA_ROOT / "reports"
    assert not folder.exists() or not [p for p in folder.iterdir() if p.is_file()]


def test_the_report_rate_is_429_on_the_page(
        user: User, user_client: Client, settings: Any, loaded_catalog: None,
        eager_celery: None, django_capture_on_commit_callbacks: Any) -> None:
    settings.REPORTS_PER_MINUTE = 1
    plan = _done_plan(user, django_capture_on_commit_callbacks)
    with django_capture_on_commit_callbacks(execute=True):
        user_client.post(f"/plans/{plan.pk}/reports", {"format": "csv"})
    refused = user_client.post(f"/plans/{plan.pk}/reports", {"format": "csv"})
    assert refused.status_code == 429 and "Too many reports" in refused.content.decode()
    assert Report.objects.count() == 1


def test_the_storage_quota_counts_the_derived_tables_not_only_the_upload(
        user: User, user_client: Client, settings: Any) -> None:
    # The 300-byte CSV fits a 10 kB quota, its parsed and demand tables do not.
    settings.USER_STORAGE_QUOTA_BYTES = 10_000
    refused = user_client.post("/history/upload", {"file": csv_upload(GENERIC_CSV),
                                                   "fmt": "generic", "duplicate_ids": "refuse"})
    assert refused.status_code == 413
    assert "with the tables derived from it" in refused.content.decode()
    assert not History.objects.exists()
    media = settings.MEDIA_ROOT / "histories"
    assert not media.exists() or not any(media.iterdir())  # nothing left on disk


def test_reports_rendered_for_download_are_rate_limited(
        user: User, user_client: Client, settings: Any, loaded_catalog: None,
        eager_celery: None, django_capture_on_commit_callbacks: Any) -> None:
    settings.REPORT_DOWNLOADS_PER_MINUTE = 2
    plan = _done_plan(user, django_capture_on_commit_callbacks)
    assert user_client.get(f"/api/plans/{plan.pk}/report.csv").status_code == 200
    assert user_client.get(f"/plans/{plan.pk}/report.csv").status_code == 200
    api = user_client.get(f"/api/plans/{plan.pk}/report.csv")
    assert api.status_code == 429 and "Too many reports downloaded" in api.json()["detail"]
    assert int(api["Retry-After"]) > 0
    assert user_client.get(f"/plans/{plan.pk}/report.csv").status_code == 429


def test_active_runs_of_every_kind_are_counted_in_one_query(
        user: User, django_assert_num_queries: Any) -> None:
    SimulationRun.objects.create(owner=user, kind="sweep", request={}, status="queued")
    SimulationRun.objects.create(owner=user, kind="sweep", request={}, status="done")
    PlanScenario.objects.create(owner=user, name="p", inputs={}, status="running")
    with django_assert_num_queries(1):
        assert active_runs(user.pk) == 2


def test_uploads_and_recomputes_share_the_analysis_rate(
        user_client: Client, other_client: Client, settings: Any, loaded_catalog: None,
        eager_celery: None, django_capture_on_commit_callbacks: Any) -> None:
    settings.ANALYSES_PER_MINUTE = 2
    with django_capture_on_commit_callbacks(execute=True):
        assert user_client.post("/api/histories",
                                {"file": csv_upload(GENERIC_CSV)}).status_code == 201
        # A file with a bad row is refused for what it is and costs nothing of the share.
        bad = user_client.post("/api/histories", {"file": csv_upload("job_id,start\nx,soon\n")})
        assert bad.status_code == 400
        assert user_client.post("/api/histories",
                                {"file": csv_upload(GENERIC_CSV)}).status_code == 201
    refused = user_client.post("/api/histories", {"file": csv_upload(GENERIC_CSV)})
    assert refused.status_code == 429 and refused["Content-Type"] == "application/json"
    assert "at most 2 a minute" in refused.json()["detail"]
    assert 0 < int(refused["Retry-After"]) <= 60
    assert History.objects.filter(owner__username="ada").count() == 2
    # A recompute queues an analysis too: refused as a page; another user is not limited.
    history = History.objects.filter(owner__username="ada").first()
    assert history is not None
    page = user_client.post(f"/history/{history.pk}/runs", {})
    assert page.status_code == 429 and "at most 2 a minute" in page.content.decode()
    with django_capture_on_commit_callbacks(execute=True):
        assert other_client.post("/api/histories",
                                 {"file": csv_upload(GENERIC_CSV)}).status_code == 201
