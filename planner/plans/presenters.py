"""Turn a stored plan document into what the result page shows (no requests, no ORM)."""

import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.utils.html import json_script
from django.utils.safestring import SafeString

from planner.core.cloud import HOURS_PER_MONTH
from planner.plans import charts
from planner.plans.core.ranking import collapse_regions

SORT_KEYS = {
    "rank",
    "time_to_train_hours",
    "total_usd",
    "compute_usd",
    "mfu",
    "gpus",
    "usd_per_hour",
    "memory_headroom_gib",
    "deadline_miss_probability",
}
TABLE_ROWS = 50

# The results table's columns: (key, header, shown by default). The default set fits a
# 1366 px screen; the column chooser on the page shows the rest (static/css/app.css hides a
# column whose box is unticked, so each key has a rule there).
TABLE_COLUMNS: tuple[tuple[str, str, bool], ...] = (
    ("region", "Region", True),
    ("instance", "Instance type", True),
    ("gpus", "GPUs", True),
    ("nodes", "Nodes", True),
    ("layout", "Layout", False),
    ("purchase", "Purchase", True),
    ("time", "Time to train", True),
    ("compute", "Compute", False),
    ("storage", "Storage", False),
    ("egress", "Egress", False),
    ("total", "Total", True),
    ("mfu", "MFU", False),
    ("headroom", "Memory headroom", False),
    ("miss", "P(miss deadline)", True),
    ("throughput", "Throughput", True),
    ("price", "Price as of · source", False),
)




def assumption_rows(assumptions: dict[str, Any]) -> list[dict[str, Any]]:
    """Per provider: storage $/GB-month, egress $/GB, spot interruptions % per month."""
    hazards = assumptions.get("spot_hazard_per_instance_hour", {})
    providers = sorted(set(assumptions.get("storage_usd_per_gb_month", {})) | set(hazards))
    return [{
        "provider": provider,
        "storage_usd_per_gb_month": assumptions.get("storage_usd_per_gb_month", {}).get(provider),
        "egress_usd_per_gb": assumptions.get("egress_usd_per_gb", {}).get(provider),
        "spot_pct_per_month": (1 - math.exp(-hazards[provider] * HOURS_PER_MONTH)) * 100
        if provider in hazards else None,
    } for provider in providers]


@dataclass(frozen=True)
class PlanView:
    cards: list[dict[str, Any]]
    rows: list[dict[str, Any]]
    infeasible: dict[str, int]
    figures: list[SafeString]
    n_options: int
    n_feasible: int
    assumptions: dict[str, Any]
    assumption_rows: list[dict[str, Any]]
    prices: dict[str, Any]
    size_defaults: dict[str, str]
    what_would_work: dict[str, Any] | None
    columns: tuple[tuple[str, str, bool], ...] = TABLE_COLUMNS


def figures_json(document: dict[str, Any]) -> list[dict[str, Any]]:
    """The plan's Plotly figures as plain JSON, built from the stored result when a page is
    shown (the rendered fragment is cached, so once per plan and page)."""
    options = document["options"]
    figures = [charts.pareto_figure(options), charts.cost_breakdown_figure(options),
               charts.scaling_figure(document["scaling"])]
    if document.get("chosen_memory"):
        figures.append(charts.memory_figure(document["chosen_memory"], "per GPU"))
    return [json.loads(figure.to_json()) for figure in figures]


def _figure_scripts(document: dict[str, Any]) -> list[SafeString]:
    figures = figures_json(document)
    return [json_script(figure, f"plan-figure-{i}") for i, figure in enumerate(figures)]


def _sorted_rows(options: list[dict[str, Any]], sort: str) -> list[dict[str, Any]]:
    feasible = [o for o in options if not o["infeasible_reason"]]
    key = sort.lstrip("-")
    if key not in SORT_KEYS:
        key = "rank"
    rows = sorted(
        feasible, key=lambda o: (o.get(key) is None, o.get(key) or 0), reverse=sort.startswith("-")
    )
    return collapse_regions(rows)[:TABLE_ROWS]


def plan_view(document: dict[str, Any], *, sort: str = "rank") -> PlanView:
    options = document["options"]
    by_index = {o["row_index"]: o for o in options}
    cards = [
        {**card, "option": by_index[card["row_index"]]} for card in document["recommendations"]
    ]
    return PlanView(
        cards,
        _sorted_rows(options, sort),
        {k: v for k, v in document.get("infeasible", {}).items() if v},
        _figure_scripts(document),
        document["n_options"],
        document["n_feasible"],
        document.get("assumptions", {}),
        assumption_rows(document.get("assumptions", {})),
        document.get("prices", {}),
        document.get("size_defaults", {}),
        document.get("what_would_work"),
    )


class LazyPlanView:
    """Builds the PlanView only when the template asks (a cached page fragment never does)."""

    def __init__(self, load_document: Callable[[], dict[str, Any]], sort: str) -> None:
        self._load, self._sort = load_document, sort
        self._view: PlanView | None = None

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        if self._view is None:
            self._view = plan_view(self._load(), sort=self._sort)
        return getattr(self._view, name)
