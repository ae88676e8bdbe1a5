"""What the plan list and the compare page show: 2-4 plans' inputs side by side with the
differences marked, the outcome of each plan's top pick, and a cost-vs-time chart.

Presentation only: it reads stored plan rows and documents, never requests or the ORM.
"""

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import plotly.graph_objects as go
from django.utils.html import json_script
from django.utils.safestring import SafeString
from plotly.utils import PlotlyJSONEncoder

from planner.core.chart_sets import pick_position
from planner.core.formatting import (
    LABELS,
    count,
    duration,
    label,
    large_count,
    number,
    percent,
    typed_number,
    usd,
)
from planner.plans.core.fields import SCENARIO_FIELDS, ScenarioField
from planner.plans.models import PlanScenario
from simulator.core import PRESETS

MIN_PLANS, MAX_PLANS = 2, 4
BLANK = "—"


@dataclass(frozen=True)
class CompareRow:
    label: str
    values: list[str]

    @property
    def is_different(self) -> bool:
        return len(set(self.values)) > 1


@dataclass(frozen=True)
class Comparison:
    scenarios: list[PlanScenario]
    inputs: list[CompareRow]
    outcomes: list[CompareRow]
    figure: SafeString | None
    notes: tuple[str, ...] = ()

    @property
    def n_different(self) -> int:
        return sum(row.is_different for row in self.inputs)


def _input_text(field: ScenarioField, value: Any) -> str:
    if value in (None, "", [], {}):
        return BLANK
    if field.name == "workload":
        return PRESETS[value].name if value in PRESETS else str(value)
    if field.kind in ("number", "integer"):
        unit = field.unit
        if float(value) == 1 and unit.endswith("s") and unit.isalpha():
            unit = unit[:-1]  # 1 month, 1 node
        return f"{typed_number(float(value))}{f' {unit}' if unit else ''}"
    if field.kind == "flag":
        return "yes" if value else "no"
    if isinstance(value, dict):
        return ", ".join(f"{k}={v:g}" for k, v in value.items())
    if isinstance(value, list):
        return ", ".join(LABELS.get(str(v), str(v)) for v in value)
    return str(value)


def _inputs(scenarios: list[PlanScenario]) -> list[CompareRow]:
    """One row per input any of the plans sets (the layout read from its stored object)."""
    rows = []
    for field in SCENARIO_FIELDS:
        if field.name == "name":
            continue
        values = [s.inputs.get("layout", {}).get(field.name) if field.is_layout
                  else s.inputs.get(field.name) for s in scenarios]
        texts = [_input_text(field, v) for v in values]
        if any(text != BLANK for text in texts):
            rows.append(CompareRow(field.label_with_unit, texts))
    return rows


def top_pick(scenario: PlanScenario) -> dict[str, Any] | None:
    """The plan's pick (the cheapest acceptable option's card, else the lowest-risk card; see
    planner.core.chart_sets.pick_position) with its option row, or None (not done, or none)."""
    document = scenario.result or {}
    recommendations = document.get("recommendations") or []
    if scenario.status != PlanScenario.Status.DONE or not recommendations:
        return None
    by_index = {o["row_index"]: o for o in document["options"]}
    card = recommendations[pick_position([c["key"] for c in recommendations]) or 0]
    return {"title": card["title"], **by_index[card["row_index"]]}


def _outcome_texts(scenario: PlanScenario, pick: dict[str, Any] | None) -> list[str]:
    if pick is None:
        no_fit = (scenario.result or {}).get("no_fit") if scenario.status == "done" else None
        if no_fit:
            reason = f"No configuration fits: {no_fit['message']}"
        elif scenario.status == "done":
            reason = "no option meets the limits"
        else:
            reason = scenario.get_status_display()
        return [reason, BLANK, BLANK, BLANK, BLANK, BLANK, BLANK]
    purchase = LABELS.get(pick["purchase_option"], pick["purchase_option"])
    return [
        f"{pick['title']}: {label(pick['provider'])} {pick['region']}, {pick['instance_type']}"
        f" × {count(pick['nodes'])} ({purchase})",
        f"{usd(pick['total_usd'])} ({pick['basis']} price, as of {pick['as_of']})",
        f"{duration(pick['time_to_train_hours'])} ({pick['calibration_status']}"
        + (f"; {pick['rate_note']})" if pick.get("rate_note") else ")"),
        f"{count(pick['gpus'])} × {pick['gpu']}",
        _miss_text(pick) if _has_limit(scenario) else NO_LIMIT,
        _emissions_text(pick),
        _lowest_carbon_text(scenario),
    ]


