"""/healthz: is the database reachable, the broker reachable, does a worker answer, is the page
cache on Redis or degraded to per-process memory, how much waits in the run outbox, and how
much room is left on the disk holding VAR_DIR (uploads, reports, the SQLite file)?"""

import time
from typing import Any

from django.conf import settings
from django.db import connection
from django.http import HttpRequest, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from planner.cache import cache_check
from planner.disk import disk_free_bytes
from planner.outbox import outbox_waiting

WORKER_PING_SECONDS = 1.0


def _outbox_waiting() -> int | None:
    try:
        return outbox_waiting()
    except Exception:  # noqa: BLE001 - reported as unknown
        return None


def _database() -> str:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except Exception as exc:  # noqa: BLE001 - any failure is what /healthz reports
        return f"error: {exc.__class__.__name__}"
    return "ok"


def _disk() -> dict[str, Any]:
    """Free bytes under VAR_DIR against DISK_MIN_FREE_BYTES: "low" once writes are refused."""
    try:
        free = disk_free_bytes(settings.VAR_DIR)
    except OSError as exc:
        return {"status": f"error: {exc.__class__.__name__}", "free_bytes": None,
                "min_free_bytes": settings.DISK_MIN_FREE_BYTES}
    return {"status": "ok" if free >= settings.DISK_MIN_FREE_BYTES else "low",
            "free_bytes": free, "min_free_bytes": settings.DISK_MIN_FREE_BYTES}


def _broker_and_workers() -> tuple[str, str]:
    from planner.celery import app

    try:
        with app.connection_for_write() as conn:
            conn.ensure_connection(max_retries=1, timeout=2)
    except Exception as exc:  # noqa: BLE001
        return f"error: {exc.__class__.__name__}", "unknown (no broker)"
    try:
        replies = app.control.ping(timeout=WORKER_PING_SECONDS)
    except Exception as exc:  # noqa: BLE001
        return "ok", f"error: {exc.__class__.__name__}"
    return "ok", f"{len(replies)} answered" if replies else "none answered"


@never_cache
@require_GET
def healthz(request: HttpRequest) -> JsonResponse:
    """200 when the database and the broker answer and the disk has room (the web tier can
    take work), else 503 "degraded"; the worker count says whether queued work will start
    soon."""
    started = time.monotonic()
    database = _database()
    broker, workers = _broker_and_workers()
    disk = _disk()
    body: dict[str, Any] = {
        "database": database, "broker": broker, "workers": workers, "disk": disk,
        "cache": cache_check(),
        "outbox_waiting": _outbox_waiting() if database == "ok" else None,
        "checked_in_ms": round((time.monotonic() - started) * 1000),
    }
    healthy = database == "ok" and broker == "ok" and disk["status"] == "ok"
    return JsonResponse({"status": "ok" if healthy else "degraded", **body},
                        status=200 if healthy else 503)
