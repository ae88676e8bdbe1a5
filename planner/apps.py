from django.apps import AppConfig


class PlannerConfig(AppConfig):
    name = "planner"
    verbose_name = "Planning"

    def ready(self) -> None:
        # The Celery app and every feature's tasks register here, so that services can
        # enqueue a run by its task name without importing the task module (no cycle).
        from planner import celery, client_ip, tasks  # noqa: F401 (client_ip: its deploy check)
        from planner.capacity import tasks as capacity_tasks  # noqa: F401
        from planner.plans import tasks as plan_tasks  # noqa: F401
        from planner.purchase_mix import signals  # noqa: F401
        from planner.purchase_mix import tasks as purchase_mix_tasks  # noqa: F401
        from planner.reports import signals as report_signals  # noqa: F401
        from planner.reports import tasks as report_tasks  # noqa: F401
