"""Plan a training run from the command line: rank every catalog configuration by cost."""

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from planner.plans.scenario import scenario_from_input
from planner.plans.services import plan_compute

TABLE_COLUMNS = {
    "rank": "rank", "provider": "provider", "region": "region",
    "instance_type": "instance", "gpus": "GPUs", "purchase_option": "purchase",
    "time_to_train_hours": "time (h)", "total_usd": "total ($)", "mfu": "MFU",
}


class Command(BaseCommand):
    help = "Rank catalog configurations for a training workload by cost and time."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--workload", required=True, help="simulator preset, e.g. llama2-7b")
        parser.add_argument("--tokens", required=True, type=float)
        parser.add_argument("--deadline-days", type=float)
        parser.add_argument("--budget-usd", type=float)
        parser.add_argument("--providers", default="", help="comma-separated, e.g. aws,gcp")
        parser.add_argument("--purchase", default="on_demand,spot",
                            help="comma-separated purchase options")
        parser.add_argument("--gpus", default="", help="comma-separated accelerator slugs")
        parser.add_argument("--top", type=int, default=20, help="rows to print")
        parser.add_argument("--json", action="store_true",
                            help="print the same document as GET /api/plans/{id}")

    def handle(self, *args: Any, **options: Any) -> None:
        raw = {"workload": options["workload"], "tokens": options["tokens"],
               "deadline_days": options["deadline_days"], "budget_usd": options["budget_usd"],
               "providers": options["providers"], "purchase_options": options["purchase"],
               "gpus": options["gpus"]}
        try:
            scenario = scenario_from_input(raw, today=timezone.now().date())
            result = plan_compute(scenario=scenario, owner_id=None)
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        if options["json"]:
            document = {"id": None, "name": "", "status": "done", "progress_pct": 100.0,
                        "progress_message": "done", "error": "", "inputs": scenario.data,
                        "result": result}
            self.stdout.write(json.dumps(document, indent=1, default=str))
            return
        self._print_table(result, options["top"])

    def _print_table(self, result: dict[str, Any], top: int) -> None:
        for card in result["recommendations"]:
            self.stdout.write(f"{card['title']}: {card['why']}")
        rows = [r for r in result["options"] if r.get("rank")][:top]
        self.stdout.write("  ".join(f"{label:>14}" for label in TABLE_COLUMNS.values()))
        for row in rows:
            cells = [_cell(row.get(key)) for key in TABLE_COLUMNS]
            self.stdout.write("  ".join(f"{cell:>14}" for cell in cells))


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:,.3f}" if abs(value) < 10 else f"{value:,.0f}"
    return str(value)
