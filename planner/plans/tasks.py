"""Plan tasks: interfaces like views; they take an id and call one service."""

from typing import Any

from celery import Task, shared_task

from planner.plans import services
from planner.runs import RUN_TASK_OPTIONS, Attempt


@shared_task(name="planner.run_plan", **RUN_TASK_OPTIONS)
def run_plan_task(self: Task[Any, Any], scenario_id: int) -> None:
    """Compute the plan of a stored scenario; a second delivery of a claimed one does nothing."""
    services.scenario_execute(
        scenario_id=scenario_id, attempt=Attempt.of(self.request, self.max_retries)
    )


@shared_task(name="planner.run_plan_chunk", **RUN_TASK_OPTIONS)
def run_plan_chunk_task(self: Task[Any, Any], chunk_id: int) -> None:
    """Sweep one part of a large plan; the last part to finish stores the plan."""
    services.sweep_chunk_execute(
        chunk_id=chunk_id, attempt=Attempt.of(self.request, self.max_retries)
    )
