"""The report of a finished plan, from its stored result document (planner.plans).

The document is plain JSON (PlanResult.to_dict plus prices, scaling and size defaults); keys
are read defensively so an older stored plan still gives a report.
"""

from __future__ import annotations

from collections import Counter
from datetime import date
from typing import Any

from planner.core.chart_sets import pick_position
from planner.core.cloud import is_stale_row, stale_rule_text
from planner.core.formatting import (
    count,
    label,
    large_count,
    layout_label,
    overhead_text,
    percent,
    usd,
)
from planner.core.providers import rates_source
from planner.core.purchase_options import OPTIONS_BY_CODE
from planner.reports.core.model import Column, Figure, Finding, Report, Table, as_number
from planner.reports.core.plan_charts import (
    as_days,
    carbon_chart,
    cost_chart,
    memory_chart,
    pareto_chart,
    scaling_chart,
)
from planner.reports.core.plan_levers import lever_tables

# The plan's result columns, once: the report's tables (CSV, XLSX, PDF, HTML) and the `plan`
# command's terminal table (is_in_terminal) are built from this list.
_T = True  # is_in_terminal
OPTION_COLUMNS = (
    Column("rank", "Rank", is_in_terminal=_T),
    Column("provider", "Provider", is_in_terminal=_T),
    Column("region", "Region", is_in_terminal=_T),
    Column("instance_type", "Instance type", is_in_terminal=_T),
    Column("gpu", "GPU"),
    Column("gpus", "GPUs", "count", is_in_terminal=_T),
    Column("nodes", "Nodes", "count"),
    Column("layout", "Layout", is_printed=False),
    Column("purchase_option", "Purchase", is_in_terminal=_T),
    Column("payment_option", "Payment", is_printed=False),
    Column("usd_per_hour", "Price", "USD/instance-hour", is_printed=False, digits=2),
    Column("time_to_train_hours", "Time to train", "days", digits=1, is_in_terminal=_T),
    Column("time_p10_hours", "Time P10", "days", digits=1),
    Column("time_p90_hours", "Time P90", "days", digits=1),
    Column("compute_usd", "Compute", "USD", is_printed=False),
    Column("goodput", "Goodput", "%", digits=1, is_in_terminal=_T),
    # Numbers, not the page's "+51.0 % GPU-hours" line: a spreadsheet reads them as numbers.
    Column("failure_overhead_gpu_hours_pct", "Failures, restarts, checkpoints (modelled)",
           "% GPU-hours", is_printed=False, digits=1),
    Column("failure_overhead_usd", "Failures, restarts, checkpoints (modelled) cost", "USD",
           is_printed=False),
    Column("production_overhead_gpu_hours_pct", "Production overhead (goodput profile)",
           "% GPU-hours", is_printed=False, digits=1),
    Column("production_overhead_usd", "Production overhead (goodput profile) cost", "USD",
           is_printed=False),
    Column("storage_usd", "Storage", "USD", is_printed=False),
    Column("egress_usd", "Egress", "USD", is_printed=False),
    Column("total_usd", "Total", "USD", is_in_terminal=_T),
    Column("total_p90_usd", "Total P90", "USD", is_printed=False),
    Column("deadline_miss_probability", "P(miss deadline)", "%", is_printed=False, digits=1),
    # The chance the decision rule reads (planner.plans.core.decision), as the page's cards.
    Column("miss_probability", "P(miss deadline or budget)", "%", digits=1),
    Column("acceptable", "Acceptable"),
    Column("energy_kwh", "Energy", "kWh", is_printed=False),
    Column("co2e_kg", "CO2e", "kg CO2e", is_in_terminal=_T),
    Column("co2e_p10_kg", "CO2e P10", "kg CO2e", is_printed=False),
    Column("co2e_p90_kg", "CO2e P90", "kg CO2e", is_printed=False),
    Column("g_co2e_per_kwh", "Grid intensity", "gCO2e/kWh", is_printed=False),
    Column("pue", "PUE", "ratio", is_printed=False, digits=3),
    Column("carbon_note", "Carbon note", is_printed=False),
    Column("mfu", "MFU", "%", is_printed=False, digits=1, is_in_terminal=_T),
    Column("memory_headroom_gib", "Memory headroom", "GiB", is_printed=False, digits=1),
    Column("calibration_status", "Simulator calibration", is_in_terminal=_T),
    Column("rate_note", "Speed note", is_printed=False),
    Column("envelope_note", "Calibration envelope", is_printed=False),
    Column("envelope", "Outside the envelope on", is_printed=False),
    Column("basis", "Price basis", is_in_terminal=_T),
    Column("as_of", "Price as of"),
    Column("age_days", "Price age", "days", is_printed=False, is_in_terminal=_T),
    Column("source", "Price source", is_printed=False),
)
PERCENT_KEYS = ("deadline_miss_probability", "miss_probability", "mfu", "goodput")
INTEGER_KEYS = ("rank", "gpus", "nodes", "age_days")
# Durations stored in hours, shown in days like the plan page (one unit per table).
DAY_KEYS = ("time_to_train_hours", "time_p10_hours", "time_p90_hours")
# Codes shown in words ("on_demand" -> "On-demand", "aws" -> "AWS").
LABEL_KEYS = ("provider", "purchase_option", "payment_option")


