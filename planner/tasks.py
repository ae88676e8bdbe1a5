"""Project-level tasks: a ping that proves broker and worker are wired."""

from celery import shared_task


@shared_task(name="planner.ping")
def ping_task(value: int) -> int:
    """Echo a value back: the integration test and /healthz use it."""
    return value
