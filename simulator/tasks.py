"""Simulation and calibration-fit tasks: ids in, results written to the run's row."""

from typing import Any

from celery import Task, shared_task

from planner.runs import RUN_TASK_OPTIONS, Attempt
from simulator import services
from simulator.calibration.services import calibration_fit_execute


@shared_task(name="simulator.run_simulation", **RUN_TASK_OPTIONS)
def run_simulation_task(self: Task[Any, Any], run_id: int) -> None:
    services.simulation_execute(run_id=run_id, attempt=Attempt.of(self.request, self.max_retries))


@shared_task(name="simulator.fit_calibration", **RUN_TASK_OPTIONS)
def fit_calibration_task(self: Task[Any, Any], run_id: int) -> None:
    calibration_fit_execute(run_id=run_id, attempt=Attempt.of(self.request, self.max_retries))
