"""Turn a stored plan document into what the result page shows (no requests, no ORM)."""

import functools
import math
from collections.abc import Callable
from functools import cached_property
from typing import Any

import plotly.io as pio
from django.utils.html import json_script
from django.utils.safestring import SafeString
from plotly.utils import PlotlyJSONEncoder

from planner.core.chart_sets import memory_title
from planner.core.cloud import HOURS_PER_MONTH
from planner.core.providers import rates_source
from planner.plans import charts
from planner.plans.core.fields import FIELDS_BY_NAME
from planner.plans.core.ranking import collapse_regions, intensity_text
from planner.reports.core.plan_levers import lever_summary
from planner.reports.core.plan_report import limits_words

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
    "miss_probability",
    "co2e_kg",
    "energy_kwh",
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
    ("goodput", "Failures & overhead", True),
    ("total", "Total", True),
    ("mfu", "MFU", False),
    ("headroom", "Memory headroom", False),
    ("miss", "P(miss deadline or budget)", True),
    ("energy", "Energy", False),
    ("co2e", "CO2e", True),
    ("throughput", "Calibration", True),
    ("price", "Price as of · source", False),
)


def assumption_rows(assumptions: dict[str, Any]) -> list[dict[str, Any]]:
    """Per provider: storage $/GB-month, egress $/GB, where they come from, spot
    interruptions % per month."""
    hazards = assumptions.get("spot_hazard_per_instance_hour", {})
    providers = sorted(set(assumptions.get("storage_usd_per_gb_month", {})) | set(hazards))
    rows = []
    for provider in providers:
        storage = assumptions.get("storage_usd_per_gb_month", {}).get(provider)
        egress = assumptions.get("egress_usd_per_gb", {}).get(provider)
        rows.append({
            "provider": provider, "storage_usd_per_gb_month": storage,
            "egress_usd_per_gb": egress,
            "rates_note": rates_source(provider, storage_usd_per_gb_month=storage,
                                       egress_usd_per_gb=egress),
            "spot_pct_per_month": (1 - math.exp(-hazards[provider] * HOURS_PER_MONTH)) * 100
            if provider in hazards else None,
        })
    return rows


def sort_order(raw: str) -> str:
    """The table's sort from the query: a known key, "-" first for descending, else "rank"
    (one spelling per order, so each order is cached once)."""
    key = raw.lstrip("-")
    if key not in SORT_KEYS:
        return "rank"
    return f"-{key}" if raw.startswith("-") else key


@functools.cache
def figure_template_script() -> SafeString:
    """The figures' Plotly template (plotly_white), once per page: figures.js applies it to
    every figure that has none, instead of repeating ~7 KB in each."""
    template = pio.templates["plotly_white"].to_plotly_json()
    return json_script(template, "plotly-template", encoder=PlotlyJSONEncoder)


def figures_json(document: dict[str, Any]) -> list[dict[str, Any]]:
    """The plan's Plotly figures as plain JSON without a template (the page ships one for
    all), built from the stored result when a page is shown (the rendered fragment is cached,
    so once per plan and page)."""
    options = document["options"]
    figures = [charts.pareto_figure(options), charts.cost_breakdown_figure(options),
               charts.scaling_figure(document["scaling"])]
    if any(o.get("co2e_kg") is not None for o in options):
        figures.append(charts.carbon_figure(options, document["recommendations"]))
    if document.get("chosen_memory"):
        figures.append(charts.memory_figure(document["chosen_memory"], "per GPU",
                                            memory_title(document)))
    encoded = [figure.to_plotly_json() for figure in figures]
    for figure in encoded:
        figure["layout"].pop("template", None)
    return encoded


def _intensity(option: dict[str, Any]) -> str:
    """The grid intensity with the digits that make the card's kWh × PUE × intensity come to
    its CO2e ("" without carbon data)."""
    basis = option.get("carbon_basis") or {}
    if option.get("co2e_kg") is None or not basis:
        return ""
    return intensity_text(float(option["energy_kwh"]), float(basis["pue"]),
                          float(basis["g_co2e_per_kwh"]))


def _sorted_rows(options: list[dict[str, Any]], sort: str) -> list[dict[str, Any]]:
    feasible = [o for o in options if not o["infeasible_reason"]]
    sort = sort_order(sort)
    key = sort.lstrip("-")
    rows = sorted(
        feasible, key=lambda o: (o.get(key) is None, o.get(key) or 0), reverse=sort.startswith("-")
    )
    return collapse_regions(rows)[:TABLE_ROWS]


