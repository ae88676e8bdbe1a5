"""Purchase-mix tasks: interfaces like views; they take an id and call one service."""

from typing import Any

from celery import Task, shared_task

from planner.purchase_mix import services
from planner.runs import RUN_TASK_OPTIONS, Attempt


@shared_task(name="planner.analyze_run", **RUN_TASK_OPTIONS)
def analyze_run_task(self: Task[Any, Any], run_id: int) -> None:
    """Analyze a history and recommend a mix for one run; a second delivery does nothing."""
    services.run_execute(run_id=run_id, attempt=Attempt.of(self.request, self.max_retries))
