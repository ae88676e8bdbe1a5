"""What-if plan: cost, risk and rank every (simulated configuration × current price) option.

Inputs: the simulator sweep (one fastest fitting layout per instance type × node count), the
current prices of those instance types, the assumptions (PlanAssumptions) and the user's
constraints (PlanConstraints). One output row per configuration × price that passes the
filters. Time per row (hours):
- not spot (and spot with zero hazard): the simulator's band, lognormal through its P10/P90;
  expected = the simulator's point estimate, P50 = the lognormal median.
- spot: checkpoint/restart/rework model of planner.plans.core.spot_risk; expected analytic, P10,
  P50, P90 and P(time > deadline) by Monte Carlo, vectorized over distinct (configuration,
  hazard) runs. Samples per run = min(monte_carlo_samples, max(200, max_total_samples /
  runs)), so the whole catalog stays well under a second; 200 samples still put P90 within
  about ±2 percentile points.
Costs (USD) are planner.plans.core.costs evaluated at expected time (expected total) and at
P90 time (total_p90_usd); commitment rows pay max(run hours, term hours × (1 − reuse)).
Feasible (ranked) = expected time ≤ deadline and expected total ≤ budget; acceptable = the
decision rule of planner.plans.core.decision (chance of missing either ≤ miss_threshold).
Pareto front (expected time vs expected total) among feasible rows; rank among them puts
acceptable rows first, then expected total, time, non-spot first.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from planner.core import formatting as fmt
from planner.core.cloud import is_stale_price
from planner.core.purchase_options import SPOT
from planner.core.serialize import frame_records, json_safe
from planner.plans.core.assumptions import PlanAssumptions, PlanConstraints
from planner.plans.core.carbon import NO_FACTORS, CarbonFactors, energy_band, option_carbon
from planner.plans.core.costs import OptionRates, option_rates, per_million
from planner.plans.core.decision import rule_text, within_threshold
from planner.plans.core.fixes import (
    REASON_BUDGET,
    REASON_CAPACITY,
    REASON_DEADLINE,
    excluded_otherwise,
    what_would_work,
)
from planner.plans.core.options import (
    CONFIG_COLUMNS,
    CONFIG_DEFAULTS,
    LAYOUT_COLUMNS,
    PRICE_COLUMNS,
    PRICE_DEFAULTS,
    check_configs,
    check_prices,
    iso_dates,
    option_pairs,
    with_defaults,
    work_table,
)
from planner.plans.core.ranking import (
    Recommendation,
    pareto_mask,
    recommend_options,
    top_card,
    tradeoff_line,
)
from planner.plans.core.spot_risk import RunTimes, run_times

REASON_ESTIMATED = "estimated price"
REASON_HORIZON = "longer than the practical horizon"
REASON_UNPRICED = "no current price"
REASON_OFFER_LIMIT = "larger than the offer allows"
REASON_CO2E = "over the CO2e limit"
REASON_NO_CARBON = "no carbon data to check the CO2e limit"
# Reasons an option row can carry (joined by "; "), in the order they are written.
ROW_REASONS = (REASON_DEADLINE, REASON_BUDGET, REASON_CAPACITY, REASON_ESTIMATED, REASON_HORIZON,
               REASON_CO2E, REASON_NO_CARBON)


@dataclass(frozen=True)
class PlanResult:
    """Costed options (feasible first, by rank), highlights and counts of what was dropped.

    `table` has OUTPUT_COLUMNS; the index is 0..n-1 (= Recommendation.row_index). Besides the
    configuration, layout and price columns as given (as_of as an ISO string):
    - time_to_train_hours: expected wall-clock hours, incl. spot checkpoints, restarts and
      rework; simulated_hours: the simulator's uninterrupted estimate; time_p10/p50/p90_hours.
    - expected_interruptions, checkpoint_interval_hours (spot rows with a hazard; else 0/NaN).
    - goodput: steady-state (useful-step) hours / expected hours, below 1: failures, restarts,
      checkpoint stalls, evaluation and production overhead (the simulator's whole-run
      goodput, on every purchase option), spot interruptions on top; overhead_gpu_hours_pct
      = 100 · (1/goodput − 1), overhead_usd = compute at expected hours − at steady hours;
      each split into failure_overhead_* (modelled: failures, restarts, checkpoint stalls,
      spot interruptions) and production_overhead_* (the goodput profile's production
      overhead and evaluation: 100 · (1/sweep goodput − 1/sweep failure goodput)).
    - compute_usd, storage_usd, egress_usd, total_usd (at expected time), total_p90_usd.
    - usd_per_million_tokens / _samples: total_usd per unit trained; steady_usd_per_million_
      tokens: rate × nodes × expected hours per unit (no storage, egress or term floor).
    - deadline_miss_probability, budget_overrun_probability, miss_probability (either);
      0 when the limit is not set.
    - meets_deadline, within_budget, acceptable: the decision rule (planner.plans.core.
      decision): each chance, and the combined one, at or below constraints.miss_threshold.
    - infeasible_reason ("" | "misses deadline" (expected time over it) | "over budget"
      (expected total over it) | ... joined by "; "), is_pareto, rank (Int64 among feasible
      rows, acceptable ones first, so 1 = cheapest acceptable; <NA> if infeasible);
      is_carbon_pareto:
      on the front of expected CO2e vs expected total among feasible rows with CO2e.
    - memory_headroom_gib = memory_capacity_gib − memory_per_gpu_gib.
    - energy_kwh (GPU TDP × GPUs × expected hours; planner.plans.core.carbon says what it
      counts), energy_p10/p90_kwh (at P10/P90 time); co2e_kg and co2e_p10/p90_kg = energy ×
      pue × g_co2e_per_kwh / 1000 (NaN without carbon data), carbon_basis (dict: accounting,
      intensity, year, source, PUE; None without data), carbon_note (why there is no CO2e).
    `infeasible` counts option rows per reason ("misses deadline", "over budget"; a row may
    count under both), plus configurations that do not fit memory (from the sweep) and
    configurations with no current price at all. Over max_co2e_kg (expected CO2e) is a
    reason too, and so is no carbon data when that limit is set.
    """

    table: pd.DataFrame
    recommendations: tuple[Recommendation, ...]
    infeasible: dict[str, int]
    n_samples_per_spot_run: int
    assumptions: PlanAssumptions
    constraints: PlanConstraints

    def to_dict(self, limit: int | None = None) -> dict[str, Any]:
        """JSON-safe document: options as records (NaN as null, dates as ISO strings), each
        with its row_index. With `limit`, the first `limit` rows (feasible by rank first) plus
        every recommended and Pareto row; the whole catalog (~10^5 rows) is ~200 MB of JSON."""
        keep = np.arange(len(self.table))
        if limit is not None:
            chosen = {r.row_index for r in self.recommendations}
            chosen |= set(np.flatnonzero(self.table["is_pareto"].to_numpy()).tolist())
            chosen |= set(np.flatnonzero(self.table["is_carbon_pareto"].to_numpy()).tolist())
            keep = np.array(sorted(set(range(min(limit, len(self.table)))) | chosen), dtype=int)
        rows = self.table.iloc[keep].assign(row_index=keep)
        # `options` are the rows the decision rule judges (ranked, or out on the deadline or
        # budget alone); `excluded_options` those left out for another reason, named in
        # their infeasible_reason (never acceptable).
        excluded = excluded_otherwise(rows["infeasible_reason"])
        return {
            "options": frame_records(rows[~excluded]),
            "excluded_options": frame_records(rows[excluded]),
            "n_options": len(self.table),
            "n_feasible": int(self.table["rank"].notna().sum()),
            "n_acceptable": int((self.table["rank"].notna() & self.table["acceptable"]).sum()),
            "decision_rule": rule_text(self.constraints),
            "miss_threshold_pct": 100.0 * self.constraints.miss_threshold,
            "recommendations": [json_safe(r) for r in self.recommendations],
            "infeasible": dict(self.infeasible),
            "n_samples_per_spot_run": self.n_samples_per_spot_run,
            "assumptions": json_safe(self.assumptions),
            "constraints": json_safe(_constraints_dict(self.constraints)),
            "what_would_work": what_would_work(self.table, self.constraints),
            "no_option": (None if self.table["rank"].notna().any()
                          else no_option_words(self.constraints)),
            "tradeoff": tradeoff_line(self.table, self.recommendations),
            "pick": self.pick_summary(),
        }

    def pick_summary(self) -> dict[str, Any] | None:
        """The plan's pick (the cheapest acceptable option's card; when nothing is acceptable,
        the lowest-risk card), small enough for the plan list to read without loading the
        options: title, total (USD), time (hours), chances of missing (0-1), acceptable."""
        card = top_card(self.recommendations)
        if card is None:
            return None
        row = self.table.iloc[card.row_index]
        summary: dict[str, Any] = json_safe({
            "key": card.key, "title": card.title, "acceptable": bool(row["acceptable"]),
            "total_usd": float(row["total_usd"]),
            "time_to_train_hours": float(row["time_to_train_hours"]),
            "miss_probability": float(row["miss_probability"]),
            "deadline_miss_probability": float(row["deadline_miss_probability"]),
        })
        return summary


def no_option_words(constraints: PlanConstraints) -> str:
    """Why nothing is recommended, naming only the limits the plan set ("No option meets the
    CO2e limit of 500 kg"): a limit nobody set is never blamed."""
    limits = [words for value, words in (
        (constraints.deadline_hours, f"the deadline of {fmt.duration(constraints.deadline_hours)}"),
        (constraints.budget_usd, f"the budget of {fmt.usd(constraints.budget_usd)}"),
        (constraints.max_co2e_kg, f"the CO2e limit of {fmt.number(constraints.max_co2e_kg)} kg"),
    ) if value is not None]
    if not limits:
        return "No option is left"
    joined = limits[0] if len(limits) == 1 else f"{', '.join(limits[:-1])} and {limits[-1]}"
    return f"No option meets {joined}"


# Snapshots further apart than this are flagged when compared in one plan.
MIXED_DATES_DAYS = 30


def price_dates(table: pd.DataFrame, *, stale_days: int,
                stale_before: Mapping[str, str]) -> dict[str, Any]:
    """How old the prices of the feasible options are, how many are stale (`stale_before`:
    per provider, the day before which its prices are stale; pricing.selectors.stale_before),
    and whether the plan compares snapshots of different dates (AWS spot of mid-2025 beside
    on-demand of 2026, say)."""
    rows = table[table["rank"].notna()] if table["rank"].notna().any() else table
    dates = pd.to_datetime(pd.Series(rows["as_of"].unique()))  # a few dates, many rows
    ages = rows["age_days"].astype(float)
    spread = int((dates.max() - dates.min()).days) if len(rows) else 0
    return {
        "oldest": dates.min().date().isoformat() if len(rows) else None,
        "newest": dates.max().date().isoformat() if len(rows) else None,
        "spread_days": spread,
        "is_mixed": spread > MIXED_DATES_DAYS,
        "oldest_age_days": None if ages.isna().all() else int(ages.max()),
        "n_stale": int(sum(is_stale_price(a, p, stale_before)
                           for a, p in zip(rows["as_of"], rows["provider"], strict=True))),
        "stale_days": stale_days,
        "stale_before": dict(stale_before),
    }


def _constraints_dict(constraints: PlanConstraints) -> dict[str, Any]:
    return {name: sorted(value) if isinstance(value, Collection) else value
            for name, value in constraints.__dict__.items()}


def plan(
    configs: pd.DataFrame,
    prices: pd.DataFrame,
    assumptions: PlanAssumptions,
    constraints: PlanConstraints,
    *,
    carbon: CarbonFactors = NO_FACTORS,
) -> PlanResult:
    """Cost, risk-rate and rank every configuration × price option (see module docstring).

    configs: CONFIG_COLUMNS, one row per (instance_key, nodes), hours and GiB as named.
    prices: PRICE_COLUMNS, usd_per_hour per instance-hour (> 0), purchase_option in
    planner.core.purchase_options. `carbon`: grid intensity and PUE per (provider, region);
    without it no CO2e.
    Raises ValueError on bad input or when no option passes the filters.
    """
    configs = with_defaults(configs, CONFIG_DEFAULTS)
    prices = with_defaults(prices, PRICE_DEFAULTS)
    check_configs(configs)
    check_prices(prices)
    cfg_rows, price_rows, n_over_limit = option_pairs(configs, prices, constraints)
    work = work_table(configs, prices, cfg_rows, price_rows)
    rates = option_rates(work, assumptions)
    times, n_samples = run_times(work, cfg_rows, rates, assumptions, constraints)
    outcomes = _outcomes(work, rates, times, constraints, carbon)
    infeasible = {reason: int(outcomes.pop(f"n_{reason}").sum()) for reason in ROW_REASONS}
    table = _final_table(configs, prices, cfg_rows, price_rows, outcomes,
                         tuple(constraints.preferred_regions))
    n_unpriced = int((~configs["instance_key"].isin(prices["instance_key"])).sum())
    infeasible |= {REASON_UNPRICED: n_unpriced, REASON_OFFER_LIMIT: n_over_limit}
    recommendations = recommend_options(table, constraints)
    return PlanResult(table, recommendations, infeasible, n_samples, assumptions, constraints)


OUTPUT_COLUMNS = (
    "instance_key", "provider", "region", "instance_type", "gpu", "gpus", "nodes",
    *LAYOUT_COLUMNS, "virtual_stages", "purchase_option", "payment_option", "usd_per_hour",
    "upfront_usd",
    "as_of", "age_days", "source", "is_derived", "basis", "offer_kind", "max_nodes",
    "spot_node_limit", "is_capacity_unlikely", "calibration_status", "rate_note",
    "envelope_note", "envelope",
    "is_spot", "time_to_train_hours", "time_p10_hours", "time_p50_hours", "time_p90_hours",
    "simulated_hours", "expected_interruptions", "checkpoint_interval_hours", "goodput",
    "overhead_gpu_hours_pct", "overhead_usd", "failure_overhead_gpu_hours_pct",
    "production_overhead_gpu_hours_pct", "failure_overhead_usd", "production_overhead_usd",
    "compute_usd",
    "storage_usd", "egress_usd", "total_usd", "total_p90_usd", "usd_per_million_tokens",
    "usd_per_million_samples", "steady_usd_per_million_tokens", "deadline_miss_probability",
    "budget_overrun_probability", "miss_probability", "meets_deadline", "within_budget",
    "acceptable",
    "is_pareto", "is_carbon_pareto", "rank", "infeasible_reason", "mfu", "memory_per_gpu_gib",
    "memory_capacity_gib", "memory_headroom_gib", "step_seconds", "samples_per_second",
    "tokens_per_second", "gpu_hours", "energy_kwh", "energy_p10_kwh", "energy_p90_kwh",
    "co2e_kg", "co2e_p10_kg", "co2e_p90_kg", "g_co2e_per_kwh", "pue", "carbon_basis",
    "carbon_note",
)


def _reasons(flags: dict[str, np.ndarray]) -> np.ndarray:
    """Per row, every reason that keeps it out of the recommendations, joined by "; "."""
    n_rows = len(next(iter(flags.values())))
    reasons = np.full(n_rows, "", dtype=object)
    for reason in ROW_REASONS:
        hit = flags[reason]
        reasons[hit] = np.where(reasons[hit] == "", reason, reasons[hit] + "; " + reason)
    return reasons


def _carbon(work: pd.DataFrame, times: RunTimes, carbon: CarbonFactors) -> dict[str, np.ndarray]:
    """Energy at expected, P10 and P90 time (the sweep's energy is for its own time) and the
    CO2e of each."""
    low, energy, high = energy_band(work["energy_kwh"].to_numpy(),
                                    work["time_to_train_hours"].to_numpy(),
                                    (times.p10_hours, times.expected_hours, times.p90_hours))
    found = option_carbon(work["provider"], work["region"], energy, carbon)
    kg_per_kwh = found["pue"] * found["g_co2e_per_kwh"] / 1000.0
    return {**found, "energy_kwh": energy, "energy_p10_kwh": low, "energy_p90_kwh": high,
            "co2e_p10_kg": low * kg_per_kwh, "co2e_p90_kg": high * kg_per_kwh}


def _goodput_columns(work: pd.DataFrame, rates: OptionRates,
                     expected: np.ndarray) -> dict[str, np.ndarray]:
    """goodput, overhead_gpu_hours_pct and overhead_usd per option, and their split into the
    fitted production overhead (the sweep's 1/goodput − 1/failure goodput, evaluation
    included) and the modelled failures, restarts, checkpoints and spot interruptions (the
    rest); see PlanResult."""
    steady = np.minimum(work["steady_state_hours"].to_numpy(dtype=np.float64), expected)
    goodput = steady / expected
    overhead_pct = 100.0 * (expected / steady - 1.0)
    overhead_usd = rates.compute_usd(expected) - rates.compute_usd(steady)
    with np.errstate(divide="ignore", invalid="ignore"):
        fitted = 1.0 / work["goodput_fraction"].to_numpy() \
            - 1.0 / work["failure_goodput_fraction"].to_numpy()
        production_pct = np.clip(np.nan_to_num(100.0 * fitted, nan=0.0), 0.0, overhead_pct)
        share = np.where(overhead_pct > 0, production_pct / overhead_pct, 0.0)
    return {"goodput": goodput, "overhead_gpu_hours_pct": overhead_pct,
            "overhead_usd": overhead_usd,
            "failure_overhead_gpu_hours_pct": overhead_pct - production_pct,
            "production_overhead_gpu_hours_pct": production_pct,
            "failure_overhead_usd": overhead_usd * (1.0 - share),
            "production_overhead_usd": overhead_usd * share}


def _outcomes(work: pd.DataFrame, rates: OptionRates, times: RunTimes,
              constraints: PlanConstraints, carbon: CarbonFactors) -> dict[str, np.ndarray]:
    """Computed columns of the output table, in option order."""
    expected = times.expected_hours
    emitted = _carbon(work, times, carbon)
    co2e = emitted["co2e_kg"]
    limit = constraints.max_co2e_kg
    simulated = work["time_to_train_hours"].to_numpy()
    # The run's work is its throughput over its useful-step hours (the time before goodput).
    useful = work["steady_state_hours"].to_numpy()
    total = rates.total_usd(expected)
    steady = rates.usd_per_hour * rates.nodes * expected
    tokens = work["tokens_per_second"].to_numpy()
    on_time = expected <= (constraints.deadline_hours or np.inf)
    under_budget = total <= (constraints.budget_usd or np.inf)
    threshold = constraints.miss_threshold
    is_spot = (work["purchase_option"] == SPOT).to_numpy()
    capacity_unlikely = is_spot & (work["nodes"].to_numpy() > work["spot_node_limit"].to_numpy())
    estimated = (work["basis"] == "estimated").to_numpy()
    beyond_horizon = expected > (constraints.horizon_hours or np.inf)
    flags = {
        REASON_DEADLINE: ~on_time, REASON_BUDGET: ~under_budget,
        REASON_CAPACITY: capacity_unlikely & (not constraints.allow_unlikely_capacity),
        REASON_ESTIMATED: estimated & (not constraints.allow_estimated_prices),
        REASON_HORIZON: beyond_horizon & (constraints.deadline_hours is None),
        REASON_CO2E: (co2e > limit) if limit is not None else np.zeros(len(co2e), dtype=bool),
        REASON_NO_CARBON: np.isnan(co2e) & (limit is not None),
    }
    return {
        **emitted,
        "is_spot": is_spot,
        "time_to_train_hours": expected, "time_p10_hours": times.p10_hours,
        "time_p50_hours": times.p50_hours, "time_p90_hours": times.p90_hours,
        "simulated_hours": simulated, "expected_interruptions": times.expected_interruptions,
        "checkpoint_interval_hours": times.checkpoint_interval_hours,
        **_goodput_columns(work, rates, expected),
        "compute_usd": rates.compute_usd(expected), "storage_usd": rates.storage_usd(expected),
        "egress_usd": rates.egress_usd, "total_usd": total,
        "total_p90_usd": rates.total_usd(times.p90_hours),
        "usd_per_million_tokens": per_million(total, tokens, useful),
        "usd_per_million_samples": per_million(
            total, work["samples_per_second"].to_numpy(), useful),
        "steady_usd_per_million_tokens": per_million(steady, tokens, useful),
        "deadline_miss_probability": times.deadline_miss_probability,
        "budget_overrun_probability": times.budget_overrun_probability,
        "miss_probability": times.miss_probability,
        # The decision rule (planner.plans.core.decision), per limit and combined.
        "meets_deadline": within_threshold(times.deadline_miss_probability, threshold),
        "within_budget": within_threshold(times.budget_overrun_probability, threshold),
        # Acceptable needs the option to be available at all: one left out for another
        # reason (spot capacity, an estimated price, the CO2e limit, ...) is not.
        "acceptable": within_threshold(times.miss_probability, threshold) & ~_excluded(flags),
        "is_capacity_unlikely": capacity_unlikely,
        "infeasible_reason": _reasons(flags),
        # Per reason, its rows (counted by plan(), not a column of the table).
        **{f"n_{reason}": np.asarray(hit, dtype=bool) for reason, hit in flags.items()},
        "memory_headroom_gib": (work["memory_capacity_gib"] - work["memory_per_gpu_gib"])
        .to_numpy(),
    }


def _excluded(flags: Mapping[str, np.ndarray]) -> np.ndarray:
    """Rows left out for a reason other than the deadline or budget risk."""
    others = [hit for reason, hit in flags.items()
              if reason not in (REASON_DEADLINE, REASON_BUDGET)]
    return np.asarray(np.logical_or.reduce(others), dtype=bool)


def region_preference(regions: np.ndarray, preferred: tuple[str, ...]) -> np.ndarray:
    """Per row, the position of its region in `preferred` (len(preferred) when absent)."""
    if not preferred:
        return np.zeros(len(regions), dtype=np.int64)
    position = {code: i for i, code in enumerate(preferred)}
    found = pd.Series(regions, dtype=object).map(position).fillna(len(preferred))
    return found.to_numpy(dtype=np.int64)


def _final_table(configs: pd.DataFrame, prices: pd.DataFrame, cfg_rows: np.ndarray,
                 price_rows: np.ndarray, outcomes: dict[str, np.ndarray],
                 preferred_regions: tuple[str, ...] = ()) -> pd.DataFrame:
    """Feasible rows first in rank order (acceptable ones first, then expected total, time,
    non-spot first, then the preferred regions), then the others by the same keys; Pareto
    flags and rank among feasible rows. Rank 1 is so the cheapest acceptable option."""
    feasible = outcomes["infeasible_reason"] == ""
    hours, usd = outcomes["time_to_train_hours"], outcomes["total_usd"]
    # per price row first (a few thousand), then per option row
    preference = region_preference(prices["region"].to_numpy(), preferred_regions)[price_rows]
    order = np.lexsort((preference, outcomes["is_spot"], hours, usd, ~outcomes["acceptable"],
                        ~feasible))
    feasible = feasible[order]
    pareto = np.zeros(len(order), dtype=bool)
    pareto[feasible] = pareto_mask(hours[order][feasible], usd[order][feasible])
    rank = pd.arrays.IntegerArray(np.cumsum(feasible).astype(np.int64), ~feasible)
    co2e = outcomes["co2e_kg"][order]
    carbon_front = np.zeros(len(order), dtype=bool)
    known = feasible & np.isfinite(co2e)
    carbon_front[known] = pareto_mask(co2e[known], usd[order][known])
    kept = [c for c in (*CONFIG_COLUMNS, *CONFIG_DEFAULTS)
            if c in OUTPUT_COLUMNS and c not in outcomes]
    base = configs.iloc[cfg_rows[order]][kept]
    dated = prices[[*PRICE_COLUMNS[1:], *PRICE_DEFAULTS]].assign(
        as_of=iso_dates(prices["as_of"]))
    priced = dated.iloc[price_rows[order]].reset_index(drop=True)
    computed = pd.DataFrame({name: values[order] for name, values in outcomes.items()})
    table = pd.concat([base.reset_index(drop=True), priced, computed], axis=1)
    table = table.assign(is_pareto=pareto, is_carbon_pareto=carbon_front, rank=rank)
    return table[list(OUTPUT_COLUMNS)]
