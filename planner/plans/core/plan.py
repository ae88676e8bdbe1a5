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
Feasible = expected time ≤ deadline and expected total ≤ budget; Pareto front (expected time
vs expected total) and rank (expected total, then time, then non-spot first) among those.
"""

from __future__ import annotations

import json
import math
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from planner.core.serialize import json_safe
from planner.plans.core.costs import (
    HOURS_PER_MONTH,
    PURCHASE_TERM_YEARS,
    OptionRates,
    min_billed_hours,
    storage_rates,
)
from planner.plans.core.spot_risk import (
    SpotRuns,
    lognormal_exceed_probability,
    lognormal_from_p10_p90,
    sample_exceed_probability,
    sorted_quantile,
)

PURCHASE_OPTIONS = tuple(PURCHASE_TERM_YEARS)
LAYOUT_COLUMNS = ("tp", "pp", "dp", "cp", "zero_stage", "recompute", "micro_batch",
                  "grad_accum", "precision")
CONFIG_COLUMNS = ("instance_key", "gpu", "nodes", "gpus", *LAYOUT_COLUMNS, "step_seconds",
                  "samples_per_second", "tokens_per_second", "time_to_train_hours",
                  "time_to_train_p10_hours", "time_to_train_p90_hours", "gpu_hours",
                  "energy_kwh", "memory_per_gpu_gib", "mfu", "memory_capacity_gib")
PRICE_COLUMNS = ("instance_key", "provider", "region", "instance_type", "purchase_option",
                 "usd_per_hour", "as_of", "source", "is_derived")
MIN_SAMPLES_PER_RUN = 200
RISK_RESOLUTION = 1e-3  # miss probabilities closer than this count as a tie (MC resolution)
REASON_DEADLINE = "misses deadline"
REASON_BUDGET = "over budget"
REASON_MEMORY = "does not fit memory"
REASON_UNPRICED = "no current price"
REASON_BOTH = f"{REASON_DEADLINE}; {REASON_BUDGET}"
_REASONS_WITH = {REASON_DEADLINE: (REASON_DEADLINE, REASON_BOTH),
                 REASON_BUDGET: (REASON_BUDGET, REASON_BOTH)}

# Monthly reclaim fraction per AWS Spot Advisor "frequency of interruption" band (Azure shows
# the same bands as eviction rates); each band read at its midpoint, the open ">20%" at 25%.
SPOT_BAND_MONTHLY_FRACTION: dict[str, float] = {
    "<5%": 0.025, "5-10%": 0.075, "10-15%": 0.125, "15-20%": 0.175, ">20%": 0.25,
}


def hazard_per_instance_hour(monthly_fraction: float) -> float:
    """Poisson hazard per instance-hour for a monthly reclaim fraction p: -ln(1 - p) / 730."""
    if not 0.0 <= monthly_fraction < 1.0:
        raise ValueError("monthly interruption fraction must be in [0, 1)")
    return -math.log(1.0 - monthly_fraction) / HOURS_PER_MONTH


def _band_hazard(band: str) -> float:
    return hazard_per_instance_hour(SPOT_BAND_MONTHLY_FRACTION[band])


# List prices, USD per GB-month, first tier, US regions, as of 2026-01. Figures as given in
# the what-if planner issue; Lambda's ($0.20/GiB-month, no ingress/egress charge) re-checked
# on docs.lambda.ai/public-cloud/billing, the others not re-fetched here (≈ = approximate):
DEFAULT_STORAGE_USD_PER_GB_MONTH: dict[str, float] = {
    "aws": 0.023,  # S3 Standard, us-east-1, first 50 TB (aws.amazon.com/s3/pricing)
    "gcp": 0.020,  # Cloud Storage Standard, regional us-central1 (cloud.google.com/storage)
    "azure": 0.0184,  # Blob Storage Hot LRS, East US, first 50 TB (≈; azure.microsoft.com)
    "lambda": 0.20,  # persistent filesystem, per GiB-month (docs.lambda.ai billing)
    "vast": 0.10,  # marketplace hosts set their own disk rate; a typical listing (≈)
}
# Internet egress, USD per GB, first paid tier, as of 2026-01 (same origin as above):
DEFAULT_EGRESS_USD_PER_GB: dict[str, float] = {
    "aws": 0.09,  # EC2/S3 data transfer out to internet, first 10 TB/month
    "gcp": 0.12,  # premium tier internet egress, first 1 TB
    "azure": 0.087,  # internet egress (Microsoft network routing), first 10 TB
    "lambda": 0.0,  # no ingress/egress charges (docs.lambda.ai billing)
    "vast": 0.0,  # bandwidth is priced per host on the marketplace; 0 by default (≈)
}
# Spot hazard per instance-hour. AWS Spot Advisor puts most GPU types in the upper bands and
# the newest generations often above 20 % (commitment_anchors.md §3); Azure publishes the same
# bands; GCP publishes none and GPU Spot VMs are reclaimed often, so its top band is assumed;
# Lambda sells no spot (top band if a row appears); Vast interruptible instances are outbid.
DEFAULT_PROVIDER_SPOT_BANDS: dict[str, str] = {
    "aws": "15-20%",  # 2.6e-4 /h
    "azure": "15-20%",
    "gcp": ">20%",  # 3.9e-4 /h
    "lambda": ">20%",
    "vast": ">20%",
}
DEFAULT_SPOT_HAZARD_PER_INSTANCE_HOUR: dict[str, float] = {
    provider: _band_hazard(band) for provider, band in DEFAULT_PROVIDER_SPOT_BANDS.items()
}
# provider -> GPU name (exact, or the model prefix of "<model> <variant>") -> hazard.
DEFAULT_SPOT_HAZARD_BY_GPU: dict[str, dict[str, float]] = {
    "aws": {"H100": _band_hazard(">20%"), "H200": _band_hazard(">20%"),
            "B200": _band_hazard(">20%")},
}


@dataclass(frozen=True)
class PlanAssumptions:
    """Every assumption of the plan; units in the names. Defaults and their origins above.

    Storage: (dataset_gb + checkpoints_kept × checkpoint_gb) is billed while the run lasts and
    for `storage_months` after it. Egress: `egress_gb` leaves the provider once (the trained
    model, logs). Checkpoint write hours = checkpoint_gb / min(checkpoint_write_gbytes_per_s
    × nodes, checkpoint_max_aggregate_gbytes_per_s) / 3600 (each node writes its shard; the
    storage service caps the aggregate; 20 GB/s is an assumption, not a published limit).
    `restart_overhead_hours` (re-acquire capacity, reload) is billed. Commitment rows pay
    max(run hours, term hours × (1 − commitment_reuse_fraction)): 0 = this run alone pays
    the whole term; 0.75 = other work uses three quarters of the term after this run.
    Monte Carlo: `monte_carlo_samples` per spot run at most, `max_total_samples` over all
    runs (time budget), `seed` for numpy's default_rng.
    """

    dataset_gb: float = 0.0
    checkpoint_gb: float = 0.0
    checkpoints_kept: int = 2  # latest plus the one being written
    storage_months: float = 1.0  # retention after the run
    egress_gb: float = 0.0
    storage_usd_per_gb_month: Mapping[str, float] = field(
        default_factory=lambda: dict(DEFAULT_STORAGE_USD_PER_GB_MONTH))
    egress_usd_per_gb: Mapping[str, float] = field(
        default_factory=lambda: dict(DEFAULT_EGRESS_USD_PER_GB))
    spot_hazard_per_instance_hour: Mapping[str, float] = field(
        default_factory=lambda: dict(DEFAULT_SPOT_HAZARD_PER_INSTANCE_HOUR))
    spot_hazard_per_instance_hour_by_gpu: Mapping[str, Mapping[str, float]] = field(
        default_factory=lambda: {k: dict(v) for k, v in DEFAULT_SPOT_HAZARD_BY_GPU.items()})
    checkpoint_write_gbytes_per_s: float = 2.0  # per node
    checkpoint_max_aggregate_gbytes_per_s: float = 20.0
    restart_overhead_hours: float = 0.25
    commitment_reuse_fraction: float = 0.0
    monte_carlo_samples: int = 2000
    max_total_samples: int = 1_000_000
    seed: int = 0

    def __post_init__(self) -> None:
        amounts = (self.dataset_gb, self.checkpoint_gb, self.checkpoints_kept,
                   self.storage_months, self.egress_gb, self.restart_overhead_hours)
        if not all(math.isfinite(v) and v >= 0 for v in amounts):
            raise ValueError("sizes, months and restart hours must be finite and >= 0")
        if not (self.checkpoint_write_gbytes_per_s > 0
                and self.checkpoint_max_aggregate_gbytes_per_s > 0):
            raise ValueError("checkpoint write bandwidths must be > 0")
        if not 0.0 <= self.commitment_reuse_fraction <= 1.0:
            raise ValueError("commitment_reuse_fraction must be in [0, 1]")
        if self.monte_carlo_samples < 1 or self.max_total_samples < 1:
            raise ValueError("monte_carlo_samples and max_total_samples must be >= 1")
        nested = [dict(v) for v in self.spot_hazard_per_instance_hour_by_gpu.values()]
        for rates in (self.storage_usd_per_gb_month, self.egress_usd_per_gb,
                      self.spot_hazard_per_instance_hour, *nested):
            if not all(math.isfinite(v) and v >= 0 for v in rates.values()):
                raise ValueError("per-provider rates and hazards must be finite and >= 0")


@dataclass(frozen=True)
class PlanConstraints:
    """Deadline (hours), budget (USD) and allowed sets; None = no limit. GPUs match exactly
    or by model prefix ("H100" matches "H100 SXM5-80GB")."""

    deadline_hours: float | None = None
    budget_usd: float | None = None
    providers: Collection[str] | None = None
    regions: Collection[str] | None = None
    gpus: Collection[str] | None = None
    purchase_options: Collection[str] | None = None

    def __post_init__(self) -> None:
        for name in ("deadline_hours", "budget_usd"):
            value = getattr(self, name)
            if value is not None and not (math.isfinite(value) and value > 0):
                raise ValueError(f"{name} must be > 0")
        for name in ("providers", "regions", "gpus", "purchase_options"):
            if isinstance(getattr(self, name), str):
                raise ValueError(f"{name} must be a collection of names, not one string")
        unknown = set(self.purchase_options or ()) - set(PURCHASE_OPTIONS)
        if unknown:
            raise ValueError(f"unknown purchase options: {sorted(unknown)}")


@dataclass(frozen=True)
class Recommendation:
    """One highlighted option; `row_index` is its position (and index label) in the table."""

    key: str  # cheapest_meeting_deadline | fastest_within_budget | best_cost_per_token
    # | lowest_risk
    row_index: int
    title: str
    why: str


@dataclass(frozen=True)
class PlanResult:
    """Costed options (feasible first, by rank), highlights and counts of what was dropped.

    `table` has OUTPUT_COLUMNS; the index is 0..n-1 (= Recommendation.row_index). Besides the
    configuration, layout and price columns as given (as_of as an ISO string):
    - time_to_train_hours: expected wall-clock hours, incl. spot checkpoints, restarts and
      rework; simulated_hours: the simulator's uninterrupted estimate; time_p10/p50/p90_hours.
    - expected_interruptions, checkpoint_interval_hours (spot rows with a hazard; else 0/NaN).
    - compute_usd, storage_usd, egress_usd, total_usd (at expected time), total_p90_usd.
    - usd_per_million_tokens / _samples: total_usd per unit trained; steady_usd_per_million_
      tokens: rate × nodes × expected hours per unit (no storage, egress or term floor).
    - deadline_miss_probability, budget_overrun_probability, miss_probability (either);
      0 when the limit is not set.
    - meets_deadline (expected time ≤ deadline), within_budget (expected total ≤ budget),
      infeasible_reason ("" | "misses deadline" | "over budget" | both joined by "; "),
      is_pareto, rank (Int64, 1 = cheapest feasible; <NA> if infeasible).
    - memory_headroom_gib = memory_capacity_gib − memory_per_gpu_gib.
    `infeasible` counts option rows per reason ("misses deadline", "over budget"; a row may
    count under both), plus configurations that do not fit memory (from the sweep) and
    configurations with no current price at all.
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
            keep = np.array(sorted(set(range(min(limit, len(self.table)))) | chosen), dtype=int)
        rows = self.table.iloc[keep].assign(row_index=keep)
        return {
            "options": json.loads(rows.to_json(orient="records")),
            "n_options": len(self.table),
            "n_feasible": int(self.table["rank"].notna().sum()),
            "recommendations": [json_safe(r) for r in self.recommendations],
            "infeasible": dict(self.infeasible),
            "n_samples_per_spot_run": self.n_samples_per_spot_run,
            "assumptions": json_safe(self.assumptions),
            "constraints": json_safe(_constraints_dict(self.constraints)),
        }


