"""The one run protocol (planner.runs): claim once, store, fail readably, survive transient
database errors and killed workers."""

from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.db import OperationalError
from django.utils import timezone

from planner.runs import Attempt, run_claim, run_execute, run_fail, run_status, run_store
from simulator.models import SimulationRun

pytestmark = pytest.mark.django_db

FIRST = Attempt(task_id="task-1", is_last_try=False)


@pytest.fixture
def run() -> SimulationRun:
    owner = User.objects.create_user("ana", password="pw-ana-123")
    return SimulationRun.objects.create(owner=owner, request={})


def test_result_is_stored_once_and_a_second_delivery_does_nothing(run: SimulationRun) -> None:
    calls: list[int] = []

    def compute(row: SimulationRun) -> dict:
        calls.append(row.id)
        return {"answer": 42}

    run_execute(SimulationRun, run.id, compute, attempt=FIRST)
    run_execute(SimulationRun, run.id, compute, attempt=Attempt(task_id="task-2"))
    run.refresh_from_db()
    assert calls == [run.id]
    assert (run.status, run.result, run.progress_pct, run.attempts) == (
        "done", {"answer": 42}, 100, 1)
    assert run.started_at and run.finished_at


def test_bad_input_fails_with_its_message(run: SimulationRun) -> None:
    def compute(row: SimulationRun) -> dict:
        raise ValueError("nodes: must be between 1 and 512")

    run_execute(SimulationRun, run.id, compute, attempt=FIRST)
    run.refresh_from_db()
    assert run.status == "failed" and run.error == "nodes: must be between 1 and 512"


def test_an_unexpected_error_is_stored_and_raised(run: SimulationRun) -> None:
    def compute(row: SimulationRun) -> dict:
        raise KeyError("oops")

    with pytest.raises(KeyError):
        run_execute(SimulationRun, run.id, compute, attempt=FIRST)
    run.refresh_from_db()
    assert run.status == "failed" and run.error == "internal error: KeyError"


def test_a_transient_error_is_retried_by_the_same_task_to_success(run: SimulationRun) -> None:
    outcomes = iter([OperationalError("database is locked"), {"answer": 1}])

    def compute(row: SimulationRun) -> dict:
        outcome = next(outcomes)
        if isinstance(outcome, Exception):
            raise outcome
        return outcome

    with pytest.raises(OperationalError):
        run_execute(SimulationRun, run.id, compute, attempt=FIRST)
    run.refresh_from_db()
    assert run.status == "running" and run.error == ""
    retry = Attempt(task_id="task-1", is_last_try=False)
    run_execute(SimulationRun, run.id, compute, attempt=retry)
    run.refresh_from_db()
    assert (run.status, run.result, run.attempts) == ("done", {"answer": 1}, 2)


def test_the_last_try_of_a_transient_error_fails_the_run(run: SimulationRun) -> None:
    def compute(row: SimulationRun) -> dict:
        raise OperationalError("database is locked")

    with pytest.raises(OperationalError):
        run_execute(SimulationRun, run.id, compute, attempt=Attempt("task-1", is_last_try=True))
    run.refresh_from_db()
    assert run.status == "failed" and "database was unavailable" in run.error


def test_another_delivery_cannot_take_a_fresh_running_row(run: SimulationRun) -> None:
    assert run_claim(SimulationRun, run.id, FIRST, "started") is not None
    assert run_claim(SimulationRun, run.id, Attempt(task_id="task-2"), "started") is None


def test_a_running_row_whose_lease_expired_is_reclaimed_and_the_old_holder_is_fenced(
    run: SimulationRun, settings
) -> None:
    assert run_claim(SimulationRun, run.id, FIRST, "started") is not None
    SimulationRun.objects.filter(pk=run.id).update(
        heartbeat_at=timezone.now() - timedelta(seconds=settings.RUN_LEASE_SECONDS + 1)
    )
    reclaimed = run_claim(SimulationRun, run.id, Attempt(task_id="task-2"), "started")
    assert reclaimed is not None and reclaimed.attempts == 2 and reclaimed.task_id == "task-2"
    # The first delivery, still alive after losing its lease, can neither store nor fail it.
    assert not run_store(SimulationRun, run.id, {"answer": "stale"}, holder="task-1")
    assert not run_fail(SimulationRun, run.id, "stale", holder="task-1")
    assert run_store(SimulationRun, run.id, {"answer": 2}, holder="task-2")
    run.refresh_from_db()
    assert (run.status, run.result, run.attempts) == ("done", {"answer": 2}, 2)


def test_a_renewed_lease_keeps_a_long_run_from_being_taken(run: SimulationRun, settings) -> None:
    """The started time does not matter while the lease is fresh."""
    assert run_claim(SimulationRun, run.id, FIRST, "started") is not None
    SimulationRun.objects.filter(pk=run.id).update(
        started_at=timezone.now() - timedelta(seconds=settings.CELERY_TASK_TIME_LIMIT - 1),
        heartbeat_at=timezone.now(),
    )
    assert run_claim(SimulationRun, run.id, Attempt(task_id="task-2"), "started") is None


