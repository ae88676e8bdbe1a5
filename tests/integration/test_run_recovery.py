"""Runs survive what happens to workers and databases (planner.runs), with real processes:
a worker killed mid-plan, and a database error (a lock, a dropped connection) under a
running plan."""

import os
import signal
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import connection

from planner.plans import services
from planner.plans.models import PlanScenario
from tests.conftest import app_on_redis, load_catalog, start_worker, stop_worker, wait_ready

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]
# A heavy plan (every provider, 70B model), so that it is still running when the test acts.
HEAVY = {"workload": "llama2-70b", "tokens": 2e12,
         "purchase_options": ["on_demand", "spot", "reserved_1y", "committed_1y"]}
# Short limits so that a lost delivery comes back within seconds: time limit 8 s, redelivery
# 1 s after it, unacknowledged messages swept every second.
FAST_RECOVERY = {"CELERY_TASK_TIME_LIMIT": "8", "CELERY_TASK_SOFT_TIME_LIMIT": "7",
                 "CELERY_REDELIVERY_MARGIN": "1", "CELERY_UNACKED_RESTORE_SECONDS": "1"}
# On SQLite the worker's write under the test's lock fails after 3 s instead of 30.
SHORT_BUSY_WAIT = {"SQLITE_BUSY_TIMEOUT_SECONDS": "3"}
# A short lease, renewed every second and swept every second (production: 45 s, 10 s, 15 s:
# the renewals keep the same share of the lease, so a busy worker still holds its run),
# with the broker's own redelivery left at the production time limit (11 minutes): only the
# lease can bring the run back within the test.
SHORT_LEASE = {"RUN_LEASE_SECONDS": "8", "RUN_HEARTBEAT_SECONDS": "1",
               "RUNS_SWEEP_SECONDS": "1"}
# Production: the broker redelivers after the time limit; the sweep takes a dead worker's run
# again within a lease and a sweep interval of its last renewal.
PRODUCTION_REQUEUE_PROMISE_S = 120


def _wait_for(scenario_id: int, statuses: set[str], timeout_s: float) -> PlanScenario:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        scenario = PlanScenario.objects.get(pk=scenario_id)
        if scenario.status in statuses:
            return scenario
        time.sleep(0.01)
    raise AssertionError(f"plan {scenario_id} never reached {statuses}: {scenario.status}")


def _wait_for_log(log: Path, text: str, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if text in log.read_text(errors="replace"):
            return
        time.sleep(0.1)
    raise AssertionError(f"{text!r} never appeared in the worker log")


def _submit(app: Any) -> int:
    owner = User.objects.create_user("ana", password="pw-ana-123")
    return services.scenario_create(owner_id=owner.id, raw=HEAVY).id


def test_a_worker_killed_mid_plan_leaves_it_to_finish_once(redis_url: str, tmp_path: Path) -> None:
    load_catalog()
    log = tmp_path / "worker.log"
    with app_on_redis(redis_url) as app:
        first = start_worker(redis_url, log, **FAST_RECOVERY)
        try:
            wait_ready(app, first, log)
            scenario_id = _submit(app)
            _wait_for(scenario_id, {"running"}, timeout_s=30)
            os.killpg(first.pid, signal.SIGKILL)  # the worker dies holding the plan
            first.wait(timeout=10)
        finally:
            stop_worker(first)
        stuck = PlanScenario.objects.get(pk=scenario_id)
        assert stuck.status == "running" and stuck.attempts == 1
        second = start_worker(redis_url, log, **FAST_RECOVERY)
        try:
            done = _wait_for(scenario_id, {"done", "failed"}, timeout_s=90)
        finally:
            stop_worker(second)
    assert done.status == "done", (done.error, log.read_text()[-2000:])
    assert done.attempts == 2 and done.result["recommendations"]
    time.sleep(1.5)  # no third delivery runs it again
    assert PlanScenario.objects.get(pk=scenario_id).attempts == 2


def _break_the_database_under(scenario_id: int, log: Path) -> tuple[str, str]:
    """A real transient database error under the running plan: on SQLite another process
    takes the whole database until the worker's next write has waited out the busy timeout
    ("database is locked"); on PostgreSQL the server ends the worker's connection. Returns the
    row's status seen meanwhile and the error text the worker's log must show."""
    if connection.vendor == "sqlite":
        lock = sqlite3.connect(connection.settings_dict["NAME"], timeout=30)
        lock.execute("BEGIN EXCLUSIVE")
        _wait_for_log(log, "database is locked", timeout_s=120)
        held = lock.execute(
            "SELECT status FROM planner_planscenario WHERE id = ?", (scenario_id,)
        ).fetchone()[0]
        lock.rollback()
        lock.close()
        return held, "database is locked"
    # The worker meets the error only if it queries on a killed connection; a connection
    # killed between two tasks is silently replaced at the next task's start. So end the
    # worker's connections again until its log shows the error (or the plan is over).
    error = "terminating connection due to administrator command"
    held = ""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                           "WHERE datname = current_database() AND pid <> pg_backend_pid()")
        status = PlanScenario.objects.get(pk=scenario_id).status
        held = held or status
        if error in log.read_text(errors="replace") or status in ("done", "failed"):
            break
        time.sleep(0.05)
    return held, error


