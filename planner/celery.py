"""Celery application; configured from Django settings under the CELERY_ namespace."""

import os
from typing import Any

from celery import Celery
from celery.signals import worker_process_init, worker_ready

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "planner.settings")

app = Celery("planner")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@worker_process_init.connect  # each prefork child
@worker_ready.connect  # the worker itself (the solo and thread pools run tasks there)
def _settle(**_: Any) -> None:
    from planner.startup import settle_after_startup

    settle_after_startup()
