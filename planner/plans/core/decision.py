"""The plan's one decision rule: which options are acceptable.

An option is acceptable when its chance of missing the deadline or the budget (whichever are
set; the combined chance P(time > deadline or total > budget), `miss_probability`) is at or
below `PlanConstraints.miss_threshold`. With neither limit set the chance is 0, so every option
is acceptable. An option left out for another reason (spot capacity unlikely, an estimated
price, the CO2e limit, larger than the offer allows, ...) is never acceptable; the plan
document lists those apart, in `excluded_options`. `meets_deadline` and `within_budget`
apply the same threshold to each limit's own chance. Every card, chart, report, API field
and command reads these three from here; "cheapest" everywhere is the lowest expected total
among acceptable options.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from planner.core import formatting as fmt
from planner.plans.core.assumptions import PlanConstraints

# Monte Carlo chances are read to this precision, so 10.0000001 % passes a 10 % threshold.
TOLERANCE = 1e-9


def within_threshold(chance: np.ndarray, threshold: float) -> np.ndarray:
    """True where a chance (0-1) is at or below `threshold`; an unknown chance (NaN) is not."""
    values = np.nan_to_num(np.asarray(chance, dtype=np.float64), nan=np.inf)
    return np.asarray(values <= threshold + TOLERANCE, dtype=bool)


def limits_text(c: PlanConstraints) -> str:
    """The limits the rule reads: "the 60.0 days deadline or the $7,000,000 budget" ("" when
    neither is set)."""
    parts = []
    if c.deadline_hours is not None:
        parts.append(f"the {fmt.duration(c.deadline_hours)} deadline")
    if c.budget_usd is not None:
        parts.append(f"the {fmt.usd(c.budget_usd)} budget")
    return " or ".join(parts)


def rule_text(c: PlanConstraints) -> str:
    """The rule in words, as the page, the report and every card state it."""
    limits = limits_text(c)
    if not limits:
        return "Acceptable: every option (no deadline or budget is set, so none can be missed)."
    return (f"Acceptable: at most {fmt.percent(c.miss_threshold, 0)} chance of missing "
            f"{limits} (one combined chance per option).")


def short_rule(c: PlanConstraints) -> str:
    """What an acceptable option is, in one clause for a card's title or a chart caption."""
    if c.deadline_hours is not None and c.budget_usd is not None:
        return "meeting the deadline and budget"
    if c.deadline_hours is not None:
        return "meeting the deadline"
    if c.budget_usd is not None:
        return "within budget"
    return ""


def cheapest_title(c: PlanConstraints) -> str:
    """The cheapest card's title: "Cheapest meeting the deadline", "Cheapest within budget"..."""
    rule = short_rule(c)
    return f"Cheapest {rule}" if rule else "Cheapest"


def chance_text(row: pd.Series, c: PlanConstraints) -> str:
    """"12.6% chance of missing the 60.0 days deadline" for one option row ("" without limits)."""
    limits = limits_text(c)
    return f"{fmt.percent(row['miss_probability'])} chance of missing {limits}" if limits else ""


def verdict_text(row: pd.Series, c: PlanConstraints, *, is_chance_said: bool = False) -> str:
    """" Not acceptable: 43.1% chance of missing the 60.0 days deadline (at most 10% allowed)."
    for an option outside the rule, "" for an acceptable one; without the chance when the
    paragraph already gives it (one figure per quantity)."""
    if bool(row["acceptable"]):
        return ""
    allowed = f"at most {fmt.percent(c.miss_threshold, 0)} allowed"
    if is_chance_said:
        return f" Not acceptable ({allowed})."
    return f" Not acceptable: {chance_text(row, c)} ({allowed})."


def nearest_cheaper(table: pd.DataFrame, ranked: np.ndarray, index: int) -> int | None:
    """Among ranked options cheaper than row `index`, the one with the lowest combined chance
    of missing (ties: the cheaper), or None when none is cheaper."""
    usd = table["total_usd"].to_numpy(dtype=np.float64)
    chance = np.nan_to_num(table["miss_probability"].to_numpy(dtype=np.float64), nan=1.0)
    cheaper = np.flatnonzero(ranked & (usd < usd[index] - 0.005))
    if not cheaper.size:
        return None
    order = np.lexsort((usd[cheaper], chance[cheaper]))
    return int(cheaper[order[0]])


def trade_text(table: pd.DataFrame, ranked: np.ndarray, index: int,
               c: PlanConstraints) -> str:
    """What taking more risk would save against the pick: " Nearest cheaper: <option> at
    12.6% (+9.9 points of risk saves $1,758,913)." ("" when no option is cheaper or no limit
    is set)."""
    if not limits_text(c):
        return ""
    other = nearest_cheaper(table, ranked, index)
    if other is None:
        return " No ranked option is cheaper."
    pick, row = table.iloc[index], table.iloc[other]
    points = 100.0 * (float(row["miss_probability"]) - float(pick["miss_probability"]))
    saves = float(pick["total_usd"]) - float(row["total_usd"])
    return (f" Nearest cheaper: {row['instance_type']} × {fmt.count(row['nodes'])} "
            f"({fmt.label(row['provider'])} {row['region']}, "
            f"{fmt.label(row['purchase_option'])}) at {fmt.usd(row['total_usd'])} with "
            f"{chance_text(row, c)}: {points:+.1f} points of risk saves {fmt.usd(saves)}.")