# A plan with neither deadline nor budget has nothing to miss: the plan page says n/a too.
NO_LIMIT = "n/a (no deadline or budget)"


def _has_limit(scenario: PlanScenario) -> bool:
    inputs = scenario.inputs or {}
    return any(inputs.get(k) for k in ("deadline", "deadline_days", "budget_usd"))


def _miss_text(pick: dict[str, Any]) -> str:
    """The pick's chance of missing its deadline or budget (one of them when only one is set),
    and "not acceptable" when it is above the plan's threshold."""
    chance = pick.get("miss_probability")
    if chance is None:
        return BLANK
    return percent(chance) + (" (not acceptable)" if pick.get("acceptable") is False else "")


def _deadline_hours(scenario: PlanScenario) -> float | None:
    constraints = (scenario.result or {}).get("constraints") or {}
    hours = constraints.get("deadline_hours")
    return float(hours) if hours else None


def tighter_deadline_notes(scenarios: list[PlanScenario],
                           picks: list[dict[str, Any] | None]) -> list[str]:
    """Why a plan with a tighter deadline shows a cheaper pick than one with a looser one:
    its pick is not acceptable (say its chance), or it differs in another input."""
    notes = []
    for a, pick_a in zip(scenarios, picks, strict=True):
        for b, pick_b in zip(scenarios, picks, strict=True):
            tight, loose = _deadline_hours(a), _deadline_hours(b)
            if (pick_a is None or pick_b is None or tight is None or loose is None
                    or not tight < loose or pick_a["total_usd"] >= pick_b["total_usd"]):
                continue
            if pick_a.get("acceptable") is False:
                why = (f"its pick is not acceptable: {percent(pick_a['miss_probability'])} "
                       f"chance of missing its limits, so it is the closest to them, not a "
                       f"pick that meets them")
            else:
                why = "the plans differ in other inputs too (see the marked rows)"
            saving = usd(pick_b["total_usd"] - pick_a["total_usd"])
            notes.append(f"“{a.name}” has the tighter deadline ({duration(tight)} against "
                         f"{duration(loose)}) yet costs {saving} less than “{b.name}”: {why}.")
    return notes


def _emissions_text(option: dict[str, Any]) -> str:
    """"1,234 kg CO2e (location-based, 2024)", or why there is none."""
    if option.get("co2e_kg") is None:
        return str(option.get("carbon_note") or "no carbon data")
    basis = option.get("carbon_basis") or {}
    return (f"{count(option['co2e_kg'])} kg CO2e ({basis.get('accounting')}-based, "
            f"{basis.get('source')}, {basis.get('year')})")


def _lowest_carbon_text(scenario: PlanScenario) -> str:
    """The plan's Lowest carbon pick: where, its emissions and its cost (older plans: —)."""
    document = scenario.result or {}
    card = next((c for c in document.get("recommendations") or []
                 if c["key"] == "lowest_carbon"), None)
    if card is None:
        return BLANK
    option = next(o for o in document["options"] if o["row_index"] == card["row_index"])
    return (f"{label(option['provider'])} {option['region']}, {option['instance_type']} × "
            f"{count(option['nodes'])}: {_emissions_text(option)}, {usd(option['total_usd'])}")


