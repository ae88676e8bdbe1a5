"""Planner tasks."""

from celery import shared_task


@shared_task(name="planner.ping")
def ping_task(value: int) -> int:
    """Echo a value back: the integration test uses it to prove broker and worker are wired."""
    return value
