"""One run protocol for simulations, plans and purchase-mix analyses (STYLE.md §4).

A run is a row of a `TrackedRun` model. Its Celery task (named by the model's `TASK_NAME`)
claims it with one conditional update, reports progress, then stores the result or a readable
error. The protocol survives what workers and databases do:

- a second delivery of a claimed run does nothing (the claim finds nothing to take);
- a transient database error leaves the row "running" under the same task id and re-raises,
  so the task's autoretry reclaims its own row on the next try; only the last try fails it;
- a worker killed mid-run leaves the row "running"; the broker redelivers the unacknowledged
  message after its visibility timeout (set just above the task time limit in settings), and
  the redelivery, under the same task id, or any delivery once the row is older than the time
  limit, reclaims it and finishes it once.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, ClassVar, TypeVar

from django.conf import settings
from django.db import InterfaceError, OperationalError, models, transaction
from django.db.models import F, Q
from django.utils import timezone

logger = logging.getLogger(__name__)

# Errors worth retrying: the database was busy, restarting or unreachable.
TRANSIENT_ERRORS: tuple[type[Exception], ...] = (OperationalError, InterfaceError)
TRANSIENT_MESSAGE = "The database was unavailable several times in a row; try again."

# Options every run task shares (bind=True: the task passes its request to run_execute).
RUN_TASK_OPTIONS: dict[str, Any] = {
    "bind": True,
    "ignore_result": True,  # the result is the row; nothing waits on a result backend
    "autoretry_for": TRANSIENT_ERRORS,
    "retry_backoff": True,
    "retry_backoff_max": 30,
    "retry_jitter": True,
    "max_retries": 5,
}


class TrackedRun(models.Model):
    """Status and progress of the work one Celery task does for this row."""

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"

    TASK_NAME: ClassVar[str] = ""

    status = models.CharField(max_length=8, choices=Status.choices, default=Status.QUEUED)
    progress_pct = models.FloatField(default=0)
    progress_message = models.CharField(max_length=200, blank=True)
    result = models.JSONField(null=True, blank=True)
    error = models.TextField(blank=True)
    task_id = models.CharField(max_length=64, blank=True, help_text="The delivery that holds it")
    attempts = models.PositiveSmallIntegerField(default=0, help_text="Times it was claimed")
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        abstract = True

    @property
    def is_finished(self) -> bool:
        return self.status in (self.Status.DONE, self.Status.FAILED)


Run = TypeVar("Run", bound=TrackedRun)


@dataclass(frozen=True)
class Attempt:
    """Which delivery of a task is running: its id, and whether no retry follows."""

    task_id: str = ""
    is_last_try: bool = True

    @classmethod
    def of(cls, request: Any, max_retries: int | None) -> Attempt:
        """From a bound Celery task's `self.request` and `self.max_retries`."""
        return cls(
            task_id=str(request.id or ""),
            is_last_try=max_retries is not None and request.retries >= max_retries,
        )


def run_status(run: TrackedRun) -> dict[str, Any]:
    """The status JSON every run's status URL returns (progress.js reads it)."""
    return {
        "id": run.pk,
        "status": run.status,
        "progress_pct": round(float(run.progress_pct), 1),
        "message": run.progress_message,
        "error": run.error,
        "is_finished": run.is_finished,
        "attempts": run.attempts,
    }


class QueueUnavailableError(Exception):
    """The broker refused a task; its run row is committed and stays queued until a sweep."""

    message = ("Your request is saved, but the task queue is unavailable right now; it will "
               "start by itself when the queue is back (within about a minute).")


# Publishing gives up after about a second instead of the default ~20 s of retries: the row
# is already committed, and the sweep (runs_sweep) sends it when the broker is back.
PUBLISH_RETRY_POLICY = {"max_retries": 2, "interval_start": 0, "interval_step": 0.5,
                        "interval_max": 0.5}
# Queued rows older than this are sent again by the sweep (their first send may have failed).
REQUEUE_AFTER_SECONDS = 60


def _publish(model_label: str, task_name: str, run_id: int, is_raising: bool) -> None:
    from kombu.exceptions import OperationalError as BrokerError

    from planner.celery import app

    try:
        app.tasks[task_name].apply_async((run_id,), retry=True,
                                         retry_policy=PUBLISH_RETRY_POLICY)
    except (BrokerError, ConnectionError, TimeoutError) as exc:
        logger.warning("%s %s stays queued: broker unavailable (%s)", model_label, run_id, exc)
        if is_raising:
            raise QueueUnavailableError(QueueUnavailableError.message) from exc


