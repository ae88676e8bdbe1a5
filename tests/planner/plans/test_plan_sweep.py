"""A large plan's sweep split into parts (one task each): the same plan as one task, no
duplicate parts on a second delivery, and a failed part fails the plan with its message."""

import json
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.utils import timezone

from planner.plans import services
from planner.plans.models import PlanScenario, PlanSweepChunk
from planner.plans.scenario import scenario_from_input
from planner.runs import Attempt

pytestmark = pytest.mark.django_db
LLAMA = {"workload": "llama2-7b", "tokens": 1e12, "providers": ["aws", "gcp"],
         "purchase_options": ["on_demand", "spot"]}


def _as_stored(document: dict[str, Any]) -> Any:
    return json.loads(json.dumps(document))


def test_a_small_sweep_stays_one_task_and_a_large_one_is_split(user: User, settings: Any) -> None:
    scenario = scenario_from_input(LLAMA, today=timezone.now().date())
    simulator = services.plan_simulator(scenario=scenario, owner_id=None)
    assert len(services.plan_sweep_parts(scenario, simulator)) == 1
    settings.PLAN_SWEEP_PART_CELLS = 100_000
    parts = services.plan_sweep_parts(scenario, simulator)
    assert 4 <= len(parts) <= services.MAX_SWEEP_PARTS
    instances = services.plan_instances(scenario)
    assert sorted(k for p in parts for k in p) == sorted(instances["instance_key"])


def test_a_split_plan_equals_the_one_task_plan(
    user: User, settings: Any, eager_celery: None, django_capture_on_commit_callbacks: Any
) -> None:
    whole = services.plan_compute(
        scenario=scenario_from_input(LLAMA, today=timezone.now().date()), owner_id=user.id)
    settings.PLAN_SWEEP_PART_CELLS = 100_000
    with django_capture_on_commit_callbacks(execute=True):
        stored = services.scenario_create(owner_id=user.id, raw=LLAMA)
    stored.refresh_from_db()
    assert stored.status == "done", stored.error
    assert stored.result == _as_stored(whole)
    assert not PlanSweepChunk.objects.exists()  # parts are dropped once merged
    services.scenario_execute(scenario_id=stored.id, attempt=Attempt("late-redelivery"))
    assert PlanScenario.objects.get(pk=stored.id).attempts == 1


def test_a_second_delivery_adds_no_part_and_the_last_part_stores_the_plan(
    user: User, settings: Any
) -> None:
    settings.PLAN_SWEEP_PART_CELLS = 300_000
    stored = services.scenario_create(owner_id=user.id, raw=LLAMA)  # not sent (no commit)
    services.scenario_execute(scenario_id=stored.id, attempt=Attempt("first"))
    n_parts = PlanSweepChunk.objects.filter(scenario=stored).count()
    assert n_parts >= 2
    services.scenario_execute(scenario_id=stored.id, attempt=Attempt("first"))  # a retry
    assert PlanSweepChunk.objects.filter(scenario=stored).count() == n_parts
    chunks = list(PlanSweepChunk.objects.filter(scenario=stored).order_by("index"))
    for done, chunk in enumerate(chunks[:-1], start=1):
        services.sweep_chunk_execute(chunk_id=chunk.id, attempt=Attempt(f"part-{chunk.index}"))
        services.sweep_chunk_execute(chunk_id=chunk.id, attempt=Attempt("duplicate"))
        stored.refresh_from_db()
        assert stored.status == "running"
        assert stored.progress_message == f"swept {done} of {n_parts} parts"
    services.sweep_chunk_execute(chunk_id=chunks[-1].id, attempt=Attempt("last"))
    stored.refresh_from_db()
    assert stored.status == "done" and stored.result["recommendations"]


def test_a_failed_part_fails_the_plan_with_its_message(user: User, settings: Any) -> None:
    settings.PLAN_SWEEP_PART_CELLS = 150_000
    stored = services.scenario_create(owner_id=user.id, raw=LLAMA)
    services.scenario_execute(scenario_id=stored.id, attempt=Attempt("first"))
    chunks = list(PlanSweepChunk.objects.filter(scenario=stored).order_by("index"))
    assert len(chunks) >= 3
    services.sweep_chunk_execute(chunk_id=chunks[0].id, attempt=Attempt("a"))
    # The stored scenario no longer names a known workload (say, a preset was removed).
    PlanScenario.objects.filter(pk=stored.id).update(
        inputs={**stored.inputs, "workload": "gpt-9"})
    services.sweep_chunk_execute(chunk_id=chunks[1].id, attempt=Attempt("b"))
    stored.refresh_from_db()
    assert stored.status == "failed"
    assert stored.error.startswith(f"sweep part 2 of {len(chunks)}: workload")
    assert not PlanSweepChunk.objects.filter(scenario=stored).exists()
    services.sweep_chunk_execute(chunk_id=chunks[-1].id, attempt=Attempt("c"))  # gone: no-op
    assert PlanScenario.objects.get(pk=stored.id).status == "failed"
