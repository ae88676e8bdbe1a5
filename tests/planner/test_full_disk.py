"""A full disk under VAR_DIR: uploads and reports answer 507 (JSON on the API) with nothing
half-written left behind, a report that fails to save leaves no 0-byte file, and /healthz is
not "ok". Two ways: DISK_MIN_FREE_BYTES above what is free (the application's own floor), and
a real ENOSPC from a tiny tmpfs mounted as MEDIA_ROOT (root only; skipped otherwise)."""

import contextlib
import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from planner.disk import disk_free_bytes
from planner.models import PlanScenario
from planner.plans import reports as plan_reports
from planner.plans import services as plan_services
from planner.purchase_mix.models import History
from planner.reports import services as report_services
from planner.reports.models import Report
from tests.planner.conftest import GENERIC_CSV, csv_upload

pytestmark = pytest.mark.django_db
PLAN = {"workload": "llama2-7b", "tokens": 1e11, "providers": ["aws"],
        "purchase_options": ["on_demand"]}
UPLOAD = {"fmt": "generic", "duplicate_ids": "refuse"}


def _files(root: Path) -> list[Path]:
    return [path for path in Path(root).rglob("*") if path.is_file()]


def _done_plan(user: User, captured: Any) -> PlanScenario:
    with captured(execute=True):
        plan = plan_services.scenario_create(owner_id=user.pk, raw=PLAN)
    plan.refresh_from_db()
    return plan


@contextlib.contextmanager
def _tmpfs(path: Path, size: str) -> Iterator[Path]:
    path.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)],
                             capture_output=True, check=False)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.decode().strip()}")
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], check=False)


def test_below_the_free_space_floor_uploads_and_reports_are_507_and_healthz_degraded(
        user: User, user_client: Client, settings: Any, loaded_catalog: None,
        eager_celery: None, django_capture_on_commit_callbacks: Any) -> None:
    plan = _done_plan(user, django_capture_on_commit_callbacks)
    settings.DISK_MIN_FREE_BYTES = disk_free_bytes(settings.VAR_DIR) + 1024**3
    page = user_client.post("/history/upload", {"file": csv_upload(GENERIC_CSV), **UPLOAD})
    assert page.status_code == 507 and "storage is full" in page.content.decode()
    api = user_client.post("/api/histories", {"file": csv_upload(GENERIC_CSV), "format": "generic"})
    assert api.status_code == 507 and "nothing was saved" in api.json()["detail"]
    report = user_client.post(f"/plans/{plan.pk}/reports", {"format": "csv"})
    assert report.status_code == 507
    plans = user_client.post("/api/plans", json.dumps(PLAN), content_type="application/json")
    assert plans.status_code == 507 and "storage is full" in plans.json()["detail"]
    assert PlanScenario.objects.count() == 1  # the one made before the disk filled
    assert not History.objects.exists() and not Report.objects.exists()
    assert _files(settings.MEDIA_ROOT) == []
    health = Client().get("/healthz")
    body = health.json()
    assert health.status_code == 503 and body["status"] == "degraded"
    assert body["disk"]["status"] == "low" and body["disk"]["free_bytes"] > 0
    assert body["database"] == "ok"


def test_healthz_reports_free_disk_space_and_is_ok_with_room(settings: Any) -> None:
    settings.DISK_MIN_FREE_BYTES = 1
    body = Client().get("/healthz").json()
    assert body["disk"] == {"status": "ok", "free_bytes": body["disk"]["free_bytes"],
                            "min_free_bytes": 1}
    assert body["disk"]["free_bytes"] > 1024**2


def test_a_real_enospc_on_upload_is_507_and_leaves_no_partial_file(
        user_client: Client, settings: Any, tmp_path: Path) -> None:
    big = GENERIC_CSV + "".join(
        f"j{i},2024-01-0{1 + i % 9}T00:00:00Z,2024-01-0{1 + i % 9}T05:00:00Z,H100,8,false,ml\n"
        for i in range(8000))  # about 600 kB: more than the 256 kB disk
    with _tmpfs(tmp_path / "small-disk", "256k") as media:
        settings.MEDIA_ROOT = media
        settings.DISK_MIN_FREE_BYTES = 0  # only the real ENOSPC stops the write
        page = user_client.post("/history/upload", {"file": csv_upload(big), **UPLOAD})
        api = user_client.post("/api/histories", {"file": csv_upload(big), "format": "generic"})
        left = _files(media)
    assert page.status_code == 507 and "storage is full" in page.content.decode()
    assert api.status_code == 507 and api["Content-Type"] == "application/json"
    assert left == []  # no partial upload, no .partial- temporary file
    assert not History.objects.exists()


def test_a_report_that_cannot_be_saved_fails_with_a_message_and_no_file(
        user: User, settings: Any, tmp_path: Path, loaded_catalog: None, eager_celery: None,
        django_capture_on_commit_callbacks: Any) -> None:
    plan = _done_plan(user, django_capture_on_commit_callbacks)
    document = plan_reports.plan_report(scenario=plan)
    with _tmpfs(tmp_path / "small-disk", "64k") as media:
        settings.MEDIA_ROOT = media
        settings.DISK_MIN_FREE_BYTES = 0
        (media / "filler").write_bytes(b"x" * (64 * 1024 - 10))  # the disk is now full
        with django_capture_on_commit_callbacks(execute=True):
            report = report_services.report_create(owner_id=user.pk, document=document,
                                                   fmt="csv")
        report.refresh_from_db()
        left = [path.name for path in _files(media)]
    assert report.status == "failed" and "storage is full" in report.error
    assert not report.file
    assert left == ["filler"]  # no 0-byte report, no temporary file


def test_a_database_saying_its_disk_is_full_counts_as_a_full_disk_not_a_lock() -> None:
    """What DiskFullMiddleware answers with 507 (SQLite's and PostgreSQL's words)."""
    from django.db import OperationalError

    from planner.disk import is_disk_full

    assert is_disk_full(OperationalError("database or disk is full"))
    assert is_disk_full(OperationalError(
        'could not extend file "base/16384/2619": No space left on device'))
    assert not is_disk_full(OperationalError("database is locked"))