def _constraints_dict(constraints: PlanConstraints) -> dict[str, Any]:
    return {name: sorted(value) if isinstance(value, Collection) else value
            for name, value in constraints.__dict__.items()}


@dataclass(frozen=True)
class RunTimes:
    """Per option row, hours (and probabilities)."""

    expected_hours: np.ndarray
    p10_hours: np.ndarray
    p50_hours: np.ndarray
    p90_hours: np.ndarray
    deadline_miss_probability: np.ndarray
    budget_overrun_probability: np.ndarray
    miss_probability: np.ndarray  # P(misses the deadline or overruns the budget)
    checkpoint_interval_hours: np.ndarray  # NaN where nothing is checkpointed for spot
    expected_interruptions: np.ndarray


def plan(
    configs: pd.DataFrame,
    prices: pd.DataFrame,
    assumptions: PlanAssumptions,
    constraints: PlanConstraints,
    *,
    n_memory_infeasible: int = 0,
) -> PlanResult:
    """Cost, risk-rate and rank every configuration × price option (see module docstring).

    configs: CONFIG_COLUMNS, one row per (instance_key, nodes), hours and GiB as named.
    prices: PRICE_COLUMNS, usd_per_hour per instance-hour (> 0), purchase_option in
    PURCHASE_OPTIONS. `n_memory_infeasible`: configurations the sweep dropped for memory.
    Raises ValueError on bad input or when no option passes the filters.
    """
    _check_configs(configs)
    _check_prices(prices)
    if n_memory_infeasible < 0:
        raise ValueError("n_memory_infeasible must be >= 0")
    cfg_rows, price_rows = _option_pairs(configs, prices, constraints)
    work = _work_table(configs, prices, cfg_rows, price_rows)
    rates = _option_rates(work, assumptions)
    times, n_samples = _run_times(work, cfg_rows, rates, assumptions, constraints)
    outcomes = _outcomes(work, rates, times, constraints)
    table = _final_table(configs, prices, cfg_rows, price_rows, outcomes)
    n_unpriced = int((~configs["instance_key"].isin(prices["instance_key"])).sum())
    reasons = outcomes["infeasible_reason"]
    infeasible = {
        REASON_DEADLINE: int(np.isin(reasons, list(_REASONS_WITH[REASON_DEADLINE])).sum()),
        REASON_BUDGET: int(np.isin(reasons, list(_REASONS_WITH[REASON_BUDGET])).sum()),
        REASON_MEMORY: int(n_memory_infeasible),
        REASON_UNPRICED: n_unpriced,
    }
    recommendations = recommend_options(table, constraints)
    return PlanResult(table, recommendations, infeasible, n_samples, assumptions, constraints)