def run_enqueue(run: TrackedRun, *, on_unavailable: str = "raise") -> None:
    """Send the run's task once the surrounding transaction commits (by name: no import).

    With the broker down this raises QueueUnavailableError after the commit (the interface
    answers 503), or only logs it with on_unavailable="keep" (a task sending subtasks); the
    row stays queued and runs_sweep sends it later."""
    label, name, run_id = run._meta.label, run.TASK_NAME, run.pk
    is_raising = on_unavailable != "keep"
    transaction.on_commit(lambda: _publish(label, name, run_id, is_raising))


def runs_sweep() -> int:
    """Send again every run still queued after REQUEUE_AFTER_SECONDS, and every "running" run
    older than the task time limit (its worker died and no redelivery came). A duplicate send
    is harmless: the claim is conditional. Returns how many were sent."""
    from django.apps import apps

    from planner.celery import app

    sent = 0
    after = getattr(settings, "RUNS_REQUEUE_AFTER_SECONDS", REQUEUE_AFTER_SECONDS)
    queued_before = timezone.now() - timedelta(seconds=after)
    for model in apps.get_models():
        if not issubclass(model, TrackedRun) or not model.TASK_NAME:
            continue
        stuck = model.objects.filter(
            Q(status=TrackedRun.Status.QUEUED, created_at__lt=queued_before)
            | Q(status=TrackedRun.Status.RUNNING, started_at__lt=_stale_before())
        ).values_list("pk", flat=True)
        for run_id in stuck:
            app.tasks[model.TASK_NAME].apply_async((run_id,), retry=True,
                                                   retry_policy=PUBLISH_RETRY_POLICY)
            sent += 1
    return sent


def _stale_before() -> datetime:
    return timezone.now() - timedelta(seconds=settings.CELERY_TASK_TIME_LIMIT)


def run_claim(model: type[Run], run_id: int, attempt: Attempt, message: str) -> Run | None:
    """queued (or abandoned running) -> running in one conditional update; None if not ours."""
    claimable = Q(status=TrackedRun.Status.QUEUED) | Q(
        status=TrackedRun.Status.RUNNING, started_at__lt=_stale_before()
    )
    if attempt.task_id:
        claimable |= Q(status=TrackedRun.Status.RUNNING, task_id=attempt.task_id)
    claimed = model.objects.filter(claimable, pk=run_id).update(
        status=TrackedRun.Status.RUNNING, started_at=timezone.now(), task_id=attempt.task_id,
        attempts=F("attempts") + 1, progress_pct=1, progress_message=message[:200], error="",
    )
    return model.objects.get(pk=run_id) if claimed else None


def run_progress(model: type[TrackedRun], run_id: int, pct: float, message: str) -> None:
    model.objects.filter(pk=run_id).update(progress_pct=pct, progress_message=message[:200])


def run_fail(model: type[TrackedRun], run_id: int, message: str) -> None:
    model.objects.filter(pk=run_id).update(
        status=TrackedRun.Status.FAILED, error=message[:2000], progress_message="failed",
        finished_at=timezone.now(),
    )


def run_store(model: type[TrackedRun], run_id: int, result: dict[str, Any]) -> None:
    with transaction.atomic():
        model.objects.filter(pk=run_id).update(
            status=TrackedRun.Status.DONE, result=result, error="", progress_pct=100,
            progress_message="done", finished_at=timezone.now(),
        )


def run_execute(
    model: type[Run],
    run_id: int,
    compute: Callable[[Run], dict[str, Any] | None],
    *,
    attempt: Attempt,
    message: str = "started",
) -> None:
    """Claim, compute and store once. ValueError becomes a readable failure; a transient
    database error is re-raised for the task to retry (the last try fails the run); anything
    else is stored as an internal error and re-raised for the worker's log. A compute that
    hands the work to subtasks returns None: the run stays running until they store it."""
    run = run_claim(model, run_id, attempt, message)
    if run is None:
        return
    try:
        result = compute(run)
        if result is not None:
            run_store(model, run_id, result)
    except TRANSIENT_ERRORS:
        if attempt.is_last_try:
            _fail_quietly(model, run_id, TRANSIENT_MESSAGE)
        raise
    except ValueError as exc:
        run_fail(model, run_id, str(exc))
    except Exception as exc:
        run_fail(model, run_id, f"internal error: {exc.__class__.__name__}")
        raise


def _fail_quietly(model: type[TrackedRun], run_id: int, message: str) -> None:
    # The database may still be away: then the row stays "running" and is reclaimed once stale.
    with contextlib.suppress(*TRANSIENT_ERRORS):
        run_fail(model, run_id, message)
