"""One run protocol for simulations, plans and purchase-mix analyses (STYLE.md §4).

A run is a row of a `TrackedRun` model. Its Celery task (named by the model's `TASK_NAME`)
claims it with one conditional update, reports progress, then stores the result or a readable
error. The protocol survives what workers and databases do:

- a second delivery of a claimed run does nothing (the claim finds nothing to take);
- a transient database error leaves the row "running" under the same task id and re-raises,
  so the task's autoretry reclaims its own row on the next try; only the last try fails it;
- a running task renews its lease (`heartbeat_at`, every RUN_HEARTBEAT_SECONDS from a thread
  beside the work); a worker killed mid-run stops renewing it, and once the lease is older than
  RUN_LEASE_SECONDS the run sweep (beat, every RUNS_SWEEP_SECONDS) sends the run again and any
  delivery reclaims it: a dead worker's run starts again within about a minute and a half;
- only the delivery that holds the run may store or fail it (its task id is the fence), so a
  worker that lost its lease and still finishes stores nothing, and the run finishes once;
- the broker's own redelivery of the unacknowledged message (after its visibility timeout, just
  above the task time limit) finds the run finished and does nothing;
- a run whose worker died (lease expired, or the broker redelivered the message its worker
  held) counts `lost_workers`; the MAX_LOST_WORKERS-th death fails it with a message, so an
  input that kills every worker that takes it does not loop for ever;
- MemoryError (the worker's memory limit) fails the run readably and is not re-raised: Celery
  would take it as unrecoverable and stop the whole worker.

Tasks are sent through the transactional outbox (planner.outbox): the run row and its outbox
entry are written in one transaction, so a broker outage delays a run and never loses it.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, ClassVar, TypeVar

from django.conf import settings
from django.db import InterfaceError, OperationalError, connection, models, transaction
from django.db.models import F, Q
from django.utils import timezone

from planner.outbox import PUBLISH_RETRY_POLICY, on_commit_send, outbox_add, outbox_publish

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
    lost_workers = models.PositiveSmallIntegerField(
        default=0, help_text="Times its worker died")
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(
        null=True, blank=True, help_text="Last lease renewal by the worker running it")
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
    # The broker sent this message again because the worker that took it never acknowledged
    # it (it died): a run still held under this task id lost its worker.
    is_redelivered: bool = False

    @classmethod
    def of(cls, request: Any, max_retries: int | None) -> Attempt:
        """From a bound Celery task's `self.request` and `self.max_retries`."""
        delivery = getattr(request, "delivery_info", None) or {}
        return cls(
            task_id=str(request.id or ""),
            is_last_try=max_retries is not None and request.retries >= max_retries,
            is_redelivered=bool(delivery.get("redelivered")),
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
    """The broker refused a task; its run row and outbox entry are committed, and the outbox
    publisher sends it when the broker is back."""

    message = ("Your request is saved, but the task queue is unavailable right now; it will "
               "start by itself when the queue is back (within about a minute).")


# Queued rows older than this are sent again by the sweep (a message lost with the broker).
REQUEUE_AFTER_SECONDS = 60
# The worker running a run may die this many times; the last death fails the run (an input
# that kills every worker that takes it must not loop for ever).
MAX_LOST_WORKERS = 3
LOST_WORKERS_MESSAGE = (
    f"its worker stopped {MAX_LOST_WORKERS} times while running it (out of memory, killed or "
    "restarted), so it was not started again: try a smaller input, or ask the operator")
MEMORY_MESSAGE = (
    "ran out of memory: the input needs more than a worker may use; try a smaller input "
    "(fewer rows, GPU types, points or a shorter period)")
# Errors of an input too large for the worker: the run fails with a message and the worker
# goes on (never re-raised: Celery takes MemoryError as unrecoverable and stops the worker).
RESOURCE_ERRORS: tuple[type[BaseException], ...] = (MemoryError, RecursionError)


def resource_message(exc: BaseException) -> str:
    """What a RESOURCE_ERRORS error means for the user."""
    if isinstance(exc, MemoryError):
        return MEMORY_MESSAGE
    return "the input is nested too deeply to read"
# A running task renews its lease this often; a lease older than RUN_LEASE_SECONDS is a dead
# worker's (settings override both).
HEARTBEAT_SECONDS = 10
LEASE_SECONDS = 45


def run_enqueue(run: TrackedRun, *, on_unavailable: str = "raise") -> None:
    """Write the run's outbox entry in the current transaction (the one that created the row)
    and send it once that transaction commits (by task name: no import).

    With the broker down this raises QueueUnavailableError after the commit (the interface
    answers 503: saved, starts later), or only logs it with on_unavailable="keep" (a task
    sending subtasks); either way the entry stays and the outbox publisher sends it later."""
    with transaction.atomic():
        entry = outbox_add(task_name=run.TASK_NAME, run_label=run._meta.label, run_id=run.pk)
    raising = (QueueUnavailableError(QueueUnavailableError.message)
               if on_unavailable != "keep" else None)
    on_commit_send(entry.pk, raising)


def runs_sweep() -> int:
    """Send what the outbox still holds, then send again every run still queued after
    RUNS_REQUEUE_AFTER_SECONDS (its message was lost with the broker) and every running run
    whose worker died (lease expired, or no lease and older than the task time limit).
    A duplicate send is harmless: the claim is conditional. Returns how many were sent."""
    from django.apps import apps

    from planner.celery import app

    sent = outbox_publish()
    after = getattr(settings, "RUNS_REQUEUE_AFTER_SECONDS", REQUEUE_AFTER_SECONDS)
    queued_before = timezone.now() - timedelta(seconds=after)
    for model in apps.get_models():
        if not issubclass(model, TrackedRun) or not model.TASK_NAME:
            continue
        _fail_lost(model.objects.all(), _dead())
        stuck = model.objects.filter(
            Q(status=TrackedRun.Status.QUEUED, created_at__lt=queued_before) | _dead()
        ).values_list("pk", flat=True)
        for run_id in stuck:
            logger.warning("%s %s sent again (queued too long, or its worker died)",
                           model._meta.label, run_id)
            app.tasks[model.TASK_NAME].apply_async((run_id,), retry=True,
                                                   retry_policy=PUBLISH_RETRY_POLICY)
            sent += 1
    return sent


def _stale_before() -> datetime:
    return timezone.now() - timedelta(seconds=settings.CELERY_TASK_TIME_LIMIT)


def lease_seconds() -> float:
    return float(getattr(settings, "RUN_LEASE_SECONDS", LEASE_SECONDS))


def _dead() -> Q:
    """Running rows whose worker is gone: a lease not renewed for RUN_LEASE_SECONDS, or (a run
    handed to subtasks holds no lease) started longer ago than the task time limit."""
    lease_before = timezone.now() - timedelta(seconds=lease_seconds())
    return Q(status=TrackedRun.Status.RUNNING) & (
        Q(heartbeat_at__lt=lease_before)
        | Q(heartbeat_at__isnull=True, started_at__lt=_stale_before())
    )


def _lost(attempt: Attempt) -> Q:
    """Runs whose worker died: a lease not renewed, or a run still held by this delivery's
    task id when the broker redelivered its message (the worker never acknowledged it)."""
    lost = _dead()
    if attempt.task_id and attempt.is_redelivered:
        lost |= Q(status=TrackedRun.Status.RUNNING, task_id=attempt.task_id)
    return lost


def _fail_lost(rows: models.QuerySet[Any], lost: Q) -> int:
    """Fail the `lost` runs among `rows` whose worker died MAX_LOST_WORKERS times (this death
    included) instead of taking them again; returns how many."""
    return rows.filter(lost, lost_workers__gte=MAX_LOST_WORKERS - 1).update(
        status=TrackedRun.Status.FAILED, error=LOST_WORKERS_MESSAGE, progress_message="failed",
        lost_workers=F("lost_workers") + 1, finished_at=timezone.now(), heartbeat_at=None,
    )


def run_claim(model: type[Run], run_id: int, attempt: Attempt, message: str) -> Run | None:
    """queued (or a dead worker's running) -> running in one conditional update, with a fresh
    lease; None if not ours. Taking a dead worker's run counts the lost worker; the
    MAX_LOST_WORKERS-th loss fails the run instead."""
    rows, lost = model.objects.filter(pk=run_id), _lost(attempt)
    if _fail_lost(rows, lost):
        logger.warning("%s %s failed: its worker died %d times", model._meta.label, run_id,
                       MAX_LOST_WORKERS)
        return None
    claimable = Q(status=TrackedRun.Status.QUEUED)
    if attempt.task_id and not attempt.is_redelivered:  # a retry of this same delivery
        claimable |= Q(status=TrackedRun.Status.RUNNING, task_id=attempt.task_id)
    now = timezone.now()
    claim = {"status": TrackedRun.Status.RUNNING, "started_at": now, "heartbeat_at": now,
             "task_id": attempt.task_id, "attempts": F("attempts") + 1, "progress_pct": 1,
             "progress_message": message[:200], "error": ""}
    claimed = rows.filter(claimable).update(**claim) or rows.filter(lost).update(
        **claim, lost_workers=F("lost_workers") + 1)
    return model.objects.get(pk=run_id) if claimed else None


def run_progress(model: type[TrackedRun], run_id: int, pct: float, message: str) -> None:
    model.objects.filter(pk=run_id).update(progress_pct=pct, progress_message=message[:200])


def _held(model: type[TrackedRun], run_id: int, holder: str) -> models.QuerySet[Any]:
    """The row, if the delivery `holder` (a task id; "" = any) still holds it."""
    rows = model.objects.filter(pk=run_id)
    if holder:
        rows = rows.filter(status=TrackedRun.Status.RUNNING, task_id=holder)
    return rows


def run_fail(model: type[TrackedRun], run_id: int, message: str, *, holder: str = "") -> bool:
    """Fail the run (only if `holder` still holds it, when given); True if it was stored."""
    return bool(_held(model, run_id, holder).update(
        status=TrackedRun.Status.FAILED, error=message[:2000], progress_message="failed",
        finished_at=timezone.now(), heartbeat_at=None,
    ))


def run_store(model: type[TrackedRun], run_id: int, result: dict[str, Any], *,
              holder: str = "") -> bool:
    """Store the result (only if `holder` still holds the run, when given); True if stored."""
    with transaction.atomic():
        stored = _held(model, run_id, holder).update(
            status=TrackedRun.Status.DONE, result=result, error="", progress_pct=100,
            progress_message="done", finished_at=timezone.now(), heartbeat_at=None,
        )
    if not stored:
        logger.warning("%s %s: result dropped, delivery %s lost its lease to another",
                       model._meta.label, run_id, holder)
    return bool(stored)


class run_lease(contextlib.AbstractContextManager["run_lease"]):  # noqa: N801 - a with-block
    """Renew the run's lease every RUN_HEARTBEAT_SECONDS from a thread while the block runs.

    Not inside an outer transaction (an eager task in a test): the row is not visible to
    another connection there, and nobody else could take it anyway."""

    def __init__(self, model: type[TrackedRun], run_id: int, holder: str) -> None:
        self.model, self.run_id, self.holder = model, run_id, holder
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def __enter__(self) -> run_lease:
        if self.holder and not connection.in_atomic_block:
            self._thread = threading.Thread(target=self._renew, daemon=True,
                                            name=f"lease-{self.model._meta.label}-{self.run_id}")
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=30)

    def _renew(self) -> None:
        every = float(getattr(settings, "RUN_HEARTBEAT_SECONDS", HEARTBEAT_SECONDS))
        try:
            while not self._stop.wait(every):
                try:
                    _held(self.model, self.run_id, self.holder).update(
                        heartbeat_at=timezone.now())
                except Exception as exc:  # noqa: BLE001 - the next beat tries again
                    logger.warning("%s %s: lease not renewed (%s)", self.model._meta.label,
                                   self.run_id, exc)
        finally:
            connection.close()  # this thread's own connection