def _check_configs(configs: pd.DataFrame) -> None:
    missing = [c for c in CONFIG_COLUMNS if c not in configs.columns]
    if missing or configs.empty:
        raise ValueError(f"configs: empty or missing columns {missing}")
    numbers = configs[["nodes", "gpus", "time_to_train_hours", "time_to_train_p10_hours",
                       "time_to_train_p90_hours"]].to_numpy(dtype=np.float64)
    if not (np.isfinite(numbers).all() and (numbers > 0).all()):
        raise ValueError("configs: nodes, gpus and times to train must be finite and > 0")
    if configs[["instance_key", "gpu"]].isna().any().any():
        raise ValueError("configs: missing instance_key or gpu")
    p10, p90 = numbers[:, 3], numbers[:, 4]
    if (p10 > p90).any():
        raise ValueError("configs: time_to_train_p10_hours must be <= time_to_train_p90_hours")


def _check_prices(prices: pd.DataFrame) -> None:
    missing = [c for c in PRICE_COLUMNS if c not in prices.columns]
    if missing or prices.empty:
        raise ValueError(f"prices: empty or missing columns {missing}")
    rates = prices["usd_per_hour"].to_numpy(dtype=np.float64)
    if not (np.isfinite(rates).all() and (rates > 0).all()):
        raise ValueError("prices: usd_per_hour must be finite and > 0")
    unknown = set(prices["purchase_option"].unique()) - set(PURCHASE_OPTIONS)
    if unknown:
        raise ValueError(f"prices: unknown purchase options {sorted(map(str, unknown))}")
    if prices[list(PRICE_COLUMNS)].isna().any().any():
        raise ValueError("prices: missing values (every price needs names and an as_of date)")