class PlanView:
    """What the result page shows of a plan document. Each part is built when the template
    first asks for it, so a cached page fragment loads and builds nothing: the figures don't
    depend on the sort order, the table does."""

    columns = TABLE_COLUMNS

    def __init__(self, load_document: Callable[[], dict[str, Any]], *, sort: str = "rank"
                 ) -> None:
        self._load, self.sort = load_document, sort

    @cached_property
    def _document(self) -> dict[str, Any]:
        return self._load()

    @cached_property
    def has_options(self) -> bool:
        """A plan to show (a done plan without one, e.g. nothing stored, shows no result)."""
        return "options" in self._document

    @cached_property
    def no_fit(self) -> dict[str, Any] | None:
        """A stored plan nothing fits: {field, message}; None for a plan."""
        found: dict[str, Any] | None = self._document.get("no_fit")
        return found

    @cached_property
    def cards(self) -> list[dict[str, Any]]:
        by_index = {o["row_index"]: o for o in self._document["options"]}
        return [{**card, "option": by_index[card["row_index"]],
                 "intensity": _intensity(by_index[card["row_index"]])}
                for card in self._document["recommendations"]]

    @property
    def goodput_profile(self) -> dict[str, Any] | None:
        """The plan's goodput profile (code, label, meaning, sources); None for older plans."""
        found = self._document.get("goodput_profile")
        return found if isinstance(found, dict) else None

    @property
    def decision_rule(self) -> str:
        """The plan's decision rule in words ("" for plans stored before it was stated)."""
        return str(self._document.get("decision_rule") or "")

    @property
    def n_acceptable(self) -> int | None:
        found = self._document.get("n_acceptable")
        return None if found is None else int(found)

    @property
    def has_feasible(self) -> bool:
        """Any option meets the limits: without one there is nothing to chart or export."""
        return bool(self._document.get("n_feasible"))

    @property
    def tradeoff(self) -> str:
        """The lowest-risk card's price against the cheapest's ("" for older plans)."""
        return str(self._document.get("tradeoff") or "")

    @cached_property
    def rows(self) -> list[dict[str, Any]]:
        return _sorted_rows(self._document["options"], self.sort)

    @cached_property
    def infeasible(self) -> dict[str, int]:
        return {k: v for k, v in self._document.get("infeasible", {}).items() if v}

    @cached_property
    def figures(self) -> list[SafeString]:
        return [json_script(figure, f"plan-figure-{i}", encoder=PlotlyJSONEncoder)
                for i, figure in enumerate(figures_json(self._document))]

    @property
    def figure_template(self) -> SafeString:
        return figure_template_script()

    @property
    def limits_words(self) -> str:
        """"deadline", "budget", "deadline or budget", or "" (nothing can be missed): what the
        table's chance of missing counts, the combined chance the decision rule reads."""
        return limits_words(self._document).removeprefix("the ")

    @property
    def miss_threshold_pct(self) -> float:
        return float(self._document.get("miss_threshold_pct", 10.0))

    @cached_property
    def n_options(self) -> int:
        return int(self._document["n_options"])

    @cached_property
    def n_feasible(self) -> int:
        return int(self._document["n_feasible"])

    @cached_property
    def assumptions(self) -> dict[str, Any]:
        found: dict[str, Any] = self._document.get("assumptions", {})
        return found

    @cached_property
    def assumption_rows(self) -> list[dict[str, Any]]:
        return assumption_rows(self.assumptions)

    @cached_property
    def prices(self) -> dict[str, Any]:
        found: dict[str, Any] = self._document.get("prices", {})
        return found

    @cached_property
    def skipped_prices(self) -> list[dict[str, Any]]:
        """Prices the plan could not use (not above 0 USD/h), each with why."""
        skipped: list[dict[str, Any]] = self._document.get("skipped_prices", [])
        return skipped

    @property
    def size_defaults(self) -> dict[str, str]:
        found: dict[str, str] = self._document.get("size_defaults", {})
        return found

    @cached_property
    def carbon(self) -> dict[str, Any]:
        """The plan's carbon accounting, what its energy counts and its sources ({} for a plan
        made before carbon was added)."""
        found: dict[str, Any] = self._document.get("carbon", {})
        return found

    @property
    def calibration_used(self) -> str:
        """Which calibration predicted the plan, in words ("" for a plan stored before)."""
        return str(self._document.get("calibration_used") or "")

    @cached_property
    def goodput_assumptions(self) -> dict[str, Any]:
        """Whole-run goodput inputs used: name -> {value (plan-field unit), is_default}."""
        found: dict[str, Any] = self._document.get("goodput_assumptions", {})
        return found

    @cached_property
    def goodput_rows(self) -> list[dict[str, Any]]:
        """The goodput assumptions in words: the plan form's label and unit for each."""
        rows = []
        for name, item in self.goodput_assumptions.items():
            field = FIELDS_BY_NAME.get(name)
            rows.append({"label": field.label if field else name.replace("_", " "),
                         "unit": field.unit if field else "", **item})
        return rows

    @cached_property
    def run_defaults(self) -> list[str]:
        """The sequence-length and batch defaults that filled blanks, in words."""
        found: list[str] = self._document.get("run_defaults", [])
        return found

    @cached_property
    def levers(self) -> dict[str, Any] | None:
        """The plan's pick's storage plan and power cap (the report shows the same)."""
        return lever_summary(self._document)

    @cached_property
    def no_option(self) -> str:
        """Why nothing is recommended (plans stored before it was kept: the old words)."""
        return str(self._document.get("no_option") or "No option meets the deadline and budget")

    @cached_property
    def what_would_work(self) -> dict[str, Any] | None:
        found: dict[str, Any] | None = self._document.get("what_would_work")
        return found


def plan_view(document: dict[str, Any], *, sort: str = "rank") -> PlanView:
    """The page's view of a plan document at hand (a what-if)."""
    return PlanView(lambda: document, sort=sort_order(sort))
