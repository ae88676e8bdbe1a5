"""A broker outage delays work and never strands it: with Redis down a submission gets a
readable 503, its row and outbox entry are committed (uploaded files kept); when Redis is back
the outbox is published and every run runs once."""

import json
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.files.storage import default_storage

from planner.models import AnalysisRun, History, OutboxEntry, Report
from planner.plans.models import PlanScenario
from simulator.models import SimulationRun
from tests.clients import signed_in
from tests.conftest import app_on_redis, load_catalog, start_worker, stop_worker, wait_ready
from tests.planner.conftest import GENERIC_CSV, csv_upload

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]
PLAN = {"workload": "llama2-7b", "tokens": 1e11, "providers": ["aws"],
        "purchase_options": ["on_demand"]}
SIMULATION = {"kind": "sweep", "workload": {"preset": "llama2-7b"}, "layout": {}}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _redis(port: int) -> subprocess.Popen[bytes]:
    server = subprocess.Popen(["redis-server", "--port", str(port), "--save", "",
                               "--appendonly", "no", "--bind", "127.0.0.1"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return server
        except OSError:
            time.sleep(0.05)
    server.kill()
    pytest.fail("redis-server did not start")


@pytest.fixture
def private_redis_port(redis_url: str) -> Iterator[int]:
    """A Redis of this test's own (so the shared one is never stopped); the port is free."""
    if shutil.which("redis-server") is None:
        pytest.skip("no redis-server binary")
    yield _free_port()


def test_broker_down_gives_503_and_the_plan_runs_once_the_broker_is_back(
    private_redis_port: int, tmp_path: Path
) -> None:
    load_catalog()
    url = f"redis://127.0.0.1:{private_redis_port}/0"
    client = signed_in(User.objects.create_user("ana", password="pw-ana-123"))
    with app_on_redis(url):
        started = time.monotonic()
        response = client.post("/api/plans", json.dumps(PLAN), content_type="application/json")
        waited = time.monotonic() - started
        assert response.status_code == 503, response.content
        assert "will start by itself" in response.json()["detail"]
        assert waited < 10
        scenario = PlanScenario.objects.get()
        assert scenario.status == "queued"
        server = _redis(private_redis_port)
        worker = start_worker(url, tmp_path / "worker.log", RUNS_REQUEUE_AFTER_SECONDS="0")
        try:
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline:
                scenario.refresh_from_db()
                if scenario.status in ("done", "failed"):
                    break
                time.sleep(0.2)
        finally:
            stop_worker(worker)
            server.terminate()
            server.wait(timeout=10)
    assert scenario.status == "done", (scenario.error, (tmp_path / "worker.log").read_text())
    assert scenario.attempts == 1


def _wait_finished(rows: dict[str, Any], timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        for row in rows.values():
            row.refresh_from_db()
        if all(row.is_finished for row in rows.values()):
            return
        time.sleep(0.25)


def test_every_submission_made_while_redis_is_down_is_kept_and_runs_once_when_it_is_back(
    private_redis_port: int, tmp_path: Path, settings: Any
) -> None:
    """Plans, simulations, analyses (API and form uploads) and reports: each 503 says "saved",
    each row and outbox entry is committed, the uploaded files stay, and once Redis is back
    the worker's beat publishes the outbox and each runs exactly once."""
    load_catalog()
    # Five runs of one user wait in the outbox at once: more than a user's fair share of
    # queued runs (planner.fair_shares), which is not what this test is about.
    settings.USER_MAX_ACTIVE_RUNS = 10
    url = f"redis://127.0.0.1:{private_redis_port}/0"
    log = tmp_path / "worker.log"
    owner = User.objects.create_user("ana", password="pw-ana-123")
    client = signed_in(owner)
    server = _redis(private_redis_port)
    with app_on_redis(url) as app:
        worker = start_worker(url, log, beat=True, RUNS_SWEEP_SECONDS="2")
        try:
            wait_ready(app, worker, log)
            created = client.post("/api/plans", json.dumps(PLAN), content_type="application/json")
            assert created.status_code == 201, created.content
            before = {"plan": PlanScenario.objects.get(pk=created.json()["id"])}
            _wait_finished(before, timeout_s=120)
            assert before["plan"].status == "done", before["plan"].error

            server.terminate()  # Redis goes away; the worker stays up, trying to reconnect
            server.wait(timeout=10)
            responses = {
                "plan": client.post("/api/plans", json.dumps(PLAN),
                                    content_type="application/json"),
                "simulation": client.post("/api/simulations", json.dumps(SIMULATION),
                                          content_type="application/json"),
                "analysis (API upload)": client.post(
                    "/api/histories", {"file": csv_upload(GENERIC_CSV)}),
                "analysis (form upload)": client.post(
                    "/history/upload", {"file": csv_upload(GENERIC_CSV), "fmt": "generic",
                                        "duplicate_ids": "refuse"}),
                "report": client.post(f"/plans/{before['plan'].pk}/reports", {"format": "csv"}),
            }
            for what, response in responses.items():
                assert response.status_code == 503, (what, response.content)
                assert b"will start by itself" in response.content, what
            kept: dict[str, Any] = {
                "plan": PlanScenario.objects.exclude(pk=before["plan"].pk).get(),
                "simulation": SimulationRun.objects.get(),
                "report": Report.objects.get(),
                **{f"analysis {i}": run for i, run in enumerate(AnalysisRun.objects.all())},
            }
            assert len(kept) == 5 and all(row.status == "queued" for row in kept.values())
            assert OutboxEntry.objects.count() == 5
            files = [name for history in History.objects.all()
                     for name in (history.upload.name, history.parsed.name, history.demand.name)]
            assert len(files) == 6 and all(default_storage.exists(name) for name in files)

            server = _redis(private_redis_port)  # Redis is back
            _wait_finished(kept, timeout_s=120)
        finally:
            stop_worker(worker)
            server.terminate()
            server.wait(timeout=10)
    for what, row in kept.items():
        assert row.status == "done", (what, row.error, log.read_text()[-3000:])
        assert row.attempts == 1, what
    assert OutboxEntry.objects.count() == 0
    assert all(default_storage.exists(name) for name in files)
    for history in History.objects.all():
        history.delete()  # its files go with it
