"""Report tasks: interfaces like views; they take an id and call one service."""

from typing import Any

from celery import Task, shared_task

from planner.reports import services
from planner.runs import RUN_TASK_OPTIONS, Attempt


@shared_task(name="planner.render_report", **RUN_TASK_OPTIONS)
def render_report_task(self: Task[Any, Any], report_id: int) -> None:
    """Render a stored report's file; a second delivery of a claimed one does nothing."""
    services.report_execute(
        report_id=report_id, attempt=Attempt.of(self.request, self.max_retries)
    )