def test_a_database_error_under_a_running_plan_is_retried_to_success(
    redis_url: str, tmp_path: Path
) -> None:
    load_catalog()
    log = tmp_path / "worker.log"
    with app_on_redis(redis_url) as app:
        worker = start_worker(redis_url, log, loglevel="INFO", **FAST_RECOVERY, **SHORT_BUSY_WAIT)
        try:
            wait_ready(app, worker, log)
            scenario_id = _submit(app)
            _wait_for(scenario_id, {"running"}, timeout_s=30)
            held, error = _break_the_database_under(scenario_id, log)
            done = _wait_for(scenario_id, {"done", "failed"}, timeout_s=90)
        finally:
            stop_worker(worker)
    assert held == "running"
    assert done.status == "done", (done.error, log.read_text()[-2000:])
    assert done.attempts >= 2, "the run should have been retried after the database error"
    assert error in log.read_text()


def test_the_production_lease_and_sweep_requeue_a_dead_workers_run_within_two_minutes(
    settings: Any
) -> None:
    """What the next test measures with a short lease, at the production defaults: a dead
    worker's run is taken again at most a lease plus a sweep interval after its last renewal
    (the broker's redelivery comes only after the time limit); a live worker renews its lease
    several times before it expires."""
    assert settings.CELERY_TASK_TIME_LIMIT > PRODUCTION_REQUEUE_PROMISE_S
    assert settings.RUN_LEASE_SECONDS + settings.RUNS_SWEEP_SECONDS < PRODUCTION_REQUEUE_PROMISE_S
    assert settings.RUN_HEARTBEAT_SECONDS * 4 <= settings.RUN_LEASE_SECONDS


def test_a_killed_workers_run_is_requeued_by_its_expired_lease(
    redis_url: str, tmp_path: Path
) -> None:
    """kill -9 the worker mid-plan; a second worker running beat takes the plan up again once
    its lease (SHORT_LEASE: RUN_LEASE_SECONDS, renewed every RUN_HEARTBEAT_SECONDS) has expired
    and the sweep (RUNS_SWEEP_SECONDS) has seen it, long before the broker's redelivery after
    the 11-minute time limit, and finishes it once."""
    lease_s, sweep_s = float(SHORT_LEASE["RUN_LEASE_SECONDS"]), float(
        SHORT_LEASE["RUNS_SWEEP_SECONDS"])
    load_catalog()
    log = tmp_path / "worker.log"
    with app_on_redis(redis_url) as app:
        first = start_worker(redis_url, log, node_name="doomed", **SHORT_LEASE)
        try:
            wait_ready(app, first, log)
            scenario_id = _submit(app)
            _wait_for(scenario_id, {"running"}, timeout_s=30)
            os.killpg(first.pid, signal.SIGKILL)
            killed_at = time.monotonic()
            first.wait(timeout=10)
        finally:
            stop_worker(first)
        second = start_worker(redis_url, log, node_name="survivor", beat=True, **SHORT_LEASE)
        try:
            deadline = killed_at + PRODUCTION_REQUEUE_PROMISE_S
            while time.monotonic() < deadline:
                taken = PlanScenario.objects.get(pk=scenario_id)
                if taken.attempts >= 2:
                    break
                time.sleep(0.2)
            requeued_after = time.monotonic() - killed_at
            done = _wait_for(scenario_id, {"done", "failed"}, timeout_s=120)
            time.sleep(2)  # no third delivery runs it again
            final = PlanScenario.objects.get(pk=scenario_id)
        finally:
            stop_worker(second)
    print(f"re-queued {requeued_after:.1f} s after kill -9")  # noqa: T201 - the measured figure
    # Not before the lease expired; within a lease, two sweeps and the survivor's start (up to
    # 30 s on a loaded machine): the lease brought it back, not the broker.
    assert lease_s - 1.0 <= requeued_after < lease_s + 2 * sweep_s + 30, log.read_text()[-2000:]
    assert done.status == "done", (done.error, log.read_text()[-2000:])
    assert final.attempts == 2 and final.result["recommendations"]
