"""Simulation tasks: ids in, results written to the SimulationRun row."""

from celery import shared_task

from simulator import services


@shared_task(
    name="simulator.run_simulation",
    autoretry_for=(ConnectionError, TimeoutError),
    retry_backoff=True,
    retry_jitter=True,
    max_retries=3,
)
def run_simulation_task(run_id: int) -> None:
    services.simulation_execute(run_id=run_id)
