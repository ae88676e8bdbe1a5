"""Savings-plan alternative for the demand left after spot, reported next to commitments."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from planner.core.cloud import HOURS_PER_YEAR
from planner.core.purchase_options import PURCHASE_OPTION_WORDS
from planner.purchase_mix.core.demand import HourlyDemand
from planner.purchase_mix.core.savings_plan import SavingsPlanOffer, solve_savings_plan
from planner.purchase_mix.core.type_plan import TypePlan


@dataclass(frozen=True)
class SavingsPlanResult:
    """A USD/h plan sized on the eligible demand (types with a plan rate, spot excluded)."""

    term: str
    term_years: float
    commitment_usd_per_hour: float
    total_commitment_usd: float
    eligible_gpu_types: tuple[str, ...]
    cost_usd: float  # plan + uncovered on-demand of the eligible demand
    all_on_demand_cost_usd: float
    savings_usd: float
    savings_pct: float | None
    coverage_pct: float | None  # covered GPU-hours / eligible GPU-hours
    utilization_pct: float | None  # plan dollars used / plan dollars bought
    discount_pct_by_gpu_type: Mapping[str, float]
    covered_gpu_hours_by_gpu_type: Mapping[str, float]
    term_words: str = ""  # plain words, e.g. "1-year savings plan"


def _eligible_instances(
    plans: Sequence[TypePlan], demand: HourlyDemand, offer: SavingsPlanOffer
) -> pd.DataFrame:
    columns = {}
    for plan in plans:
        name = plan.offer.gpu_type
        if name not in offer.usd_per_hour_by_gpu_type:
            continue
        gpus = demand.firm_gpus[name].to_numpy(dtype=np.float64)
        if not plan.decision.is_spot:
            gpus = gpus + demand.interruptible_gpus[name].to_numpy(dtype=np.float64)
        columns[name] = gpus / plan.offer.gpus_per_instance
    return pd.DataFrame(columns, index=demand.firm_gpus.index)


def _result(
    plans: Sequence[TypePlan], instances: pd.DataFrame, offer: SavingsPlanOffer
) -> SavingsPlanResult:
    by_type = {
        plan.offer.gpu_type: plan.offer
        for plan in plans
        if plan.offer.gpu_type in instances.columns
    }
    on_demand = {name: by_type[name].on_demand_usd_per_hour for name in instances.columns}
    rates = {name: offer.usd_per_hour_by_gpu_type[name] for name in instances.columns}
    solution = solve_savings_plan(instances, on_demand, rates)
    all_on_demand = float(sum(instances[name].sum() * on_demand[name] for name in on_demand))
    gpus_per = {name: by_type[name].gpus_per_instance for name in instances.columns}
    eligible_gpu_hours = float(sum(instances[name].sum() * gpus_per[name] for name in gpus_per))
    covered_gpu_hours = {
        name: solution.covered_instance_hours[name] * gpus_per[name] for name in gpus_per
    }
    used_usd = sum(solution.covered_instance_hours[name] * rates[name] for name in rates)
    bought_usd = solution.commitment_usd_per_hour * len(instances)
    savings = all_on_demand - solution.cost_usd
    return SavingsPlanResult(
        term=offer.term,
        term_words=PURCHASE_OPTION_WORDS.get(offer.term, offer.term),
        term_years=offer.term_years,
        commitment_usd_per_hour=solution.commitment_usd_per_hour,
        total_commitment_usd=solution.commitment_usd_per_hour * HOURS_PER_YEAR * offer.term_years,
        eligible_gpu_types=tuple(instances.columns),
        cost_usd=solution.cost_usd,
        all_on_demand_cost_usd=all_on_demand,
        savings_usd=savings,
        savings_pct=100.0 * savings / all_on_demand if all_on_demand > 0 else None,
        coverage_pct=(
            100.0 * sum(covered_gpu_hours.values()) / eligible_gpu_hours
            if eligible_gpu_hours > 0
            else None
        ),
        utilization_pct=100.0 * used_usd / bought_usd if bought_usd > 0 else None,
        discount_pct_by_gpu_type={
            name: 100.0 * (1 - rates[name] / on_demand[name]) for name in rates
        },
        covered_gpu_hours_by_gpu_type=covered_gpu_hours,
    )


def savings_plan_results(
    plans: Sequence[TypePlan], demand: HourlyDemand, offers: Sequence[SavingsPlanOffer]
) -> tuple[SavingsPlanResult, ...]:
    results = []
    for offer in offers:
        instances = _eligible_instances(plans, demand, offer)
        if len(instances.columns) > 0:
            results.append(_result(plans, instances, offer))
    return tuple(results)