def test_a_run_without_a_lease_is_reclaimed_after_the_time_limit(run: SimulationRun,
                                                                  settings) -> None:
    """A plan handed to its sweep parts holds no lease; the time limit still frees it."""
    assert run_claim(SimulationRun, run.id, FIRST, "started") is not None
    SimulationRun.objects.filter(pk=run.id).update(
        heartbeat_at=None,
        started_at=timezone.now() - timedelta(seconds=settings.CELERY_TASK_TIME_LIMIT + 1),
    )
    assert run_claim(SimulationRun, run.id, Attempt(task_id="task-2"), "started") is not None


def test_status_json_has_one_shape(run: SimulationRun) -> None:
    assert set(run_status(run)) == {
        "id", "status", "progress_pct", "message", "error", "is_finished", "attempts"}
    assert run_status(run)["is_finished"] is False


def test_a_memory_error_fails_the_run_readably_and_is_not_raised(run: SimulationRun) -> None:
    # Raised, it reached Celery, which takes MemoryError as unrecoverable and stops the worker.
    def compute(row: SimulationRun) -> dict:
        raise MemoryError

    run_execute(SimulationRun, run.id, compute, attempt=FIRST)
    run.refresh_from_db()
    assert run.status == "failed" and run.error.startswith("ran out of memory: the input needs")


def test_a_recursion_error_fails_the_run_readably(run: SimulationRun) -> None:
    def compute(row: SimulationRun) -> dict:
        raise RecursionError("maximum recursion depth exceeded")

    run_execute(SimulationRun, run.id, compute, attempt=FIRST)
    run.refresh_from_db()
    assert run.status == "failed" and run.error == "the input is nested too deeply to read"


def _expire_lease(run: SimulationRun, settings) -> None:
    SimulationRun.objects.filter(pk=run.id).update(
        heartbeat_at=timezone.now() - timedelta(seconds=settings.RUN_LEASE_SECONDS + 1))


def test_a_run_whose_worker_died_three_times_fails_saying_so(run: SimulationRun,
                                                             settings) -> None:
    assert run_claim(SimulationRun, run.id, FIRST, "started") is not None
    for n in (2, 3):
        _expire_lease(run, settings)
        taken = run_claim(SimulationRun, run.id, Attempt(task_id=f"task-{n}"), "started")
        assert taken is not None and taken.lost_workers == n - 1 and taken.attempts == n
    _expire_lease(run, settings)
    assert run_claim(SimulationRun, run.id, Attempt(task_id="task-4"), "started") is None
    run.refresh_from_db()
    assert (run.status, run.lost_workers, run.attempts) == ("failed", 3, 3)
    assert run.error.startswith("its worker stopped 3 times while running it")


def test_a_broker_redelivery_of_a_held_run_counts_a_lost_worker(run: SimulationRun) -> None:
    """The worker died holding the message: the broker sends the same task id again."""
    assert run_claim(SimulationRun, run.id, FIRST, "started") is not None
    again = Attempt(task_id="task-1", is_last_try=False, is_redelivered=True)
    for lost in (1, 2):
        taken = run_claim(SimulationRun, run.id, again, "started")
        assert taken is not None and taken.lost_workers == lost
    assert run_claim(SimulationRun, run.id, again, "started") is None
    run.refresh_from_db()
    assert run.status == "failed" and run.lost_workers == 3


def test_a_retry_after_a_transient_error_is_no_lost_worker(run: SimulationRun) -> None:
    assert run_claim(SimulationRun, run.id, FIRST, "started") is not None
    for _ in range(4):
        assert run_claim(SimulationRun, run.id, FIRST, "started") is not None
    run.refresh_from_db()
    assert (run.status, run.attempts, run.lost_workers) == ("running", 5, 0)


def test_the_sweep_fails_a_run_whose_worker_died_three_times(run: SimulationRun, settings,
                                                             monkeypatch) -> None:
    from planner import runs
    from planner.celery import app

    sent: list[tuple] = []
    monkeypatch.setattr(runs, "outbox_publish", lambda: 0)
    monkeypatch.setattr(app.tasks[SimulationRun.TASK_NAME], "apply_async",
                        lambda args, **kwargs: sent.append(args))
    assert run_claim(SimulationRun, run.id, FIRST, "started") is not None
    SimulationRun.objects.filter(pk=run.id).update(lost_workers=2)
    _expire_lease(run, settings)
    assert runs.runs_sweep() == 0 and sent == []
    run.refresh_from_db()
    assert run.status == "failed" and run.error.startswith("its worker stopped 3 times")


def test_an_attempt_knows_a_broker_redelivery() -> None:
    class Request:
        id, retries = "task-1", 0
        delivery_info = {"redelivered": True}

    assert Attempt.of(Request(), 5) == Attempt("task-1", False, True)
    Request.delivery_info = None  # eager and the filesystem broker say nothing
    assert Attempt.of(Request(), 5) == Attempt("task-1", False, False)