def _gpu_allowed(gpus: pd.Series, allowed: Collection[str]) -> np.ndarray:
    """Exact name, or model prefix followed by a space, case-insensitive."""
    names = gpus.astype(str).str.lower()
    mask = np.zeros(len(gpus), dtype=bool)
    for name in (str(a).lower() for a in allowed):
        mask |= ((names == name) | names.str.startswith(name + " ")).to_numpy()
    return mask


def _option_pairs(configs: pd.DataFrame, prices: pd.DataFrame,
                  constraints: PlanConstraints) -> tuple[np.ndarray, np.ndarray]:
    """Positions (config row, price row) of every option passing the filters."""
    price_ok = np.ones(len(prices), dtype=bool)
    for column in ("provider", "region", "purchase_option"):
        allowed = getattr(constraints, f"{column}s")
        if allowed is not None:
            price_ok &= prices[column].isin(list(allowed)).to_numpy()
    cfg_ok = np.ones(len(configs), dtype=bool)
    if constraints.gpus is not None:
        cfg_ok = _gpu_allowed(configs["gpu"], constraints.gpus)
    left = pd.DataFrame({"key": configs["instance_key"].to_numpy()[cfg_ok],
                         "cfg": np.flatnonzero(cfg_ok)})
    right = pd.DataFrame({"key": prices["instance_key"].to_numpy()[price_ok],
                          "price": np.flatnonzero(price_ok)})
    pairs = left.merge(right, on="key").sort_values(["cfg", "price"], kind="stable")
    if pairs.empty:
        raise ValueError("no priced option passes the filters (providers, regions, gpus, "
                         "purchase options)")
    return pairs["cfg"].to_numpy(), pairs["price"].to_numpy()


def _iso_dates(values: pd.Series) -> pd.Series:
    """as_of as ISO strings (dates stay dates, strings are kept as given)."""
    lookup = {v: v if isinstance(v, str) else v.isoformat() for v in values.unique()}
    return values.map(lookup)


def _categorical(values: pd.Series, rows: np.ndarray) -> pd.Categorical:
    """values[rows] without copying strings row by row."""
    codes, uniques = pd.factorize(values)
    return pd.Categorical.from_codes(codes[rows], categories=uniques)


def _work_table(configs: pd.DataFrame, prices: pd.DataFrame, cfg_rows: np.ndarray,
                price_rows: np.ndarray) -> pd.DataFrame:
    """The columns the costing needs, one row per option (strings as categoricals)."""
    numbers = ("nodes", "time_to_train_hours", "time_to_train_p10_hours",
               "time_to_train_p90_hours", "tokens_per_second", "samples_per_second",
               "memory_capacity_gib", "memory_per_gpu_gib")
    work = {name: configs[name].to_numpy(dtype=np.float64)[cfg_rows] for name in numbers}
    return pd.DataFrame({
        **work,
        "gpu": _categorical(configs["gpu"].astype(str), cfg_rows),
        "provider": _categorical(prices["provider"], price_rows),
        "purchase_option": _categorical(prices["purchase_option"], price_rows),
        "usd_per_hour": prices["usd_per_hour"].to_numpy(dtype=np.float64)[price_rows],
    })


