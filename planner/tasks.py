"""Planner tasks: interfaces like views; they take ids, claim a run and call one service."""

from typing import Any

from celery import Task, shared_task
from django.db import DatabaseError, InterfaceError, OperationalError

from planner import services

TRANSIENT_ERRORS = (OperationalError, InterfaceError)


@shared_task(name="planner.ping")
def ping_task(value: int) -> int:
    """Echo a value back: the integration test uses it to prove broker and worker are wired."""
    return value


@shared_task(
    bind=True,
    name="planner.analyze_run",
    autoretry_for=TRANSIENT_ERRORS,
    retry_backoff=True,
    retry_backoff_max=60,
    retry_jitter=True,
    max_retries=3,
)
def analyze_run_task(self: Task[Any, Any], run_id: int) -> None:
    """Analyze a history and recommend a mix for one run; a second delivery does nothing."""
    if not services.run_claim(run_id=run_id):
        return
    try:
        services.run_execute(run_id=run_id)
    except TRANSIENT_ERRORS:
        if self.request.retries < self.max_retries:
            services.run_requeue(run_id=run_id)
        else:
            services.run_fail(run_id=run_id, message="The database was unavailable; try again.")
        raise
    except (ValueError, DatabaseError) as error:
        services.run_fail(run_id=run_id, message=str(error))
    except Exception as error:
        services.run_fail(run_id=run_id, message=f"Unexpected error: {error}")
        raise


@shared_task(
    name="planner.run_plan",
    autoretry_for=TRANSIENT_ERRORS,
    retry_backoff=True,
    retry_jitter=True,
    max_retries=3,
)
def run_plan_task(scenario_id: int) -> None:
    """Compute the plan of a stored scenario; a second delivery of a claimed one does nothing."""
    from planner.plans.services import scenario_execute

    scenario_execute(scenario_id=scenario_id)
