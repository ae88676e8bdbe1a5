"""The transactional outbox: a run's task is written as a row in the transaction that creates
the run, and sent to the broker from there (STYLE.md §4).

- `outbox_add` writes an `OutboxEntry` beside the run row (same transaction: both or neither);
- once the transaction commits, `outbox_send` tries to send that entry at once;
- with the broker away the entry stays; `outbox_publish` (Celery beat every
  OUTBOX_PUBLISH_SECONDS, each worker as it starts, and every run sweep) sends what is left,
  oldest first, and stops at the first broker error.

An entry is deleted once the broker took its task. A task sent twice is harmless: the run's
claim is conditional (planner.runs), so a run still executes once.
"""

from __future__ import annotations

import logging

from django.db import models, transaction
from django.db.models import F
from django.utils import timezone

logger = logging.getLogger(__name__)

# Publishing gives up after about a second instead of the default ~20 s of retries: the entry
# is committed, and the next publish sends it when the broker is back.
PUBLISH_RETRY_POLICY = {"max_retries": 2, "interval_start": 0, "interval_step": 0.5,
                        "interval_max": 0.5}
PUBLISH_BATCH = 500


class BrokerUnavailableError(Exception):
    """The broker did not take a task; its outbox entry stays for the next publish."""


class OutboxEntry(models.Model):
    """One task to send: `task_name(run_id)` for the run row `run_label`/`run_id`."""

    task_name = models.CharField(max_length=100)
    run_label = models.CharField(max_length=100, help_text="The run's model, app.Model")
    run_id = models.BigIntegerField()
    created_at = models.DateTimeField(auto_now_add=True)
    tries = models.PositiveIntegerField(default=0, help_text="Failed sends so far")
    last_error = models.CharField(max_length=200, blank=True)

    class Meta:
        app_label = "planner"
        ordering = ["id"]
        verbose_name_plural = "outbox entries"

    def __str__(self) -> str:
        return f"{self.task_name}({self.run_id})"


def outbox_add(*, task_name: str, run_label: str, run_id: int) -> OutboxEntry:
    """Write the entry in the current transaction (the one creating the run)."""
    return OutboxEntry.objects.create(task_name=task_name, run_label=run_label, run_id=run_id)


def _send(task_name: str, run_id: int) -> None:
    from kombu.exceptions import OperationalError as KombuOperationalError

    from planner.celery import app

    try:
        app.tasks[task_name].apply_async((run_id,), retry=True,
                                         retry_policy=PUBLISH_RETRY_POLICY)
    except (KombuOperationalError, ConnectionError, TimeoutError, OSError) as exc:
        raise BrokerUnavailableError(f"{exc.__class__.__name__}: {exc}"[:200]) from exc


def outbox_send(entry_id: int) -> bool:
    """Send one entry; True when the broker took it (the entry is gone), False when it stays."""
    entry = OutboxEntry.objects.filter(pk=entry_id).first()
    if entry is None:
        return True  # a publisher already sent it
    try:
        _send(entry.task_name, entry.run_id)
    except BrokerUnavailableError as exc:
        OutboxEntry.objects.filter(pk=entry_id).update(tries=F("tries") + 1,
                                                       last_error=str(exc))
        logger.warning("%s %s stays in the outbox: broker unavailable (%s)",
                       entry.run_label, entry.run_id, exc)
        return False
    OutboxEntry.objects.filter(pk=entry_id).delete()
    return True


def outbox_publish(limit: int = PUBLISH_BATCH) -> int:
    """Send the waiting entries, oldest first, until the broker refuses one; returns how
    many were sent."""
    sent = 0
    for entry_id in list(OutboxEntry.objects.values_list("pk", flat=True)[:limit]):
        if not outbox_send(entry_id):
            break
        sent += 1
    if sent:
        logger.info("outbox: sent %d waiting task(s)", sent)
    return sent


def outbox_waiting() -> int:
    return OutboxEntry.objects.count()


def outbox_oldest_age_seconds() -> float | None:
    oldest = OutboxEntry.objects.order_by("created_at").values_list("created_at", flat=True)
    first = oldest.first()
    return (timezone.now() - first).total_seconds() if first else None


def on_commit_send(entry_id: int, on_unavailable: Exception | None) -> None:
    """Send the entry once the surrounding transaction commits; with the broker away, raise
    `on_unavailable` (the interface says the request is saved) or only log it (None)."""

    def send() -> None:
        if not outbox_send(entry_id) and on_unavailable is not None:
            raise on_unavailable

    transaction.on_commit(send)