def _lookup(values: pd.Series, mapping: Mapping[str, float], what: str) -> np.ndarray:
    """mapping[value] per row (factorized: one dict lookup per distinct value)."""
    codes, uniques = pd.factorize(values)
    missing = sorted(str(v) for v in uniques if v not in mapping)
    if missing:
        raise ValueError(f"assumptions: no {what} for {missing}")
    return np.array([mapping[v] for v in uniques], dtype=np.float64)[codes]


def _option_rates(table: pd.DataFrame, assumptions: PlanAssumptions) -> OptionRates:
    stored_gb = assumptions.dataset_gb + assumptions.checkpoints_kept * assumptions.checkpoint_gb
    storage = _lookup(table["provider"], assumptions.storage_usd_per_gb_month,
                      "storage_usd_per_gb_month of providers")
    egress = _lookup(table["provider"], assumptions.egress_usd_per_gb,
                     "egress_usd_per_gb of providers")
    per_hour, after = storage_rates(stored_gb, storage, assumptions.storage_months)
    term_years = _lookup(table["purchase_option"], PURCHASE_TERM_YEARS, "term of options")
    return OptionRates(
        usd_per_hour=table["usd_per_hour"].to_numpy(dtype=np.float64),
        nodes=table["nodes"].to_numpy(dtype=np.float64),
        min_billed_hours=min_billed_hours(term_years, assumptions.commitment_reuse_fraction),
        storage_usd_per_hour=per_hour,
        storage_fixed_usd=after,
        egress_usd=assumptions.egress_gb * egress,
    )


def _hazard_for(provider: str, gpu: str, assumptions: PlanAssumptions) -> float:
    by_gpu = assumptions.spot_hazard_per_instance_hour_by_gpu.get(provider, {})
    name = gpu.lower()
    for key, hazard in by_gpu.items():
        if name == key.lower() or name.startswith(key.lower() + " "):
            return float(hazard)
    if provider not in assumptions.spot_hazard_per_instance_hour:
        raise ValueError(f"assumptions: no spot hazard for provider {provider!r}")
    return float(assumptions.spot_hazard_per_instance_hour[provider])


def spot_hazards(table: pd.DataFrame, assumptions: PlanAssumptions) -> np.ndarray:
    """Hazard per instance-hour of every spot row (0 for other rows)."""
    spot = (table["purchase_option"] == "spot").to_numpy()
    hazards = np.zeros(len(table), dtype=np.float64)
    if not spot.any():
        return hazards
    pairs = table.loc[spot, ["provider", "gpu"]].astype(str)
    codes, uniques = pd.MultiIndex.from_frame(pairs).factorize()
    lookup = np.array([_hazard_for(p, g, assumptions) for p, g in uniques], dtype=np.float64)
    hazards[spot] = lookup[codes]
    return hazards


def _samples_per_run(n_runs: int, assumptions: PlanAssumptions) -> int:
    """Fewer samples per run when there are many runs, never below MIN_SAMPLES_PER_RUN
    (unless monte_carlo_samples asks for fewer)."""
    share = assumptions.max_total_samples // max(n_runs, 1)
    return int(min(assumptions.monte_carlo_samples, max(MIN_SAMPLES_PER_RUN, share)))


def _checkpoint_hours(nodes: np.ndarray, assumptions: PlanAssumptions) -> np.ndarray:
    bandwidth = np.minimum(assumptions.checkpoint_write_gbytes_per_s * nodes,
                           assumptions.checkpoint_max_aggregate_gbytes_per_s)
    return np.asarray(assumptions.checkpoint_gb / bandwidth / 3600.0, dtype=np.float64)


