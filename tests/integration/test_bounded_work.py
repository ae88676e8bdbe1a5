"""One input cannot take the workers down (planner.runs), with real worker processes: a task
that runs out of memory under the worker's memory limit fails its run and the worker answers
the next task; a run whose worker dies three times fails with a message instead of looping."""

import os
import resource
import signal
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile

from planner.plans.models import PlanScenario
from planner.purchase_mix import services as mix_services
from planner.purchase_mix.models import AnalysisRun
from planner.runs import LOST_WORKERS_MESSAGE, MEMORY_MESSAGE
from planner.tasks import ping_task
from tests.conftest import app_on_redis, load_catalog, start_worker, stop_worker, wait_ready
from tests.integration.test_run_recovery import FAST_RECOVERY, _submit, _wait_for

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]
# The plan never runs to its end here (each worker dies holding it): the broker redelivers it
# 4 s after each delivery instead of FAST_RECOVERY's 9 s.
QUICK_REDELIVERY = {**FAST_RECOVERY, "CELERY_TASK_TIME_LIMIT": "3",
                    "CELERY_TASK_SOFT_TIME_LIMIT": "2"}
MIB = 1024**2
# Room the worker gets above its size once ready: enough for an ordinary analysis, not for
# sizing commitments over 10 million levels (about 1.9 GB, each array under the 1 GiB check).
HEADROOM_BYTES = 600 * MIB


def _history_csv(n_big_jobs: int) -> SimpleUploadedFile:
    """120 jobs of 8 H100 every 12 h (60 days: past the 30 days a commitment needs, so the
    analysis sizes commitments), and `n_big_jobs` jobs of 100,000 GPUs at one hour."""
    rows = ["job_id,start,end,gpu_type,gpu_count"]
    first = datetime(2025, 1, 1, tzinfo=UTC)
    for i in range(120):
        start = first + timedelta(hours=12 * i)
        rows.append(f"j{i},{start:%Y-%m-%dT%H:%M:%SZ},"
                    f"{start + timedelta(hours=5):%Y-%m-%dT%H:%M:%SZ},H100,8")
    rows += [f"big{i},2025-01-05T04:00:00Z,2025-01-05T06:00:00Z,H100,100000"
             for i in range(n_big_jobs)]
    return SimpleUploadedFile("jobs.csv", ("\n".join(rows) + "\n").encode(), "text/csv")


def _analyse(owner: User, n_big_jobs: int) -> int:
    upload = _history_csv(n_big_jobs)
    outcome = mix_services.history_create(
        owner_id=owner.pk, upload=upload, name="jobs.csv", size_bytes=upload.size or 0,
        options=mix_services.ParseOptions(fmt="generic"))
    assert outcome.history is not None and outcome.run is not None, outcome
    return outcome.run.pk


def _wait_analysis(run_id: int, timeout_s: float) -> AnalysisRun:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        run = AnalysisRun.objects.get(pk=run_id)
        if run.is_finished:
            return run
        time.sleep(0.2)
    raise AssertionError(f"analysis {run_id} did not finish: {run.progress_message}")


def _limit_memory(pid: int) -> int:
    """Cap the worker's address space at its size now plus HEADROOM_BYTES; returns the cap."""
    size_kib = next(int(line.split()[1]) for line in Path(f"/proc/{pid}/status").read_text()
                    .splitlines() if line.startswith("VmSize:"))
    cap = size_kib * 1024 + HEADROOM_BYTES
    resource.prlimit(pid, resource.RLIMIT_AS, (cap, cap))
    return cap


def test_a_task_out_of_memory_fails_its_run_and_the_worker_answers_the_next(
    redis_url: str, tmp_path: Path, settings: Any
) -> None:
    settings.MEDIA_ROOT = tmp_path / "media"
    load_catalog()
    owner = User.objects.create_user("ana", password="pw-ana-123")
    log = tmp_path / "worker.log"
    env = {"VAR_DIR": str(tmp_path), "MEDIA_ROOT": str(tmp_path / "media"),
           "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    with app_on_redis(redis_url) as app:
        worker = start_worker(redis_url, log, loglevel="INFO", **env)
        try:
            wait_ready(app, worker, log)
            _limit_memory(worker.pid)
            heavy = _wait_analysis(_analyse(owner, n_big_jobs=800), timeout_s=180)
            alive = worker.poll() is None
            answer = ping_task.apply_async(args=[7], ignore_result=False).get(timeout=30)
            light = _wait_analysis(_analyse(owner, n_big_jobs=0), timeout_s=180)
        finally:
            stop_worker(worker)
    text = log.read_text(errors="replace")
    assert heavy.status == "failed" and heavy.error == MEMORY_MESSAGE, (heavy.error, text[-3000:])
    assert alive and "Unrecoverable error" not in text
    assert answer == 7
    assert light.status == "done", (light.error, text[-3000:])


def test_a_run_whose_worker_dies_three_times_fails_with_a_message(
    redis_url: str, tmp_path: Path
) -> None:
    load_catalog()
    log = tmp_path / "worker.log"
    with app_on_redis(redis_url) as app:
        scenario_id = None
        for death in range(1, 4):
            worker = start_worker(redis_url, log, node_name=f"doomed{death}", **QUICK_REDELIVERY)
            try:
                if scenario_id is None:
                    wait_ready(app, worker, log)
                    scenario_id = _submit(app)
                # else the broker redelivers the plan's message as soon as the worker starts
                deadline = time.monotonic() + 60  # its claim number `death` is running
                while PlanScenario.objects.get(pk=scenario_id).attempts < death:
                    assert time.monotonic() < deadline, log.read_text()[-2000:]
                    time.sleep(0.05)
                row = PlanScenario.objects.get(pk=scenario_id)
                assert row.status == "running", (death, row.status, row.attempts,
                                                 row.finished_at - row.started_at)
                os.killpg(worker.pid, signal.SIGKILL)  # the worker dies holding the plan
                worker.wait(timeout=10)
            finally:
                stop_worker(worker)
        last = start_worker(redis_url, log, node_name="survivor", **QUICK_REDELIVERY)
        try:
            wait_ready(app, last, log)
            failed = _wait_for(scenario_id, {"done", "failed"}, timeout_s=90)
            time.sleep(2)  # and nothing takes it again
            final = PlanScenario.objects.get(pk=scenario_id)
        finally:
            stop_worker(last)
    assert failed.status == "failed", log.read_text()[-2000:]
    assert failed.error == LOST_WORKERS_MESSAGE
    assert (final.status, final.attempts, final.lost_workers) == ("failed", 3, 3)