def run_execute(
    model: type[Run],
    run_id: int,
    compute: Callable[[Run], dict[str, Any] | None],
    *,
    attempt: Attempt,
    message: str = "started",
) -> None:
    """Claim, compute and store once, renewing the lease meanwhile. ValueError becomes a
    readable failure, and so do MemoryError and RecursionError (not re-raised: the worker
    lives and takes the next task); a transient database error is re-raised for the task to
    retry (the last try fails the run); anything else is stored as an internal error and
    re-raised for the worker's log. A compute that hands the work to subtasks returns None:
    the run stays running (without a lease: its parts hold theirs) until they store it."""
    run = run_claim(model, run_id, attempt, message)
    if run is None:
        return
    holder = attempt.task_id
    try:
        with run_lease(model, run_id, holder):
            result = compute(run)
        if result is not None:
            run_store(model, run_id, result, holder=holder)
        else:
            _held(model, run_id, holder).update(heartbeat_at=None)
    except TRANSIENT_ERRORS:
        if attempt.is_last_try:
            _fail_quietly(model, run_id, TRANSIENT_MESSAGE, holder)
        raise
    except ValueError as exc:
        run_fail(model, run_id, str(exc), holder=holder)
    except RESOURCE_ERRORS as exc:
        # Not re-raised (see RESOURCE_ERRORS); the compute's arrays go with its frames.
        logger.warning("%s %s: %s", model._meta.label, run_id, exc.__class__.__name__)
        run_fail(model, run_id, resource_message(exc), holder=holder)
    except Exception as exc:
        run_fail(model, run_id, f"internal error: {exc.__class__.__name__}", holder=holder)
        raise


def _fail_quietly(model: type[TrackedRun], run_id: int, message: str, holder: str) -> None:
    # The database may still be away: then the row stays "running" and is reclaimed once stale.
    with contextlib.suppress(*TRANSIENT_ERRORS):
        run_fail(model, run_id, message, holder=holder)
