"""A broker outage delays work and never strands it: with Redis down a plan submission gets a
readable 503 and its row stays queued; when Redis is back a worker sweeps it and runs it."""

import json
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.contrib.auth.models import User

from planner.plans.models import PlanScenario
from tests.clients import signed_in
from tests.conftest import app_on_redis, load_catalog, start_worker, stop_worker

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]
PLAN = {"workload": "llama2-7b", "tokens": 1e11, "providers": ["aws"],
        "purchase_options": ["on_demand"]}


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