def report_day(generated_at: str) -> date | None:
    """The date a report was generated on (its `generated_at`, ISO), None if unreadable."""
    try:
        return date.fromisoformat(generated_at[:10])
    except ValueError:
        return None


# Per provider, the day before which its prices are stale (pricing.selectors.stale_before).
StaleBefore = dict[str, str] | None


def stale_word(row: dict[str, Any], stale_before: StaleBefore, *,
               age: float | None = None, stale_days: int | None = None) -> str:
    """"stale" for a price row stale by planner.core.cloud.is_stale_row, else ""."""
    return "stale" if is_stale_row(row, stale_before, age_days=age, stale_days=stale_days) else ""


def stale_note(stale_days: int | None, stale_before: dict[str, str] | None) -> str:
    """The Sources note's stale rule ("" when no rule was given)."""
    if stale_before is not None and stale_days is not None:
        return stale_rule_text(stale_days)
    return "" if stale_days is None else f"stale: older than {stale_days} days"


def option_cell(option: dict[str, Any], key: str) -> Any:
    """One cell of OPTION_COLUMNS as every table shows it (codes in words, hours in days)."""
    if key == "layout":
        return layout_label(option)
    value = option.get(key)
    if key in LABEL_KEYS:
        return label(value) if value else value
    if key == "acceptable":
        return None if value is None else ("yes" if value else "no")
    if key in DAY_KEYS:
        return as_days(value)
    if key in PERCENT_KEYS:
        number = as_number(value)
        return None if number is None else number * 100
    if isinstance(value, str) or value is None:
        return value
    number = as_number(value)
    return round(number) if number is not None and key in INTEGER_KEYS else number


def ranked_options(document: dict[str, Any]) -> list[dict[str, Any]]:
    """The feasible options, best rank first (the plan page's table order)."""
    options = [o for o in document.get("options", []) if not o.get("infeasible_reason")]
    return sorted(options, key=lambda o: (as_number(o.get("rank")) is None,
                                          as_number(o.get("rank")) or 0))


def has_deadline(document: dict[str, Any]) -> bool:
    """A deadline was set: without one there is no chance of missing it to show."""
    return as_number((document.get("constraints") or {}).get("deadline_hours")) is not None


def limits_words(document: dict[str, Any]) -> str:
    """The limits the plan's decision rule reads: "the deadline", "the budget", "the deadline
    or budget", or "" when neither is set (nothing can be missed)."""
    constraints = document.get("constraints") or {}
    limits = [word for key, word in (("deadline_hours", "deadline"), ("budget_usd", "budget"))
              if as_number(constraints.get(key)) is not None]
    return f"the {' or '.join(limits)}" if limits else ""


