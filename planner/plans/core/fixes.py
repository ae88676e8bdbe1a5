"""What would work when nothing is feasible: the deadline and budget that would admit an
option, one combined fix in words, and the paragraph the page prints under it.

Each quantity is rounded once, up to the precision it is shown at (a day's tenth, a whole
dollar), and every sentence prints that one value: the paragraph never says "$755,639" and
"$755,638" for one total (issue 38). Rounding up, so a deadline or budget set to the figure
shown admits the option.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from planner.core import formatting as fmt
from planner.plans.core.assumptions import PlanConstraints

REASON_DEADLINE = "misses deadline"
REASON_BUDGET = "over budget"
REASON_CAPACITY = "spot capacity unlikely"


def excluded_otherwise(reasons: pd.Series) -> np.ndarray:
    """Per option row, whether its infeasible_reason names a reason besides the deadline and
    the budget (spot capacity, an estimated price, the CO2e limit, ...): such a row is not one
    the decision rule judges."""
    rest = reasons.str.replace(REASON_DEADLINE, "", regex=False)
    return (rest.str.replace(REASON_BUDGET, "", regex=False).str.strip("; ") != "").to_numpy()


def shown_hours_up(hours: float) -> float:
    """`hours` rounded up to what formatting.duration prints of it (a tenth of a day from two
    days on, a whole hour from 10 h, a tenth of an hour below), so the figure shown is never
    below the time it stands for."""
    if hours >= fmt.DAYS_FROM_HOURS:
        return math.ceil(round(hours / 2.4, 9)) * 2.4
    step = 1.0 if hours >= 10 else 0.1
    return math.ceil(round(hours / step, 9)) * step


def usd_up(total_usd: float) -> float:
    """A total rounded up to the whole dollar it is shown as."""
    return float(math.ceil(round(total_usd, 6)))


def what_would_work(table: pd.DataFrame, constraints: PlanConstraints) -> dict[str, Any] | None:
    """When nothing is feasible: the deadline (days) and the budget (USD) that would admit an
    option, each keeping the other limit, among options no other reason excludes; `fix` (one
    change in words) and `advice` (the rest of the paragraph), both from the same rounded
    figures. None when some option is ranked or none is excluded by the limits alone."""
    if table["rank"].notna().any():
        return None
    rest = table["infeasible_reason"].str.replace(REASON_DEADLINE, "", regex=False)
    usable = table[~excluded_otherwise(table["infeasible_reason"])]
    if usable.empty:
        return None
    within_budget = usable[usable["total_usd"] <= (constraints.budget_usd or np.inf)]
    on_time = usable[usable["time_to_train_hours"] <= (constraints.deadline_hours or np.inf)]
    # Only the limits that were set get a figure: no budget words without a budget.
    deadline_hours = (None if within_budget.empty or constraints.deadline_hours is None
                      else shown_hours_up(float(within_budget["time_to_train_hours"].min())))
    budget = (None if on_time.empty or constraints.budget_usd is None
              else usd_up(float(on_time["total_usd"].min())))
    fastest_hours = shown_hours_up(float(usable["time_to_train_hours"].min()))
    cheapest_usd = usd_up(float(usable["total_usd"].min()))
    return {"deadline_days": None if deadline_hours is None else round(deadline_hours / 24.0, 6),
            "budget_usd": budget, "fastest_days": round(fastest_hours / 24.0, 6),
            "cheapest_usd": cheapest_usd,
            "fix": combined_fix(usable, constraints, capped=_capped_only(table, rest)),
            "advice": _advice(constraints, deadline_hours, budget, fastest_hours, cheapest_usd)}


def _advice(constraints: PlanConstraints, deadline_hours: float | None, budget: float | None,
            fastest_hours: float, cheapest_usd: float) -> str:
    """The sentences after the fix: the deadline within the budget (only with a budget), the
    budget within the deadline, the fastest and the cheapest option."""
    sentences = []
    if deadline_hours is not None and constraints.budget_usd is not None:
        sentences.append(f"A deadline of {fmt.duration(deadline_hours)} would admit an option "
                         f"within the budget.")
    if budget is not None:
        sentences.append(f"A budget of {fmt.usd(budget)} would admit one within the deadline.")
    sentences.append(f"The fastest option takes {fmt.duration(fastest_hours)}; the cheapest "
                     f"costs {fmt.usd(cheapest_usd)}.")
    return " ".join(sentences)


def _capped_only(table: pd.DataFrame, rest: pd.Series) -> pd.DataFrame:
    """Options left out only for spot capacity (beside the deadline and budget)."""
    others = rest.str.replace(REASON_BUDGET, "", regex=False).str.replace(
        REASON_CAPACITY, "", regex=False).str.strip("; ")
    return table[((others == "") & rest.str.contains(REASON_CAPACITY, regex=False)).to_numpy()]


def _option_words(row: pd.Series) -> str:
    return (f"{fmt.label(row['provider'])} {row['instance_type']} × {fmt.count(row['nodes'])}, "
            f"{fmt.label(row['purchase_option'])}")


def combined_fix(usable: pd.DataFrame, constraints: PlanConstraints,
                 capped: pd.DataFrame | None = None) -> str:
    """One change of deadline, budget and GPU count that works together, in words: the
    cheapest option on time (its GPUs and total), or the fastest when none is on time; when
    the fastest is spot and larger spot allocations were left out as unlikely (`capped`), the
    spot capacity cap is named as the limit."""
    on_time = usable[usable["time_to_train_hours"] <= (constraints.deadline_hours or np.inf)]
    if constraints.deadline_hours is not None and not on_time.empty:
        row = on_time.iloc[int(on_time["total_usd"].to_numpy().argmin())]
        return (f"For {fmt.duration(constraints.deadline_hours)} you need at least "
                f"{fmt.count(row['gpus'])} GPUs and {fmt.usd(usd_up(row['total_usd']))} "
                f"({_option_words(row)}).")
    if constraints.deadline_hours is None:
        row = usable.iloc[int(usable["total_usd"].to_numpy().argmin())]
        return (f"The cheapest option needs a budget of {fmt.usd(usd_up(row['total_usd']))} "
                f"({fmt.count(row['gpus'])} GPUs, "
                f"{fmt.duration(shown_hours_up(row['time_to_train_hours']))}).")
    row = usable.iloc[int(usable["time_to_train_hours"].to_numpy().argmin())]
    takes = fmt.duration(shown_hours_up(row["time_to_train_hours"]))
    fastest = (f"No allowed option finishes in {fmt.duration(constraints.deadline_hours)}: "
               f"the fastest takes {takes} with "
               f"{fmt.count(row['gpus'])} GPUs and {fmt.usd(usd_up(row['total_usd']))}")
    faster = (capped[capped["time_to_train_hours"] < row["time_to_train_hours"]]
              if capped is not None else usable.iloc[:0])
    if bool(row["is_spot"]) and not faster.empty:
        limit = fmt.count(row["spot_node_limit"])
        return (f"{fastest}. The limit is spot capacity: more than {limit} spot nodes of this "
                f"offer are unlikely to be granted (the spot capacity cap), so larger spot "
                f"allocations were left out; allow unlikely spot capacity, add on-demand or "
                f"reserved capacity, or move the deadline to at least {takes}.")
    return f"{fastest}; allow more nodes or GPU models, or move the deadline to at least {takes}."
