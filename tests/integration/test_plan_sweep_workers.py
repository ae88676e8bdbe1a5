"""A large plan's sweep split into parts that two real worker processes sweep at once: it
finishes with the same plan as one task computes, each part swept once."""

import json
import re
import time
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.utils import timezone

from planner.plans import services
from planner.plans.models import PlanScenario, PlanSweepChunk
from planner.plans.scenario import scenario_from_input
from tests.conftest import app_on_redis, load_catalog, start_worker, stop_worker, wait_ready

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]
LARGE = {"workload": "llama2-70b", "tokens": 2e12,
         "purchase_options": ["on_demand", "spot", "reserved_1y", "committed_1y"]}
# Parts of 150,000 cells: the whole shipped catalog becomes about 16 parts (plan_sweep_parts;
# the grid has interleaved pipeline schedules).
SMALL_PARTS = {"PLAN_SWEEP_PART_CELLS": "150000"}
PART_DONE = re.compile(r"Task planner\.run_plan_chunk\[[^\]]+\] succeeded")


def _wait_done(scenario_id: int, timeout_s: float) -> PlanScenario:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        scenario = PlanScenario.objects.get(pk=scenario_id)
        if scenario.is_finished:
            return scenario
        time.sleep(0.05)
    raise AssertionError(f"plan {scenario_id} did not finish: {scenario.progress_message}")


def test_two_workers_finish_a_split_plan_with_the_one_task_result(
    redis_url: str, tmp_path: Path, settings: Any
) -> None:
    load_catalog()
    owner = User.objects.create_user("ana", password="pw-ana-123")
    scenario = scenario_from_input(LARGE, today=timezone.now().date())
    settings.PLAN_SWEEP_PART_CELLS = int(SMALL_PARTS["PLAN_SWEEP_PART_CELLS"])
    n_parts = len(services.plan_sweep_parts(
        scenario, services.plan_simulator(scenario=scenario, owner_id=owner.id)))
    assert n_parts >= 10  # the workers below split the plan as finely
    logs = [tmp_path / "worker1.log", tmp_path / "worker2.log"]
    with app_on_redis(redis_url) as app:
        workers = [start_worker(redis_url, log, loglevel="INFO", node_name=f"worker{i + 1}",
                                **SMALL_PARTS) for i, log in enumerate(logs)]
        try:
            for worker, log in zip(workers, logs, strict=True):
                wait_ready(app, worker, log)
            scenario_id = services.scenario_create(owner_id=owner.id, raw=LARGE).id
            done = _wait_done(scenario_id, timeout_s=120)
        finally:
            for worker in workers:
                stop_worker(worker)
    text = [log.read_text(errors="replace") for log in logs]
    assert done.status == "done", (done.error, text[0][-1500:], text[1][-1500:])
    whole = services.plan_compute(
        scenario=scenario_from_input(LARGE, today=timezone.now().date()), owner_id=owner.id)
    assert done.result == json.loads(json.dumps(whole))
    swept = [len(PART_DONE.findall(t)) for t in text]
    assert sum(swept) == n_parts, swept  # each part swept once, none twice
    assert all(swept), f"both workers should sweep parts: {swept}"
    assert done.attempts == 1 and not PlanSweepChunk.objects.exists()
