"""Run a TrackedRun row's work once: claim it, report progress, store the result or the error.

Shared by simulations and plans, so that both follow the same idempotent task protocol
(STYLE.md §4): a conditional update from queued to running claims the row; a second delivery
finds nothing to claim and does nothing.
"""

from collections.abc import Callable
from typing import Any, TypeVar

from django.utils import timezone

from simulator.models import TrackedRun

Run = TypeVar("Run", bound=TrackedRun)


def run_progress(model: type[TrackedRun], run_id: int, pct: float, message: str) -> None:
    model.objects.filter(pk=run_id).update(progress_pct=pct, progress_message=message[:200])


def _claim(model: type[Run], run_id: int, message: str) -> Run | None:
    claimed = model.objects.filter(pk=run_id, status=TrackedRun.Status.QUEUED).update(
        status=TrackedRun.Status.RUNNING, started_at=timezone.now(), progress_pct=5,
        progress_message=message[:200])
    return model.objects.get(pk=run_id) if claimed else None


def run_fail(model: type[TrackedRun], run_id: int, message: str) -> None:
    model.objects.filter(pk=run_id).update(
        status=TrackedRun.Status.FAILED, error=message[:2000], progress_message="failed",
        finished_at=timezone.now())


def run_execute(model: type[Run], run_id: int, compute: Callable[[Run], dict[str, Any]],
                *, message: str = "started") -> None:
    """Claim, compute and store. ValueError becomes a readable failure; anything else is stored
    as an internal error and re-raised for the worker's log."""
    run = _claim(model, run_id, message)
    if run is None:
        return
    try:
        result = compute(run)
    except ValueError as exc:
        run_fail(model, run_id, str(exc))
        return
    except Exception as exc:
        run_fail(model, run_id, f"internal error: {exc.__class__.__name__}")
        raise
    model.objects.filter(pk=run_id).update(
        status=TrackedRun.Status.DONE, result=result, progress_pct=100, progress_message="done",
        finished_at=timezone.now())