def _miss_figures(document: dict[str, Any], best: dict[str, Any]) -> tuple[Figure, ...]:
    """The pick's combined chance of missing the limits set, the one the rule reads, and
    whether that makes it acceptable."""
    words = limits_words(document)
    if not words:
        return (Figure("Chance of missing the deadline or budget", "no deadline or budget set"),)
    chance = as_number(best.get("miss_probability", best.get("deadline_miss_probability")))
    figures = [Figure(f"Chance of missing {words}", None if chance is None else chance * 100,
                      "%", 1)]
    if best.get("acceptable") is not None:
        threshold = as_number(document.get("miss_threshold_pct"))
        allowed = "" if threshold is None else f" (at most {threshold:g}% allowed)"
        figures.append(Figure("Acceptable", ("yes" if best["acceptable"] else "no") + allowed))
    return tuple(figures)


def _options_table(options: list[dict[str, Any]], document: dict[str, Any]) -> Table:
    blank = set() if has_deadline(document) else {"deadline_miss_probability"}
    if not limits_words(document):
        blank.add("miss_probability")
    rows = tuple(tuple(None if c.key in blank else option_cell(o, c.key) for c in OPTION_COLUMNS)
                 for o in options)
    n_feasible = int(as_number(document.get("n_feasible")) or 0)
    n_options = int(as_number(document.get("n_options")) or 0)
    return Table("options", "Ranked configurations", "Options", OPTION_COLUMNS, rows,
                 note=f"The {count(len(options))} best of {count(n_feasible)} feasible options "
                      f"({count(n_options)} considered), cheapest first")


def _summary(document: dict[str, Any], best: dict[str, Any] | None) -> tuple[Figure, ...]:
    prices = document.get("prices") or {}
    figures = [
        Figure("Feasible options", as_number(document.get("n_feasible")), "options"),
        Figure("Options considered", as_number(document.get("n_options")), "options"),
    ]
    if best is not None:
        goodput = as_number(best.get("goodput"))
        figures = [
            Figure("Recommended", f"{best.get('instance_type')} × {count(best.get('nodes'))} "
                   f"({count(best.get('gpus'))} × {best.get('gpu')}), "
                   f"{label(best.get('purchase_option'))}, {label(best.get('provider'))} "
                   f"{best.get('region')}"),
            Figure("Expected total cost", as_number(best.get("total_usd")), "USD"),
            Figure("Expected time to train", as_days(best.get("time_to_train_hours")), "days", 1),
            Figure("Time P10", as_days(best.get("time_p10_hours")), "days", 1),
            Figure("Time P90", as_days(best.get("time_p90_hours")), "days", 1),
            *_miss_figures(document, best),
            Figure("Expected failures, restarts and overhead",
                   overhead_text(best.get("overhead_gpu_hours_pct"), best.get("overhead_usd"))
                   + ("" if goodput is None else f" (goodput {percent(goodput)})")),
            Figure("of which failures, restarts and checkpoints (modelled)",
                   as_number(best.get("failure_overhead_gpu_hours_pct")), "% GPU-hours", 1),
            Figure("of which production overhead (goodput profile: "
                   f"{(document.get('goodput_profile') or {}).get('label', 'typical')})",
                   as_number(best.get("production_overhead_gpu_hours_pct")), "% GPU-hours", 1),
            Figure("Calibration envelope", str(best.get("envelope_note")
                                               or "inside the calibration envelope")),
            Figure("Expected emissions", as_number(best.get("co2e_kg")), "kg CO2e")
            if as_number(best.get("co2e_kg")) is not None
            else Figure("Expected emissions", str(best.get("carbon_note") or "no carbon data")),
            Figure("Simulator calibration", str(best.get("calibration_status", "unknown"))
                   + (f" (predicted with {document['calibration_used']})"
                      if document.get("calibration_used") else "")),
            Figure("Price basis", f"{best.get('basis')}, as of {best.get('as_of')} "
                   f"({count(best.get('age_days'))} days old)"),
            *figures,
        ]
    if prices.get("oldest"):
        stale = (f"; {count(prices['n_stale'])} of the feasible options use a stale price"
                 if prices.get("n_stale") else "")
        figures.append(Figure("Prices dated",
                              f"{prices['oldest']} to {prices.get('newest')}{stale}"))
    return tuple(figures)


