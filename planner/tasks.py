"""Project-level tasks: a ping that proves broker and worker are wired, and the run sweep that
sends what the outbox holds, queued runs whose message was lost, and dead workers' runs (every
RUNS_SWEEP_SECONDS from beat, and when a worker starts)."""

import logging
from typing import Any

from celery import shared_task
from celery.signals import worker_ready

from planner.runs import runs_sweep

logger = logging.getLogger(__name__)


@shared_task(name="planner.ping")
def ping_task(value: int) -> int:
    """Echo a value back: the integration test and /healthz use it."""
    return value


@shared_task(name="planner.sweep_runs", ignore_result=True)
def sweep_runs_task() -> int:
    """Send again the runs a broker outage or a lost worker left behind."""
    return runs_sweep()


@worker_ready.connect(dispatch_uid="sweep-runs-on-worker-start")
def _sweep_when_a_worker_starts(**kwargs: Any) -> None:
    # Directly, not as a task: the outbox may hold work sent nowhere yet.
    try:
        runs_sweep()
    except Exception:  # noqa: BLE001 - the worker starts anyway; beat sweeps again soon
        logger.exception("run sweep at worker start failed")
