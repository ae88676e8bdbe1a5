"""Chart-ready breakdowns of core results: duration histogram with the fitted log-normal,
the purchase mix hour by hour, cost against commitment level, and the savings steps.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy.special import ndtr

from planner.core.serialize import json_safe
from planner.purchase_mix.core.commitment import TermRate, replay_cost_usd
from planner.purchase_mix.core.demand import HourlyDemand
from planner.purchase_mix.core.replay import MixReplay, TypePlan


@dataclass(frozen=True)
class DurationHistogram:
    """Job counts per log-spaced duration bin (hours) and the fitted log-normal's counts.

    len(edges_hours) == len(counts) + 1; fitted_counts is n * P(bin) under the fit.
    """

    edges_hours: tuple[float, ...]
    counts: tuple[int, ...]
    fitted_counts: tuple[float, ...]

    def to_dict(self) -> dict[str, Any]:
        result: dict[str, Any] = json_safe(self)
        return result


def duration_histogram(
    duration_hours: np.ndarray, *, mu_log_hours: float, sigma_log_hours: float, n_bins: int = 40
) -> DurationHistogram:
    """Histogram of positive durations on log-spaced bins, with the log-normal expectation."""
    positive = duration_hours[duration_hours > 0]
    if len(positive) == 0 or n_bins <= 0:
        raise ValueError("need positive durations and n_bins > 0")
    low, high = float(positive.min()), float(positive.max())
    high = high if high > low else low * 1.01 + 1e-9
    edges = np.geomspace(low, high, n_bins + 1)
    counts, _ = np.histogram(positive, bins=edges)
    if sigma_log_hours > 0:
        cdf = ndtr((np.log(edges) - mu_log_hours) / sigma_log_hours)
    else:
        cdf = (np.log(edges) >= mu_log_hours).astype(float)
    fitted = len(positive) * np.diff(cdf)
    return DurationHistogram(
        tuple(float(e) for e in edges),
        tuple(int(c) for c in counts),
        tuple(float(f) for f in fitted),
    )


def _type_base_gpus(plan: TypePlan, demand: HourlyDemand) -> tuple[np.ndarray, np.ndarray]:
    name = plan.offer.gpu_type
    firm = demand.firm_gpus[name].to_numpy(dtype=np.float64)
    interruptible = demand.interruptible_gpus[name].to_numpy(dtype=np.float64)
    if plan.decision.is_spot:
        return firm, interruptible
    return firm + interruptible, np.zeros_like(firm)


def hourly_mix(purchase: MixReplay) -> pd.DataFrame:
    """GPUs per hour served by commitments, on demand and spot, summed over priced types.

    Columns committed_gpus, on_demand_gpus, spot_gpus; index = the demand's hours.
    Unused committed capacity is not counted (it is paid but serves no demand).
    """
    demand = purchase.demand
    committed = np.zeros(demand.n_hours)
    on_demand = np.zeros(demand.n_hours)
    spot = np.zeros(demand.n_hours)
    for plan in purchase.plans:
        base, to_spot = _type_base_gpus(plan, demand)
        level_gpus = float(sum(plan.decision.levels)) * plan.offer.gpus_per_instance
        used = np.minimum(base, level_gpus)
        committed += used
        on_demand += base - used
        spot += to_spot
    return pd.DataFrame(
        {"committed_gpus": committed, "on_demand_gpus": on_demand, "spot_gpus": spot},
        index=demand.firm_gpus.index,
    )


@dataclass(frozen=True)
class CostCurve:
    """Replayed cost (USD over the demand window) for each whole-instance commitment level."""

    gpu_type: str
    term: str
    gpus_per_instance: int
    levels_instances: tuple[int, ...]
    cost_usd: tuple[float, ...]
    best_level_instances: int


def commitment_cost_curve(plan: TypePlan, demand: HourlyDemand) -> CostCurve | None:
    """Cost against commitment level in the plan's cheapest term (None without terms).

    Uncapped, the exact solver puts the whole commitment in the cheapest term, so this
    curve's minimum is the hindsight optimum (a reference, not what to buy).
    """
    offer = plan.offer
    if not offer.commitments:
        return None
    cheapest = min(offer.commitments, key=lambda option: option.usd_per_hour)
    base, _ = _type_base_gpus(plan, demand)
    instances = base / offer.gpus_per_instance
    peak = int(math.ceil(float(instances.max()))) if len(instances) else 0
    levels = tuple(range(peak + 1))
    term = [TermRate(cheapest.usd_per_hour)]
    costs = tuple(
        replay_cost_usd(instances, [level], term, offer.on_demand_usd_per_hour)
        for level in levels
    )
    best = int(np.argmin(costs))
    return CostCurve(offer.gpu_type, cheapest.term, offer.gpus_per_instance, levels, costs, best)


@dataclass(frozen=True)
class SavingsSteps:
    """All-on-demand cost, minus what commitments and spot save, equals the mix's cost (USD)."""

    all_on_demand_cost_usd: float
    commitment_savings_usd: float
    spot_savings_usd: float
    cost_usd: float


def savings_steps(purchase: MixReplay) -> SavingsSteps:
    """Split the total savings into the commitment part and the spot part (they add up)."""
    spot_savings = 0.0
    for plan in purchase.plans:
        outcome = plan.expected
        od_per_gpu_hour = plan.offer.on_demand_usd_per_gpu_hour
        spot_savings += outcome.spot_gpu_hours * od_per_gpu_hour - outcome.spot_cost_usd
    total = purchase.total
    return SavingsSteps(
        all_on_demand_cost_usd=total.all_on_demand_cost_usd,
        commitment_savings_usd=total.savings_usd - spot_savings,
        spot_savings_usd=spot_savings,
        cost_usd=total.cost_usd,
    )