def _figure(scenarios: list[PlanScenario], picks: list[dict[str, Any] | None]) -> go.Figure:
    figure = go.Figure()
    for scenario, pick in zip(scenarios, picks, strict=True):
        if pick is None:
            continue
        figure.add_trace(go.Scatter(
            x=[pick["time_to_train_hours"] / 24], y=[pick["total_usd"]], name=scenario.name,
            mode="markers", text=[scenario.name],
            marker={"size": 14}, hovertemplate="%{x:.1f} days, $%{y:,.0f}<extra>%{text}</extra>",
        ))
    figure.update_layout(
        title="Each plan's pick: total cost against time to train",
        xaxis_title="Time to train (days)", yaxis_title="Total cost (USD)",
        yaxis_tickprefix="$", yaxis_tickformat=",.0f", height=420, margin={"t": 60},
        legend={"orientation": "h", "y": -0.25},
    )
    return figure


def plan_comparison(scenarios: list[PlanScenario]) -> Comparison:
    picks = [top_pick(s) for s in scenarios]
    texts = [_outcome_texts(s, p) for s, p in zip(scenarios, picks, strict=True)]
    labels = ["Pick", "Total cost", "Time to train", "GPUs",
              "Chance of missing the deadline or budget", "Emissions of the pick",
              "Lowest carbon"]
    outcomes = [CompareRow(label, [t[i] for t in texts]) for i, label in enumerate(labels)]
    figure = None
    if any(picks):
        figure = json_script(_figure(scenarios, picks).to_plotly_json(), "compare-figure",
                             encoder=PlotlyJSONEncoder)
    notes = tuple(tighter_deadline_notes(scenarios, picks))
    return Comparison(scenarios, _inputs(scenarios), outcomes, figure, notes)


def plan_list_rows(scenarios: Iterable[PlanScenario]) -> list[dict[str, Any]]:
    """The plan list: each plan with its model and goal (results stay unloaded)."""
    rows = []
    for scenario in scenarios:
        inputs = scenario.inputs
        model = inputs.get("workload")
        # as the plan's name and page say it: '1.0 T tokens', not '1e12 tokens'
        goal = next((large_count(inputs[k], k) if k != "epochs" else f"{number(inputs[k])} {k}"
                     for k in ("tokens", "samples", "epochs") if inputs.get(k)), BLANK)
        rows.append({"scenario": scenario, "goal": goal,
                     "model": PRESETS[model].name if model in PRESETS else "custom model",
                     **_list_outcome(scenario)})
    return rows


def _list_outcome(scenario: PlanScenario) -> dict[str, str]:
    """Cost, time, miss chance and feasibility of the plan's first card, from the small
    `pick` and `n_feasible` annotations (a plan from before them shows blanks)."""
    pick = getattr(scenario, "pick", None)
    n_feasible = getattr(scenario, "n_feasible", None)
    if scenario.status != PlanScenario.Status.DONE:
        feasible = scenario.get_status_display()
    elif n_feasible is None:
        feasible = BLANK
    else:
        feasible = (f"yes: {count(n_feasible)} options" if n_feasible
                    else "no option meets the limits")
    if not isinstance(pick, dict):
        return {"cost": BLANK, "time": BLANK, "miss": BLANK, "feasible": feasible}
    return {"cost": usd(pick.get("total_usd")), "time": duration(pick.get("time_to_train_hours")),
            "miss": percent(pick.get("miss_probability")) if _has_limit(scenario) else "n/a",
            "feasible": feasible}


def whatif_delta(base: PlanScenario, document: dict[str, Any]) -> str:
    """A what-if's first card against the saved plan it came from: "Against your saved plan
    “x”: +$12,140 total, −3.0 days, miss chance 21.0% → 0.3%." ("" without both picks)."""
    before = (base.result or {}).get("pick")
    after = document.get("pick")
    if not isinstance(before, dict) or not isinstance(after, dict):
        return ""
    extra = float(after["total_usd"]) - float(before["total_usd"])
    hours = float(after["time_to_train_hours"]) - float(before["time_to_train_hours"])
    sign = "+" if extra >= 0 else "−"
    faster = "+" if hours >= 0 else "−"
    chances = [percent(pick.get("miss_probability")) for pick in (before, after)]
    return (f"Against your saved plan “{base.name}”: {sign}{usd(abs(extra))} total, "
            f"{faster}{duration(abs(hours))} to train, miss chance {chances[0]} → {chances[1]}.")
