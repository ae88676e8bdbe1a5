"""The hindsight reference: the exact cost-minimising commitment if the past repeated
exactly ("what you would have bought knowing the future").

A reference for backtests and look-back sensitivity only, never the recommendation (that is
buy.what_to_buy, risk-sized on forecast paths). Per type: interruptible demand goes to spot
when spot's effective rate beats on-demand; the rest is covered by whole-instance
commitments sized exactly on the hourly replay (commitment.py), within the buying rule's
history gates (buying_rule.py) like every purchase the product shows. Money in USD.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from planner.core.spot import DEFAULT_CHECKPOINT_POLICY, CheckpointPolicy, SpotPlan
from planner.purchase_mix.core.buying_rule import history_gate
from planner.purchase_mix.core.commitment import TermRate, solve_commitment
from planner.purchase_mix.core.demand import HourlyDemand
from planner.purchase_mix.core.forecast import option_block
from planner.purchase_mix.core.offers import GpuOffer, offers_by_type
from planner.purchase_mix.core.replay import MixReplay, base_instances, replay_mix, type_columns
from planner.purchase_mix.core.savings_plan import SavingsPlanOffer
from planner.purchase_mix.core.spot_jobs import spot_plan_for
from planner.purchase_mix.core.type_plan import TypeDecision


def hindsight_type(
    offer: GpuOffer, firm: np.ndarray, interruptible: np.ndarray, spot: SpotPlan | None,
    *, is_gated: bool = False,
) -> TypeDecision:
    """Spot for interruptible demand if it pays; exact commitment levels for the rest.
    is_gated: only the terms the buying rule's history gates allow (none under 30 days)."""
    is_spot = spot is not None and spot.is_chosen and float(interruptible.sum()) > 0
    base = base_instances(offer, firm, interruptible, is_spot)
    gate = history_gate(firm + interruptible) if is_gated else None
    terms = [TermRate(option.usd_per_hour,
                      0 if gate is not None and option_block(option, gate)
                      else option.max_instances)
             for option in offer.commitments]
    solution = solve_commitment(base, terms, offer.on_demand_usd_per_hour)
    return TypeDecision(offer.gpu_type, solution.levels, is_spot)


def hindsight_decisions(
    demand: HourlyDemand,
    offers: Sequence[GpuOffer],
    *,
    checkpoint_policy: CheckpointPolicy = DEFAULT_CHECKPOINT_POLICY,
    is_gated: bool = False,
) -> tuple[TypeDecision, ...]:
    """The exact optimum on `demand`: one decision per priced GPU type present in it
    (is_gated: within the buying rule's history gates; backtests fit it ungated)."""
    by_type = offers_by_type(offers)
    decisions = []
    for gpu_type in demand.gpu_types:
        if gpu_type not in by_type:
            continue
        offer = by_type[gpu_type]
        firm, interruptible = type_columns(demand, gpu_type)
        spot = spot_plan_for(
            offer, demand.interruptible_job_gpus.get(gpu_type), checkpoint_policy,
            demand.interruptible_gpu_hours_by_job_gpus.get(gpu_type),
        )
        decisions.append(hindsight_type(offer, firm, interruptible, spot, is_gated=is_gated))
    return tuple(decisions)


def hindsight_replay(
    demand: HourlyDemand,
    offers: Sequence[GpuOffer],
    *,
    checkpoint_policy: CheckpointPolicy = DEFAULT_CHECKPOINT_POLICY,
    savings_plans: Sequence[SavingsPlanOffer] = (),
    is_gated: bool = False,
) -> MixReplay:
    """The hindsight optimum on `demand`, replayed on it (its cost is the lowest possible;
    is_gated, as every page shows it: among purchases the buying rule allows, nothing
    committed under 30 days of history, no 3-year term under 90 days or on a decline).

    demand: hourly average concurrent GPUs (split_hourly_demand, or HourlyDemand.from_total).
    offers: one GpuOffer per GPU type; types without an offer are listed as unpriced.
    """
    if demand.n_hours == 0:
        raise ValueError("no demand hours")
    decisions = hindsight_decisions(demand, offers, checkpoint_policy=checkpoint_policy,
                                    is_gated=is_gated)
    return replay_mix(
        decisions, demand, offers, checkpoint_policy=checkpoint_policy, savings_plans=savings_plans
    )
