"""Replay a fixed purchase on hourly demand: per GPU type, commitments by term (whole
instances), spot for interruptible jobs when chosen, the rest on demand.

Both the recommendation (what_to_buy in buy.py, risk-sized) and the hindsight reference
(hindsight.py, the exact optimum on the past) are replayed here, so their costs compare.
Savings plans (USD/h across types) are solved separately as an alternative for the same
demand (savings_plan.py). Risk "P10 week": each week of demand is scaled to the 10th
percentile of weekly mean demand and the purchase is replayed on it (negative savings =
stranded commitment). Money in USD, rates per instance-hour.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from planner.core.cloud import HOURS_PER_YEAR
from planner.core.purchase_options import PURCHASE_OPTION_WORDS
from planner.core.serialize import json_safe
from planner.core.spot import DEFAULT_CHECKPOINT_POLICY, CheckpointPolicy, SpotPlan
from planner.purchase_mix.core.demand import HourlyDemand
from planner.purchase_mix.core.offers import GpuOffer, offers_by_type
from planner.purchase_mix.core.outcome import ReplayOutcome, make_outcome, sum_outcomes
from planner.purchase_mix.core.savings_plan import SavingsPlanOffer
from planner.purchase_mix.core.savings_plan_mix import SavingsPlanResult, savings_plan_results
from planner.purchase_mix.core.spot_jobs import spot_plan_for
from planner.purchase_mix.core.type_plan import TermCommitment, TypeDecision, TypePlan

HOURS_PER_WEEK = 168
__all__ = ["MixReplay", "TermCommitment", "TypeDecision", "TypePlan", "replay_mix"]


@dataclass(frozen=True)
class MixReplay:
    """Per-type plans, their sum, the P10-week risk replay and savings-plan alternatives."""

    plans: tuple[TypePlan, ...]
    total: ReplayOutcome
    p10_week_total: ReplayOutcome
    hourly_commitment_usd: float
    total_commitment_usd: float
    savings_plans: tuple[SavingsPlanResult, ...]
    unpriced_gpu_types: tuple[str, ...]
    n_hours: int
    demand: HourlyDemand

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe; includes the hourly demand series and the offers (prices) used."""
        result: dict[str, Any] = json_safe(self)
        return result


def base_instances(
    offer: GpuOffer, firm: np.ndarray, interruptible: np.ndarray, is_spot: bool
) -> np.ndarray:
    gpus = firm if is_spot else firm + interruptible
    return np.asarray(gpus / offer.gpus_per_instance, dtype=np.float64)


def replay_type(
    offer: GpuOffer,
    decision: TypeDecision,
    spot: SpotPlan | None,
    firm: np.ndarray,
    interruptible: np.ndarray,
) -> ReplayOutcome:
    """Cost and metrics of a fixed decision over hourly firm/interruptible GPU demand."""
    g = offer.gpus_per_instance
    base = base_instances(offer, firm, interruptible, decision.is_spot)
    level = float(sum(decision.levels))
    used_instance_hours = float(np.minimum(base, level).sum())
    rates = [option.usd_per_hour for option in offer.commitments]
    spot_gpu_hours = float(interruptible.sum()) if decision.is_spot else 0.0
    spot_rate = spot.effective_usd_per_hour if spot is not None else 0.0
    return make_outcome(
        demand_gpu_hours=float(firm.sum() + interruptible.sum()),
        interruptible_gpu_hours=float(interruptible.sum()),
        committed_gpu_hours=level * g * len(base),
        committed_gpu_hours_used=used_instance_hours * g,
        on_demand_gpu_hours=(float(base.sum()) - used_instance_hours) * g,
        spot_gpu_hours=spot_gpu_hours,
        commitment_cost_usd=len(base) * float(np.dot(decision.levels, rates)) if rates else 0.0,
        on_demand_cost_usd=(float(base.sum()) - used_instance_hours) * offer.on_demand_usd_per_hour,
        spot_cost_usd=spot_gpu_hours / g * spot_rate,
        all_on_demand_cost_usd=float(firm.sum() + interruptible.sum())
        / g
        * offer.on_demand_usd_per_hour,
    )


