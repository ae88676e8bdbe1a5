"""A capacity sweep split into parts that two real worker processes sweep at once: it ends
with the same frontier and recommendation as one task computes, each part swept once."""

import re
import time
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User

from planner.capacity import services
from planner.capacity.models import CapacityPart, CapacityRun
from planner.purchase_mix import services as mix_services
from planner.purchase_mix.models import AnalysisRun
from tests.conftest import app_on_redis, load_catalog, start_worker, stop_worker, wait_ready
from tests.planner.capacity.conftest import PHILLY_OPTIONS
from tests.planner.conftest import PHILLY, file_upload

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]
SWEEP = {"pool_gpus": [0, 56, 120, 184, 240, 304], "max_wait_hours": [1, 4],
         "disciplines": ["fifo", "backfill"]}
# 4,968 GPU jobs x 60 points (6 sizes x 2 queues x 5 policy curves), 20,000 job-points a
# part: 15 parts.
SMALL_PARTS = {"CAPACITY_PART_JOB_POINTS": "20000"}
PART_DONE = re.compile(r"Task planner\.run_capacity_part\[[^\]]+\] succeeded")


def _wait(model: Any, pk: int, timeout_s: float) -> Any:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        row = model.objects.get(pk=pk)
        if row.is_finished:
            return row
        time.sleep(0.1)
    raise AssertionError(f"{model.__name__} {pk} did not finish: {row.progress_message}")


def test_two_workers_finish_a_split_sweep_with_the_one_task_result(
    redis_url: str, tmp_path: Path, settings: Any
) -> None:
    settings.MEDIA_ROOT = tmp_path / "media"
    load_catalog()
    owner = User.objects.create_user("ana", password="pw-ana-123")
    logs = [tmp_path / "worker1.log", tmp_path / "worker2.log"]
    env = {**SMALL_PARTS, "VAR_DIR": str(tmp_path)}
    with app_on_redis(redis_url) as app:
        workers = [start_worker(redis_url, log, loglevel="INFO", node_name=f"worker{i + 1}",
                                **env) for i, log in enumerate(logs)]
        try:
            for worker, log in zip(workers, logs, strict=True):
                wait_ready(app, worker, log)
            upload = file_upload(PHILLY)
            outcome = mix_services.history_create(
                owner_id=owner.pk, upload=upload, name=PHILLY.name,
                size_bytes=upload.size or 0, options=PHILLY_OPTIONS)
            assert outcome.history is not None and outcome.run is not None
            analysis = _wait(AnalysisRun, outcome.run.pk, timeout_s=180)
            assert analysis.status == "done", analysis.error
            run_id = services.capacity_create(history=outcome.history, raw=SWEEP).pk
            done = _wait(CapacityRun, run_id, timeout_s=240)
        finally:
            for worker in workers:
                stop_worker(worker)
    text = [log.read_text(errors="replace") for log in logs]
    assert done.status == "done", (done.error, text[0][-1500:], text[1][-1500:])
    swept = [len(PART_DONE.findall(t)) for t in text]
    assert sum(swept) == 15, swept  # each part swept once, none twice
    assert all(swept), f"both workers should sweep parts: {swept}"
    assert done.attempts == 1 and not CapacityPart.objects.exists()
    settings.CAPACITY_PART_JOB_POINTS = 10**12  # the same sweep in one task, here
    whole = services._compute(CapacityRun.objects.get(pk=run_id))
    assert whole is not None
    assert done.result["points"] == whole["points"]
    assert done.result["recommended"] == whole["recommended"]
