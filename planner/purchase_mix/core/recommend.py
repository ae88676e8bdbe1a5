"""Purchase-mix recommendation per GPU type: commitments by term, on-demand rest, spot.

Per type: interruptible demand goes to spot when spot's effective rate including checkpoint
and rework overhead (planner.core.spot) beats on-demand; the remaining demand is covered by
whole-instance commitments sized exactly on the hourly replay (commitment.py);
the rest runs on demand. Savings plans (USD/h across types) are solved separately as an
alternative for the same demand (savings_plan.py).
Risk "P10 week": each week of demand is scaled to the 10th percentile of weekly mean demand
and the chosen mix is replayed on it (negative savings = stranded commitment).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from planner.core.cloud import HOURS_PER_YEAR
from planner.core.purchase_options import PURCHASE_OPTION_WORDS
from planner.core.serialize import json_safe
from planner.core.spot import DEFAULT_CHECKPOINT_POLICY, CheckpointPolicy, SpotPlan, plan_spot
from planner.purchase_mix.core.commitment import TermRate, solve_commitment
from planner.purchase_mix.core.demand import HourlyDemand
from planner.purchase_mix.core.offers import GpuOffer
from planner.purchase_mix.core.outcome import ReplayOutcome, make_outcome, sum_outcomes
from planner.purchase_mix.core.savings_plan import SavingsPlanOffer
from planner.purchase_mix.core.savings_plan_mix import SavingsPlanResult, savings_plan_results
from planner.purchase_mix.core.type_plan import TermCommitment, TypeDecision, TypePlan

HOURS_PER_WEEK = 168
__all__ = ["MixRecommendation", "TermCommitment", "TypeDecision", "TypePlan", "recommend_mix"]


@dataclass(frozen=True)
class MixRecommendation:
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


def offers_by_type(offers: Sequence[GpuOffer]) -> dict[str, GpuOffer]:
    by_type: dict[str, GpuOffer] = {}
    for offer in offers:
        if offer.gpu_type in by_type:
            raise ValueError(f"more than one offer for {offer.gpu_type}")
        by_type[offer.gpu_type] = offer
    return by_type


def spot_plan_for(
    offer: GpuOffer,
    job_gpus: float | None,
    policy: CheckpointPolicy,
    gpu_hours_by_job_gpus: Mapping[int, float] | None = None,
) -> SpotPlan | None:
    """Spot's effective rate for this type's interruptible jobs. With the GPU-hours per job
    size, the overhead is computed per size (instances per job from its GPUs) and averaged
    by GPU-hours; otherwise from the mean job size `job_gpus`."""
    if offer.spot_usd_per_hour is None:
        return None
    if gpu_hours_by_job_gpus:
        return _spot_by_size(offer, gpu_hours_by_job_gpus, policy)
    gpus = job_gpus if job_gpus else float(offer.gpus_per_instance)
    return _spot(offer, gpus, policy)


def _spot(offer: GpuOffer, gpus: float, policy: CheckpointPolicy) -> SpotPlan:
    assert offer.spot_usd_per_hour is not None
    return plan_spot(
        spot_usd_per_hour=offer.spot_usd_per_hour,
        interruptions_per_hour=offer.spot_interruptions_per_hour,
        on_demand_usd_per_hour=offer.on_demand_usd_per_hour,
        instances_per_job=float(max(1, math.ceil(gpus / offer.gpus_per_instance))),
        policy=policy,
    )


def _spot_by_size(
    offer: GpuOffer, gpu_hours: Mapping[int, float], policy: CheckpointPolicy
) -> SpotPlan:
    total = sum(gpu_hours.values())
    plans = {gpus: _spot(offer, float(gpus), policy) for gpus in gpu_hours}
    overhead = sum(plans[g].overhead_fraction * hours for g, hours in gpu_hours.items()) / total
    instances = sum(plans[g].instances_per_job * hours for g, hours in gpu_hours.items()) / total
    effective = (offer.spot_usd_per_hour or 0.0) * (1.0 + overhead)
    mtbf = [p.mean_hours_between_interruptions for p in plans.values()]
    return SpotPlan(
        spot_usd_per_hour=offer.spot_usd_per_hour or 0.0,
        instances_per_job=instances,
        mean_hours_between_interruptions=min((m for m in mtbf if m), default=None),
        checkpoint_interval_hours=None,
        overhead_fraction=overhead,
        effective_usd_per_hour=effective,
        is_chosen=effective < offer.on_demand_usd_per_hour,
    )


def _base_instances(
    offer: GpuOffer, firm: np.ndarray, interruptible: np.ndarray, is_spot: bool
) -> np.ndarray:
    gpus = firm if is_spot else firm + interruptible
    return np.asarray(gpus / offer.gpus_per_instance, dtype=np.float64)


def decide_type(
    offer: GpuOffer, firm: np.ndarray, interruptible: np.ndarray, spot: SpotPlan | None
) -> TypeDecision:
    """Spot for interruptible demand if it pays; exact commitment levels for the rest."""
    is_spot = spot is not None and spot.is_chosen and float(interruptible.sum()) > 0
    terms = [TermRate(option.usd_per_hour, option.max_instances) for option in offer.commitments]
    base = _base_instances(offer, firm, interruptible, is_spot)
    solution = solve_commitment(base, terms, offer.on_demand_usd_per_hour)
    return TypeDecision(offer.gpu_type, solution.levels, is_spot)


def replay_type(
    offer: GpuOffer,
    decision: TypeDecision,
    spot: SpotPlan | None,
    firm: np.ndarray,
    interruptible: np.ndarray,
) -> ReplayOutcome:
    """Cost and metrics of a fixed decision over hourly firm/interruptible GPU demand."""
    g = offer.gpus_per_instance
    base = _base_instances(offer, firm, interruptible, decision.is_spot)
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


def _type_columns(demand: HourlyDemand, gpu_type: str) -> tuple[np.ndarray, np.ndarray]:
    firm = demand.firm_gpus[gpu_type].to_numpy(dtype=np.float64)
    return firm, demand.interruptible_gpus[gpu_type].to_numpy(dtype=np.float64)


def plan_type(
    offer: GpuOffer, decision: TypeDecision, demand: HourlyDemand, policy: CheckpointPolicy
) -> TypePlan:
    firm, interruptible = _type_columns(demand, offer.gpu_type)
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


def decide_mix(
    demand: HourlyDemand,
    offers: Sequence[GpuOffer],
    *,
    checkpoint_policy: CheckpointPolicy = DEFAULT_CHECKPOINT_POLICY,
) -> tuple[TypeDecision, ...]:
    """Fit step: one decision per priced GPU type present in the demand."""
    by_type = offers_by_type(offers)
    decisions = []
    for gpu_type in demand.gpu_types:
        if gpu_type not in by_type:
            continue
        offer = by_type[gpu_type]
        firm, interruptible = _type_columns(demand, gpu_type)
        spot = spot_plan_for(
            offer, demand.interruptible_job_gpus.get(gpu_type), checkpoint_policy,
            demand.interruptible_gpu_hours_by_job_gpus.get(gpu_type),
        )
        decisions.append(decide_type(offer, firm, interruptible, spot))
    return tuple(decisions)


def evaluate_mix(
    decisions: Sequence[TypeDecision],
    demand: HourlyDemand,
    offers: Sequence[GpuOffer],
    *,
    checkpoint_policy: CheckpointPolicy = DEFAULT_CHECKPOINT_POLICY,
    savings_plans: Sequence[SavingsPlanOffer] = (),
) -> MixRecommendation:
    """Replay fixed decisions on (possibly different) demand and report the metrics."""
    by_type = offers_by_type(offers)
    plans = tuple(
        plan_type(by_type[decision.gpu_type], decision, demand, checkpoint_policy)
        for decision in decisions
        if decision.gpu_type in demand.gpu_types
    )
    return MixRecommendation(
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


def recommend_mix(
    demand: HourlyDemand,
    offers: Sequence[GpuOffer],
    *,
    checkpoint_policy: CheckpointPolicy = DEFAULT_CHECKPOINT_POLICY,
    savings_plans: Sequence[SavingsPlanOffer] = (),
) -> MixRecommendation:
    """Recommend commitments (per term, whole instances), on-demand rest and spot per type.

    demand: hourly average concurrent GPUs (split_hourly_demand, or HourlyDemand.from_total).
    offers: one GpuOffer per GPU type; types without an offer are listed as unpriced.
    """
    if demand.n_hours == 0:
        raise ValueError("no demand hours")
    decisions = decide_mix(demand, offers, checkpoint_policy=checkpoint_policy)
    return evaluate_mix(
        decisions, demand, offers, checkpoint_policy=checkpoint_policy, savings_plans=savings_plans
    )


def decisions_by_type(recommendation: MixRecommendation) -> Mapping[str, TypeDecision]:
    return {plan.decision.gpu_type: plan.decision for plan in recommendation.plans}
