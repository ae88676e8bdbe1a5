from django.apps import AppConfig


class SimulatorConfig(AppConfig):
    name = "simulator"
    verbose_name = "Throughput simulator"

    def ready(self) -> None:
        from simulator import tasks  # noqa: F401  (registers the task for run_enqueue)