def p10_week_scale(total_gpus: np.ndarray) -> np.ndarray:
    """Per-hour factors that bring every week (168-hour block) to the P10 weekly mean."""
    n_weeks = max(1, math.ceil(len(total_gpus) / HOURS_PER_WEEK))
    week = np.arange(len(total_gpus)) // HOURS_PER_WEEK
    sums = np.bincount(week, weights=total_gpus, minlength=n_weeks)
    weekly_mean = sums / np.bincount(week, minlength=n_weeks)
    target = float(np.percentile(weekly_mean, 10))
    scale = np.divide(target, weekly_mean, out=np.zeros(n_weeks), where=weekly_mean > 0)
    return np.asarray(scale[week], dtype=np.float64)


def term_commitments(offer: GpuOffer, levels: tuple[int, ...]) -> tuple[TermCommitment, ...]:
    return tuple(
        TermCommitment(
            term=option.term,
            term_years=option.term_years,
            instances=level,
            gpus=level * offer.gpus_per_instance,
            usd_per_hour_per_instance=option.usd_per_hour,
            hourly_commitment_usd=level * option.usd_per_hour,
            total_commitment_usd=level * option.usd_per_hour * HOURS_PER_YEAR * option.term_years,
            break_even_utilization_pct=100.0 * option.usd_per_hour / offer.on_demand_usd_per_hour,
            discount_pct=100.0 * (1.0 - option.usd_per_hour / offer.on_demand_usd_per_hour),
            term_words=PURCHASE_OPTION_WORDS.get(option.term, option.term),
        )
        for option, level in zip(offer.commitments, levels, strict=True)
    )


def type_columns(demand: HourlyDemand, gpu_type: str) -> tuple[np.ndarray, np.ndarray]:
    firm = demand.firm_gpus[gpu_type].to_numpy(dtype=np.float64)
    return firm, demand.interruptible_gpus[gpu_type].to_numpy(dtype=np.float64)


def plan_type(
    offer: GpuOffer, decision: TypeDecision, demand: HourlyDemand, policy: CheckpointPolicy
) -> TypePlan:
    firm, interruptible = type_columns(demand, offer.gpu_type)
    spot = spot_plan_for(
        offer, demand.interruptible_job_gpus.get(offer.gpu_type), policy,
        demand.interruptible_gpu_hours_by_job_gpus.get(offer.gpu_type),
    )
    scale = p10_week_scale(firm + interruptible)
    commitments = term_commitments(offer, decision.levels)
    return TypePlan(
        offer=offer,
        decision=decision,
        commitments=commitments,
        spot=spot,
        expected=replay_type(offer, decision, spot, firm, interruptible),
        p10_week=replay_type(offer, decision, spot, firm * scale, interruptible * scale),
        hourly_commitment_usd=sum(item.hourly_commitment_usd for item in commitments),
        total_commitment_usd=sum(item.total_commitment_usd for item in commitments),
    )


def replay_mix(
    decisions: Sequence[TypeDecision],
    demand: HourlyDemand,
    offers: Sequence[GpuOffer],
    *,
    checkpoint_policy: CheckpointPolicy = DEFAULT_CHECKPOINT_POLICY,
    savings_plans: Sequence[SavingsPlanOffer] = (),
) -> MixReplay:
    """Replay fixed decisions on (possibly different) demand and report the metrics."""
    by_type = offers_by_type(offers)
    plans = tuple(
        plan_type(by_type[decision.gpu_type], decision, demand, checkpoint_policy)
        for decision in decisions
        if decision.gpu_type in demand.gpu_types
    )
    return MixReplay(
        plans=plans,
        total=sum_outcomes([plan.expected for plan in plans]),
        p10_week_total=sum_outcomes([plan.p10_week for plan in plans]),
        hourly_commitment_usd=sum(plan.hourly_commitment_usd for plan in plans),
        total_commitment_usd=sum(plan.total_commitment_usd for plan in plans),
        savings_plans=savings_plan_results(plans, demand, savings_plans),
        unpriced_gpu_types=tuple(name for name in demand.gpu_types if name not in by_type),
        n_hours=demand.n_hours,
        demand=demand,
    )