def _thresholds(n_rows: int, rates: OptionRates,
                constraints: PlanConstraints) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Run hours beyond which a row misses the deadline, the budget, either."""
    deadline = np.full(n_rows, constraints.deadline_hours or np.inf)
    budget = (np.full(n_rows, np.inf) if constraints.budget_usd is None
              else rates.hours_at_budget(constraints.budget_usd))
    return deadline, budget, np.minimum(deadline, budget)


def _run_times(table: pd.DataFrame, cfg_rows: np.ndarray, rates: OptionRates,
               assumptions: PlanAssumptions, constraints: PlanConstraints) -> tuple[RunTimes, int]:
    """Analytic lognormal times for every row, then Monte Carlo for spot rows with hazard."""
    point = table["time_to_train_hours"].to_numpy(dtype=np.float64)
    p10 = table["time_to_train_p10_hours"].to_numpy(dtype=np.float64)
    p90 = table["time_to_train_p90_hours"].to_numpy(dtype=np.float64)
    mu, sigma = lognormal_from_p10_p90(p10, p90)
    thresholds = _thresholds(len(table), rates, constraints)
    columns = {
        "expected_hours": point.copy(), "p10_hours": p10.copy(), "p50_hours": np.exp(mu),
        "p90_hours": p90.copy(),
        "deadline_miss_probability": lognormal_exceed_probability(mu, sigma, thresholds[0]),
        "budget_overrun_probability": lognormal_exceed_probability(mu, sigma, thresholds[1]),
        "miss_probability": lognormal_exceed_probability(mu, sigma, thresholds[2]),
        "checkpoint_interval_hours": np.full(len(table), np.nan),
        "expected_interruptions": np.zeros(len(table)),
    }
    hazards = spot_hazards(table, assumptions)
    spot = np.flatnonzero(hazards > 0)
    n_samples = 0
    if spot.size:
        runs, codes = _spot_runs(table, cfg_rows, spot, hazards, mu, sigma, assumptions)
        n_samples = _samples_per_run(len(runs.work_hours), assumptions)
        rng = np.random.default_rng(assumptions.seed)
        samples = np.sort(runs.sample_hours(rng, n_samples), axis=1)
        _fill_spot(columns, spot, codes, runs, samples, thresholds)
    return RunTimes(**columns), n_samples


def _spot_runs(table: pd.DataFrame, cfg_rows: np.ndarray, spot: np.ndarray,
               hazards: np.ndarray, mu: np.ndarray, sigma: np.ndarray,
               assumptions: PlanAssumptions) -> tuple[SpotRuns, np.ndarray]:
    """Distinct (configuration, hazard) runs of the spot rows and each row's run index."""
    codes, _ = pd.MultiIndex.from_arrays([cfg_rows[spot], hazards[spot]]).factorize()
    codes = np.asarray(codes)
    first = np.empty(int(codes.max()) + 1, dtype=np.int64)
    first[codes[::-1]] = spot[::-1]
    nodes = table["nodes"].to_numpy(dtype=np.float64)[first]
    runs = SpotRuns(
        work_hours=table["time_to_train_hours"].to_numpy(dtype=np.float64)[first],
        log_mu=mu[first],
        log_sigma=sigma[first],
        checkpoint_hours=_checkpoint_hours(nodes, assumptions),
        job_hazard_per_hour=hazards[first] * nodes,
        restart_hours=assumptions.restart_overhead_hours,
    )
    return runs, codes


def _fill_spot(columns: dict[str, np.ndarray], spot: np.ndarray, codes: np.ndarray,
               runs: SpotRuns, samples: np.ndarray,
               thresholds: tuple[np.ndarray, np.ndarray, np.ndarray]) -> None:
    columns["expected_hours"][spot] = runs.expected_hours()[codes]
    for name, q in (("p10_hours", 0.1), ("p50_hours", 0.5), ("p90_hours", 0.9)):
        columns[name][spot] = sorted_quantile(samples, q)[codes]
    names = ("deadline_miss_probability", "budget_overrun_probability", "miss_probability")
    for name, threshold in zip(names, thresholds, strict=True):
        columns[name][spot] = sample_exceed_probability(samples, codes, threshold[spot])
    columns["checkpoint_interval_hours"][spot] = runs.rework_interval_hours()[codes]
    interruptions = runs.job_hazard_per_hour * runs.work_hours * runs.checkpoint_factor()
    columns["expected_interruptions"][spot] = interruptions[codes]


OUTPUT_COLUMNS = (
    "instance_key", "provider", "region", "instance_type", "gpu", "gpus", "nodes",
    *LAYOUT_COLUMNS, "purchase_option", "usd_per_hour", "as_of", "source", "is_derived",
    "is_spot", "time_to_train_hours", "time_p10_hours", "time_p50_hours", "time_p90_hours",
    "simulated_hours", "expected_interruptions", "checkpoint_interval_hours", "compute_usd",
    "storage_usd", "egress_usd", "total_usd", "total_p90_usd", "usd_per_million_tokens",
    "usd_per_million_samples", "steady_usd_per_million_tokens", "deadline_miss_probability",
    "budget_overrun_probability", "miss_probability", "meets_deadline", "within_budget",
    "is_pareto", "rank", "infeasible_reason", "mfu", "memory_per_gpu_gib",
    "memory_capacity_gib", "memory_headroom_gib", "step_seconds", "samples_per_second",
    "tokens_per_second", "gpu_hours", "energy_kwh",
)


def _per_million(usd: np.ndarray, per_second: np.ndarray, hours: np.ndarray) -> np.ndarray:
    """USD per million units trained (units = rate × simulated hours); NaN without a rate."""
    millions = per_second * hours * 3600.0 / 1e6
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(millions > 0, usd / millions, np.nan)


def _reasons(meets_deadline: np.ndarray, within_budget: np.ndarray) -> np.ndarray:
    late, over = ~meets_deadline, ~within_budget
    reasons = np.full(len(late), "", dtype=object)
    reasons[late & ~over] = REASON_DEADLINE
    reasons[over & ~late] = REASON_BUDGET
    reasons[late & over] = REASON_BOTH
    return reasons


