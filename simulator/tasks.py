"""Simulation tasks: ids in, results written to the SimulationRun row."""

from typing import Any

from celery import Task, shared_task

from planner.runs import RUN_TASK_OPTIONS, Attempt
from simulator import services


@shared_task(name="simulator.run_simulation", **RUN_TASK_OPTIONS)
def run_simulation_task(self: Task[Any, Any], run_id: int) -> None:
    services.simulation_execute(run_id=run_id, attempt=Attempt.of(self.request, self.max_retries))