def _findings(document: dict[str, Any]) -> tuple[Finding, ...]:
    by_index = {o.get("row_index"): o for o in document.get("options", [])}
    findings = []
    for card in document.get("recommendations", []):
        option = by_index.get(card.get("row_index"), {})
        choice = (f"{label(option.get('provider'))} {option.get('region')} · "
                  f"{option.get('instance_type')} × {count(option.get('nodes'))} · "
                  f"{label(option.get('purchase_option'))}")
        findings.append(Finding(str(card.get("title", card.get("key", ""))), choice,
                                str(card.get("why", ""))))
    return tuple(findings)


def _sources_table(options: list[dict[str, Any]], stale_days: int | None,
                   stale_before: dict[str, str] | None = None) -> Table:
    """Each price source with its basis, date, age when planned and whether that age made it
    stale (older than the site's PRICE_STALE_DAYS, as the plan page flags it)."""
    counts = Counter((str(o.get("source", "")), str(o.get("basis", "")), str(o.get("as_of", "")),
                      as_number(o.get("age_days")), str(o.get("provider", ""))) for o in options)
    columns = (Column("source", "Price source"), Column("basis", "Basis"),
               Column("as_of", "As of"), Column("age_days", "Age when planned", "days"),
               Column("stale", "Stale"), Column("n_options", "Options priced", "count"))

    rows = tuple((s, b, a, age, stale_word({"as_of": a, "provider": p}, stale_before, age=age,
                                           stale_days=stale_days), n)
                 for (s, b, a, age, p), n in
                 sorted(counts.items(), key=lambda item: (item[0][2], item[0][0])))
    note = ("listed: the provider's price list; derived: computed from a listed price "
            "and a published discount; estimated: left out unless allowed")
    if stale_days is not None:
        note += f"; {stale_note(stale_days, stale_before)} when the plan was made"
    return Table("sources", "Price sources", "Sources", columns, rows, note=note)


def _stale_days(document: dict[str, Any]) -> int | None:
    days = as_number((document.get("prices") or {}).get("stale_days"))
    return None if days is None else int(days)


ASSUMPTION_UNITS = {
    "dataset_gb": "GB", "checkpoint_gb": "GB", "checkpoints_kept": "count",
    "storage_months": "months", "egress_gb": "GB", "checkpoint_write_gbytes_per_s": "GB/s",
    "checkpoint_max_aggregate_gbytes_per_s": "GB/s", "restart_overhead_hours": "hours",
    "commitment_reuse_fraction": "fraction of term", "monte_carlo_samples": "samples",
    "max_total_samples": "samples", "seed": "",
}
# Assumptions the scenario field table does not word (report_from_plan's `labels` does the rest).
ASSUMPTION_LABELS = {
    "checkpoints_kept": "Checkpoints kept", "monte_carlo_samples": "Spot simulation runs",
    "checkpoint_max_aggregate_gbytes_per_s": "Checkpoint write speed, whole cluster",
    "max_total_samples": "Largest simulated sample count", "seed": "Random seed",
    "deadline_hours": "Deadline", "budget_usd": "Budget", "horizon_hours": "Practical horizon",
    "max_co2e_kg": "Emissions limit",
}
PER_PROVIDER = (("storage_usd_per_gb_month", "Storage", "USD/GB-month"),
                ("egress_usd_per_gb", "Egress", "USD/GB"),
                ("spot_hazard_per_instance_hour", "Spot interruptions",
                 "interruptions per instance-hour"))
RATE_KEYS = ("storage_usd_per_gb_month", "egress_usd_per_gb")  # priced rates with a source
AUTO_DIGITS = -1  # a column whose numbers keep the decimals they need (planner.reports.core.text)


def _words(name: str, labels: dict[str, str]) -> str:
    return labels.get(name) or ASSUMPTION_LABELS.get(name) or name.replace("_", " ").capitalize()


