"""Capacity tasks: interfaces like views; they take an id and call one service."""

from typing import Any

from celery import Task, shared_task

from planner.capacity import services
from planner.runs import RUN_TASK_OPTIONS, Attempt


@shared_task(name="planner.run_capacity", **RUN_TASK_OPTIONS)
def run_capacity_task(self: Task[Any, Any], run_id: int) -> None:
    """Sweep a history's capacity frontier (or split it); a second delivery does nothing."""
    services.capacity_execute(run_id=run_id, attempt=Attempt.of(self.request, self.max_retries))


@shared_task(name="planner.run_capacity_part", **RUN_TASK_OPTIONS)
def run_capacity_part_task(self: Task[Any, Any], part_id: int) -> None:
    """Sweep one part of a large capacity sweep; the last part to finish stores it."""
    services.capacity_part_execute(part_id=part_id,
                                   attempt=Attempt.of(self.request, self.max_retries))