def _outcomes(work: pd.DataFrame, rates: OptionRates, times: RunTimes,
              constraints: PlanConstraints) -> dict[str, np.ndarray]:
    """Computed columns of the output table, in option order."""
    expected = times.expected_hours
    simulated = work["time_to_train_hours"].to_numpy()
    total = rates.total_usd(expected)
    steady = rates.usd_per_hour * rates.nodes * expected
    tokens = work["tokens_per_second"].to_numpy()
    meets = expected <= (constraints.deadline_hours or np.inf)
    within = total <= (constraints.budget_usd or np.inf)
    return {
        "is_spot": (work["purchase_option"] == "spot").to_numpy(),
        "time_to_train_hours": expected, "time_p10_hours": times.p10_hours,
        "time_p50_hours": times.p50_hours, "time_p90_hours": times.p90_hours,
        "simulated_hours": simulated, "expected_interruptions": times.expected_interruptions,
        "checkpoint_interval_hours": times.checkpoint_interval_hours,
        "compute_usd": rates.compute_usd(expected), "storage_usd": rates.storage_usd(expected),
        "egress_usd": rates.egress_usd, "total_usd": total,
        "total_p90_usd": rates.total_usd(times.p90_hours),
        "usd_per_million_tokens": _per_million(total, tokens, simulated),
        "usd_per_million_samples": _per_million(
            total, work["samples_per_second"].to_numpy(), simulated),
        "steady_usd_per_million_tokens": _per_million(steady, tokens, simulated),
        "deadline_miss_probability": times.deadline_miss_probability,
        "budget_overrun_probability": times.budget_overrun_probability,
        "miss_probability": times.miss_probability,
        "meets_deadline": meets, "within_budget": within,
        "infeasible_reason": _reasons(meets, within),
        "memory_headroom_gib": (work["memory_capacity_gib"] - work["memory_per_gpu_gib"])
        .to_numpy(),
    }


def pareto_mask(hours: np.ndarray, usd: np.ndarray) -> np.ndarray:
    """True where no other point is at least as fast and as cheap and better in one of them
    (equal points are all kept)."""
    order = np.lexsort((usd, hours))
    sorted_hours, sorted_usd = hours[order], usd[order]
    running_min = np.minimum.accumulate(sorted_usd)
    group_start = np.searchsorted(sorted_hours, sorted_hours, side="left")
    faster_min = np.where(group_start > 0, running_min[np.maximum(group_start - 1, 0)], np.inf)
    on_front = (sorted_usd == sorted_usd[group_start]) & (sorted_usd < faster_min)
    mask = np.empty(len(hours), dtype=bool)
    mask[order] = on_front
    return mask


def _final_table(configs: pd.DataFrame, prices: pd.DataFrame, cfg_rows: np.ndarray,
                 price_rows: np.ndarray, outcomes: dict[str, np.ndarray]) -> pd.DataFrame:
    """Feasible rows first in rank order (expected total, time, non-spot first), then the
    others by the same keys; Pareto flags and rank among feasible rows."""
    feasible = outcomes["infeasible_reason"] == ""
    hours, usd = outcomes["time_to_train_hours"], outcomes["total_usd"]
    order = np.lexsort((outcomes["is_spot"], hours, usd, ~feasible))
    feasible = feasible[order]
    pareto = np.zeros(len(order), dtype=bool)
    pareto[feasible] = pareto_mask(hours[order][feasible], usd[order][feasible])
    rank = pd.arrays.IntegerArray(np.cumsum(feasible).astype(np.int64), ~feasible)
    kept = [c for c in CONFIG_COLUMNS if c in OUTPUT_COLUMNS and c not in outcomes]
    base = configs.iloc[cfg_rows[order]][kept]
    dated = prices[list(PRICE_COLUMNS[1:])].assign(as_of=_iso_dates(prices["as_of"]))
    priced = dated.iloc[price_rows[order]].reset_index(drop=True)
    computed = pd.DataFrame({name: values[order] for name, values in outcomes.items()})
    table = pd.concat([base.reset_index(drop=True), priced, computed], axis=1)
    table = table.assign(is_pareto=pareto, rank=rank)
    return table[list(OUTPUT_COLUMNS)]


def _pick(table: pd.DataFrame, mask: np.ndarray, keys: list[np.ndarray]) -> int | None:
    """Row position of the smallest `keys` (primary first) among `mask`, else None."""
    candidates = np.flatnonzero(mask & np.isfinite(keys[0]))
    if not candidates.size:
        return None
    order = np.lexsort([key[candidates] for key in reversed(keys)])
    return int(candidates[order[0]])


def _option_label(row: pd.Series) -> str:
    return (f"{row['instance_type']} × {row['nodes']:g} ({row['gpus']:g} × {row['gpu']}, "
            f"{row['purchase_option']}) in {row['provider']} {row['region']}")


def _deadline_text(row: pd.Series, constraints: PlanConstraints) -> str:
    if constraints.deadline_hours is None:
        return ""
    return (f" against the {constraints.deadline_hours:,.0f} h deadline "
            f"({row['deadline_miss_probability']:.1%} chance of missing it)")