def _assumptions_table(document: dict[str, Any], labels: dict[str, str]) -> Table:
    assumptions = document.get("assumptions") or {}
    rows: list[tuple[Any, ...]] = [
        (_words(name, labels), "all", _significant(as_number(assumptions[name])), unit, "")
        for name, unit in ASSUMPTION_UNITS.items() if name in assumptions
    ]
    for key, name, unit in PER_PROVIDER:
        for provider, value in sorted((assumptions.get(key) or {}).items()):
            rows.append((name, label(provider), _significant(as_number(value)), unit,
                         rates_source(provider, **{key: as_number(value)})
                         if key in RATE_KEYS else ""))
    profile = document.get("goodput_profile") or {}
    if profile:
        rows.append(("Goodput profile", "all", str(profile.get("label")), "",
                     "; ".join([str(profile.get("meaning")), *profile.get("sources", [])])))
    constraints = document.get("constraints") or {}
    for key, unit, scale in (("deadline_hours", "days", 24.0), ("budget_usd", "USD", 1.0),
                             ("horizon_hours", "days", 24.0), ("max_co2e_kg", "kg CO2e", 1.0)):
        value = as_number(constraints.get(key))
        if value is not None:
            rows.append((_words(key, labels), "all", _significant(value / scale), unit, ""))
    columns = (Column("name", "Assumption"), Column("provider", "Provider"),
               Column("value", "Value", digits=AUTO_DIGITS), Column("unit", "Unit"),
               Column("source", "Source"))
    return Table("assumptions", "Assumptions", "Assumptions", columns, tuple(rows))


def _significant(value: float | None, digits: int = 4) -> float | None:
    """Rounded to `digits` significant figures: 94.4, 0.000264, 2,000 (not 94.400000)."""
    if value is None or value == 0:
        return value
    return float(f"{value:.{digits}g}")


# Inputs whose values are codes with words (on_demand: On-demand); the others (GPU, model
# preset and region codes) print as typed, the way the form and the CLI take them.
WORDED_INPUTS = ("providers", "purchase_options", "payment_options", "carbon_accounting")


def _input_text(name: str, value: Any, unit: str) -> str:
    """An input's value in words with its unit: "1.0 T tokens", "30 days from today"."""
    if isinstance(value, list | tuple):
        return ", ".join(label(str(v)) if name in WORDED_INPUTS else str(v) for v in value)
    if isinstance(value, dict):
        return ", ".join(f"{label(str(k))} {v:g}" if isinstance(v, int | float) else
                         f"{label(str(k))} {v}" for k, v in sorted(value.items()))
    if isinstance(value, bool):
        return "yes" if value else "no"
    number = as_number(value)
    if number is None:
        return label(str(value)) if name in WORDED_INPUTS else str(value)
    if unit == "USD":
        return usd(number)
    text = large_count(number) if abs(number) >= 1e6 else f"{_significant(number):,g}"
    return f"{text} {unit}".strip()


def _inputs_table(inputs: dict[str, Any], labels: dict[str, str], units: dict[str, str]
                  ) -> Table:
    flat = {k: v for k, v in inputs.items() if k != "layout" and v not in (None, "", [])}
    if not any(OPTIONS_BY_CODE[o].is_commitment for o in inputs.get("purchase_options") or []
               if o in OPTIONS_BY_CODE):
        flat.pop("payment_options", None)  # no commitment chosen: no payment to state
    flat.update(inputs.get("layout") or {})
    rows = tuple((_words(name, labels), _input_text(name, value, units.get(name, "")))
                 for name, value in sorted(flat.items(), key=lambda kv: _words(kv[0], labels)))
    return Table("inputs", "Scenario inputs", "Inputs",
                 (Column("field", "Input"), Column("value", "Value")), rows)


def _caveats(document: dict[str, Any], best: dict[str, Any] | None) -> tuple[str, ...]:
    caveats = []
    prices = document.get("prices") or {}
    if prices.get("is_mixed"):
        caveats.append(f"Prices compare snapshots taken {prices.get('spread_days')} days apart "
                       f"({prices.get('oldest')} to {prices.get('newest')}).")
    if prices.get("n_stale"):
        caveats.append(f"{count(prices['n_stale'])} option(s) use a stale price ("
                       f"{stale_note(_stale_days(document), prices.get('stale_before'))}); "
                       "check current prices before buying.")
    if best is not None and best.get("calibration_status") != "calibrated":
        caveats.append(f"The recommended option's throughput is {best.get('calibration_status')}: "
                       "no measured run of that GPU and precision at a similar scale, so its "
                       "P10-P90 band is widened.")
    if best is not None and best.get("rate_note"):
        caveats.append(f"The recommended option's GPU is {best['rate_note']}.")
    left_out = {k: v for k, v in (document.get("infeasible") or {}).items() if v}
    if left_out:
        caveats.append("Left out: " + "; ".join(f"{count(v)} {k}" for k, v in left_out.items())
                       + ".")
    if best is None:
        caveats.append(_nothing_works(document.get("what_would_work") or {},
                                      document.get("no_option")))
    carbon = document.get("carbon") or {}
    if carbon:
        sources = ", ".join(f"{s.get('source')} (as of {s.get('as_of')})"
                            for s in carbon.get("sources", []))
        caveats.append(f"Emissions are {carbon.get('accounting')}-based: "
                       f"{carbon.get('energy_counts')} Grid intensities: {sources}; PUE: "
                       f"{', '.join(carbon.get('pue_sources', []))}. Regions and GPU clouds "
                       "without published figures have no CO2e.")
    caveats.append("Time bands are the simulator's P10-P90 from out-of-family validation, "
                   "widened to cover both the well-run and the typical goodput profile; "
                   "spot times and costs are a Monte Carlo of interruptions (see assumptions).")
    if document.get("decision_rule"):
        caveats.insert(0, str(document["decision_rule"]))
    return tuple(caveats)


def _nothing_works(would: dict[str, Any], no_option: str | None) -> str:
    text = f"{no_option or 'No option meets the limits set'}."
    if would.get("advice"):  # the page's paragraph, each figure rounded once
        return f"{text} {would.get('fix') or ''} {would['advice']}".replace("  ", " ")
    if as_number(would.get("deadline_days")):
        text += f" A deadline of {would['deadline_days']:.0f} days would admit one."
    if as_number(would.get("budget_usd")):
        text += f" A budget of {usd(would['budget_usd'])} would admit one."
    return text


def _recommended(document: dict[str, Any]) -> dict[str, Any] | None:
    """The option of the plan's pick (chart_sets.pick_position: the cheapest acceptable
    option's card, else the lowest-risk one's), if any."""
    cards = document.get("recommendations") or []
    position = pick_position([card["key"] for card in cards])
    if position is None:
        return None
    pick = cards[position].get("row_index")
    return next((o for o in document["options"] if o.get("row_index") == pick), None)


def report_from_plan(document: dict[str, Any], *, inputs: dict[str, Any], name: str,
                     subject_id: int, generated_at: str, labels: dict[str, str] | None = None,
                     units: dict[str, str] | None = None) -> Report:
    """The report of a plan document (see module docstring); ValueError if it has no options.
    `labels` and `units` word the inputs (the plan's field table: name -> label, unit)."""
    labels, units = labels or {}, units or {}
    if not isinstance(document, dict) or "options" not in document:
        raise ValueError("result: the plan has no result yet")
    options = ranked_options(document)
    best = _recommended(document) or (
        options[0] if options and as_number(options[0].get("rank")) else None)
    return Report(
        kind="plan", subject_id=subject_id, title=name or f"Plan: {_subtitle(inputs)}",
        subtitle=_subtitle(inputs), generated_at=generated_at,
        summary=_summary(document, best), findings=_findings(document),
        tables=(_options_table(options, document),
                _sources_table(options, _stale_days(document),
                               (document.get("prices") or {}).get("stale_before")),
                _assumptions_table(document, labels),
                _inputs_table(inputs, labels, units), *lever_tables(document)),
        charts=tuple(chart for chart in (
            pareto_chart(document), cost_chart(document), carbon_chart(document),
            scaling_chart(document), memory_chart(document)) if chart is not None),
        caveats=_caveats(document, best),
    )


def _subtitle(inputs: dict[str, Any]) -> str:
    goal = (large_count(inputs["tokens"], "tokens") if as_number(inputs.get("tokens"))
            else f"{inputs.get('samples') or inputs.get('epochs') or '?'} samples/epochs")
    parts = [str(inputs.get("workload") or "custom model"), goal]
    if as_number(inputs.get("deadline_days")):
        parts.append(f"deadline {inputs['deadline_days']:g} days")
    if as_number(inputs.get("budget_usd")):
        parts.append(f"budget {usd(inputs['budget_usd'])}")
    return " · ".join(parts)