def _cheapest(table: pd.DataFrame, feasible: np.ndarray, c: PlanConstraints,
              n_feasible: int) -> Recommendation | None:
    index = _pick(table, feasible, [table["total_usd"].to_numpy(),
                                    table["time_to_train_hours"].to_numpy()])
    if index is None:
        return None
    row = table.iloc[index]
    title = "Cheapest meeting the deadline" if c.deadline_hours is not None else "Cheapest"
    why = (f"{_option_label(row)}: lowest expected total ${row['total_usd']:,.0f} of "
           f"{n_feasible} feasible options; expected {row['time_to_train_hours']:,.1f} h "
           f"(P90 {row['time_p90_hours']:,.1f} h){_deadline_text(row, c)}.")
    return Recommendation("cheapest_meeting_deadline", index, title, why)


def _fastest(table: pd.DataFrame, feasible: np.ndarray,
             c: PlanConstraints) -> Recommendation | None:
    index = _pick(table, feasible, [table["time_to_train_hours"].to_numpy(),
                                    table["total_usd"].to_numpy()])
    if index is None:
        return None
    row = table.iloc[index]
    budget = "" if c.budget_usd is None else f" within the ${c.budget_usd:,.0f} budget"
    why = (f"{_option_label(row)}: shortest expected time {row['time_to_train_hours']:,.1f} h "
           f"(P90 {row['time_p90_hours']:,.1f} h) for ${row['total_usd']:,.0f}{budget}.")
    title = "Fastest within budget" if c.budget_usd is not None else "Fastest"
    return Recommendation("fastest_within_budget", index, title, why)


def _best_per_token(table: pd.DataFrame, feasible: np.ndarray) -> Recommendation | None:
    """Lowest compute cost per million tokens at the option's hourly rate (what the hardware
    costs per unit of work if kept busy; a single run's total also carries storage, egress
    and any unused commitment term)."""
    unit, column = "token", "steady_usd_per_million_tokens"
    if not np.isfinite(table[column].to_numpy(dtype=np.float64)).any():
        unit, column = "sample", "usd_per_million_samples"
    steady = table[column].to_numpy(dtype=np.float64)
    index = _pick(table, feasible, [steady, table["total_usd"].to_numpy()])
    if index is None:
        return None
    row = table.iloc[index]
    why = (f"{_option_label(row)}: ${row[column]:.3g} per million {unit}s at "
           f"${row['usd_per_hour']:,.2f} per instance-hour and {row['mfu']:.0%} MFU; this run "
           f"costs ${row['total_usd']:,.0f} in total.")
    return Recommendation("best_cost_per_token", index, f"Best cost per {unit}", why)


def _lowest_risk(table: pd.DataFrame, feasible: np.ndarray,
                 c: PlanConstraints) -> Recommendation | None:
    """Lowest P(miss deadline or budget), ties within RISK_RESOLUTION → non-spot → cheapest.
    With neither limit set, risk is read as the P90 total cost."""
    is_spot = table["is_spot"].to_numpy().astype(np.float64)
    usd = table["total_usd"].to_numpy()
    if c.deadline_hours is None and c.budget_usd is None:
        index = _pick(table, feasible, [table["total_p90_usd"].to_numpy(), is_spot, usd])
        if index is None:
            return None
        row = table.iloc[index]
        why = (f"{_option_label(row)}: lowest P90 total ${row['total_p90_usd']:,.0f} "
               f"(expected ${row['total_usd']:,.0f}); no deadline or budget is set.")
        return Recommendation("lowest_risk", index, "Lowest risk", why)
    risk = np.round(table["miss_probability"].to_numpy() / RISK_RESOLUTION)
    index = _pick(table, feasible, [risk, is_spot, usd])
    if index is None:
        return None
    row = table.iloc[index]
    limits = " or ".join(name for name, value in (
        ("deadline", c.deadline_hours), ("budget", c.budget_usd)) if value is not None)
    spot = (f", {row['expected_interruptions']:.1f} spot interruptions expected"
            if row["is_spot"] else "")
    why = (f"{_option_label(row)}: {row['miss_probability']:.1%} chance of missing the {limits} "
           f"(P90 {row['time_p90_hours']:,.1f} h, ${row['total_p90_usd']:,.0f}{spot}); "
           f"expected ${row['total_usd']:,.0f}.")
    return Recommendation("lowest_risk", index, "Lowest risk", why)


def recommend_options(table: pd.DataFrame,
                      constraints: PlanConstraints) -> tuple[Recommendation, ...]:
    """Highlights among feasible rows of a plan table; empty when nothing is feasible."""
    feasible = table["rank"].notna().to_numpy()
    picks = (
        _cheapest(table, feasible, constraints, int(feasible.sum())),
        _fastest(table, feasible, constraints),
        _best_per_token(table, feasible),
        _lowest_risk(table, feasible, constraints),
    )
    return tuple(pick for pick in picks if pick is not None)
