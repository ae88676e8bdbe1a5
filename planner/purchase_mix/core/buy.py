"""What to buy: THE recommendation of a purchase-mix analysis. Per GPU type, the risk-sized
layered commitments (risk.py) as lines a buyer can act on, beside spot and on-demand shares,
the worst case, and the purchase replayed hour by hour on the history (replay.py). Every
view (page, charts, reports, API, CLI) reads this one object; the hindsight optimum
(hindsight.py) is a labelled reference only.

A type's split of GPU-hours (committed, on demand, spot) is the replay's, the one number the
page, the carbon burst, the reports and the API show. The sizing's first-year coverage
(risk.py, P50 over bootstrapped, growth-scaled paths) is a forecast and stays labelled as
such in `sizing`.

Baseline: on-demand of the same provider, region and instance type as the commitment, unless
the caller allows spot or on-demand elsewhere as the alternative; a cheaper equivalent
elsewhere is reported beside it either way. Money in USD; rates per instance-hour; shares in %
of the type's GPU-hours in the replay.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from planner.core.formatting import label
from planner.core.serialize import json_safe
from planner.core.spot import DEFAULT_CHECKPOINT_POLICY, CheckpointPolicy, SpotPlan
from planner.purchase_mix.core.buying_rule import BuyLine, buy_line
from planner.purchase_mix.core.demand import HourlyDemand
from planner.purchase_mix.core.offers import GpuOffer, offers_by_type
from planner.purchase_mix.core.outcome import ReplayOutcome
from planner.purchase_mix.core.replay import MixReplay, replay_mix
from planner.purchase_mix.core.risk import RiskSettings, TypeSizing, size_type
from planner.purchase_mix.core.savings_plan import SavingsPlanOffer
from planner.purchase_mix.core.spot_jobs import spot_plan_for
from planner.purchase_mix.core.type_plan import TypeDecision


@dataclass(frozen=True)
class Alternative:
    """The cheapest way to run an instance-hour of this type without commitment."""

    usd_per_hour: float
    words: str


@dataclass(frozen=True)
class Elsewhere:
    """A cheaper on-demand equivalent outside the chosen place: information, not the baseline
    (unless the caller allows it as the alternative)."""

    usd_per_hour: float  # per instance of the chosen size (GPUs scaled)
    words: str  # "the same GPUs cost $X/h on-demand at Y (...)"


@dataclass(frozen=True)
class TypeBuy:
    gpu_type: str
    offer: GpuOffer
    alternative: Alternative
    sizing: TypeSizing
    lines: tuple[BuyLine, ...]
    is_spot: bool
    spot: SpotPlan | None
    # % of the type's GPU-hours in the replay of the purchase (they add up to 100):
    spot_share_pct: float  # interruptible jobs sent to spot
    committed_share_pct: float  # served by the commitments (= the replay's coverage)
    on_demand_share_pct: float  # above the commitments: the burst
    off_spot_gpu_hours: float = 0.0  # interruptible jobs too large or too long for spot
    elsewhere: Elsewhere | None = None
    # The same split in GPU-hours (the replay's), demand = committed + on demand + spot.
    demand_gpu_hours: float = 0.0
    committed_gpu_hours: float = 0.0
    on_demand_gpu_hours: float = 0.0
    spot_gpu_hours: float = 0.0


@dataclass(frozen=True)
class WhatToBuy:
    """The recommendation. `replay` is this purchase replayed on the sizing window's hourly
    demand (cost, coverage, hourly mix; its commitment levels are the lines' counts)."""

    types: tuple[TypeBuy, ...]
    lines: tuple[BuyLine, ...]
    first_year_worst_case_usd: float  # sum over types of each type's CVaR (conservative)
    first_year_savings_p50_usd: float
    upfront_usd: float
    usd_per_hour: float
    settings: RiskSettings
    replay: MixReplay | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe, without the replay's hourly demand series."""
        result: dict[str, Any] = json_safe(self)
        if result.get("replay"):
            result["replay"].pop("demand", None)
        return result


def elsewhere_for(offer: GpuOffer) -> Elsewhere | None:
    """The cheaper on-demand equivalent elsewhere, in words, or None when none is cheaper."""
    rate = offer.elsewhere_usd_per_hour
    if not rate or rate >= offer.on_demand_usd_per_hour:
        return None
    # "the same number", not "the same GPUs": the machine elsewhere may hold another variant
    # (PCIe for SXM) or fewer GPUs a machine, which its words say.
    return Elsewhere(rate, f"the same number of {offer.gpu_type} GPUs "
                           f"({offer.gpus_per_instance}) cost ${rate:,.2f}/h on-demand at "
                           f"{offer.elsewhere}")


def alternative_for(offer: GpuOffer, spot: SpotPlan | None, *, is_spot_allowed: bool,
                    is_elsewhere_allowed: bool) -> Alternative:
    """Cheapest allowed no-commitment rate per instance-hour, with where it comes from.
    By default: on-demand of the same provider, region and instance type (like with like)."""
    where = f"{label(offer.provider)} {offer.region}"
    found = [Alternative(offer.on_demand_usd_per_hour,
                         f"on-demand {offer.instance_type} in {where}")]
    if is_elsewhere_allowed and offer.elsewhere_usd_per_hour:
        found.append(Alternative(offer.elsewhere_usd_per_hour, f"on-demand at {offer.elsewhere}"))
    if is_spot_allowed and spot is not None:
        found.append(Alternative(
            spot.effective_usd_per_hour,
            f"spot in {where} with "
            f"{100 * spot.overhead_fraction:.1f}% interruption overhead",
        ))
    return min(found, key=lambda item: item.usd_per_hour)


def _lines(offer: GpuOffer, sizing: TypeSizing) -> tuple[BuyLine, ...]:
    """The risk-sized layers as purchase lines (the buying rule's one format, its sentence
    included: never changed after buy_line builds it)."""
    return tuple(
        buy_line(offer, layer.option, layer.count,
                 alternative_usd_per_hour=sizing.alternative_usd_per_hour,
                 savings_usd=layer.savings_usd,
                 first_year_savings_usd=layer.first_year_savings_usd)
        for layer in sizing.layers)


def buy_decision(item: TypeBuy) -> TypeDecision:
    """The purchase as replayable levels: instances per commitment option, in offer order."""
    levels = tuple(
        sum(layer.count for layer in item.sizing.layers if layer.option == option)
        for option in item.offer.commitments
    )
    return TypeDecision(item.gpu_type, levels, item.is_spot)


@dataclass(frozen=True)
class TypeInputs:
    """One type's hourly demand split for buying: `base_instances` may be committed;
    `spot_instances` run on spot (zero when spot is not chosen)."""

    base_instances: np.ndarray
    spot_instances: np.ndarray
    spot: SpotPlan | None
    is_spot: bool
    alternative: Alternative


def type_inputs(
    offer: GpuOffer,
    demand: HourlyDemand,
    *,
    is_spot_allowed: bool,
    is_elsewhere_allowed: bool,
    checkpoint_policy: CheckpointPolicy = DEFAULT_CHECKPOINT_POLICY,
) -> TypeInputs:
    name = offer.gpu_type
    firm = demand.firm_gpus[name].to_numpy(dtype=np.float64) / offer.gpus_per_instance
    spare = demand.interruptible_gpus[name].to_numpy(dtype=np.float64) / offer.gpus_per_instance
    spot = spot_plan_for(offer, demand.interruptible_job_gpus.get(name), checkpoint_policy,
                         demand.interruptible_gpu_hours_by_job_gpus.get(name))
    is_spot = spot is not None and spot.is_chosen and float(spare.sum()) > 0
    alternative = alternative_for(offer, spot, is_spot_allowed=is_spot_allowed,
                                  is_elsewhere_allowed=is_elsewhere_allowed)
    if is_spot:
        return TypeInputs(firm, spare, spot, True, alternative)
    return TypeInputs(firm + spare, np.zeros_like(spare), spot, False, alternative)


def buy_type(
    offer: GpuOffer,
    demand: HourlyDemand,
    *,
    settings: RiskSettings,
    is_spot_allowed: bool,
    is_elsewhere_allowed: bool,
    service_years_left: float | None,
    checkpoint_policy: CheckpointPolicy = DEFAULT_CHECKPOINT_POLICY,
) -> TypeBuy:
    inputs = type_inputs(offer, demand, is_spot_allowed=is_spot_allowed,
                         is_elsewhere_allowed=is_elsewhere_allowed,
                         checkpoint_policy=checkpoint_policy)
    alternative, spot, is_spot = inputs.alternative, inputs.spot, inputs.is_spot
    sizing = size_type(inputs.base_instances, offer.commitments,
                       alternative_usd_per_hour=alternative.usd_per_hour,
                       settings=settings, service_years_left=service_years_left)
    # The split is filled in from the replay (with_replayed_split), never from the sizing.
    return TypeBuy(offer.gpu_type, offer, alternative, sizing, _lines(offer, sizing), is_spot,
                   spot, 0.0, 0.0, 0.0,
                   demand.off_spot_gpu_hours.get(offer.gpu_type, 0.0), elsewhere_for(offer))


def with_replayed_split(item: TypeBuy, outcome: ReplayOutcome) -> TypeBuy:
    """`item` with its split of GPU-hours taken from `outcome`, its purchase replayed hour by
    hour: committed (used), on demand and spot GPU-hours, and their % of demand (sum 100)."""
    total = outcome.demand_gpu_hours

    def pct(gpu_hours: float) -> float:
        return 100.0 * gpu_hours / total if total > 0 else 0.0

    return replace(
        item,
        spot_share_pct=pct(outcome.spot_gpu_hours),
        committed_share_pct=pct(outcome.committed_gpu_hours_used),
        on_demand_share_pct=pct(outcome.on_demand_gpu_hours),
        demand_gpu_hours=total,
        committed_gpu_hours=outcome.committed_gpu_hours_used,
        on_demand_gpu_hours=outcome.on_demand_gpu_hours,
        spot_gpu_hours=outcome.spot_gpu_hours,
    )


def what_to_buy(
    demand: HourlyDemand,
    offers: Sequence[GpuOffer],
    *,
    settings: RiskSettings,
    is_spot_allowed: bool = False,
    is_elsewhere_allowed: bool = False,
    service_years_left: Mapping[str, float] | None = None,
    savings_plans: Sequence[SavingsPlanOffer] = (),
) -> WhatToBuy:
    """Risk-sized purchases for every priced GPU type in `demand` (see risk.py), replayed on
    `demand` hour by hour (`replay`, with the savings-plan alternatives for the same demand)."""
    by_type = offers_by_type(offers)
    years_left = service_years_left or {}
    types = tuple(
        buy_type(by_type[name], demand, settings=settings, is_spot_allowed=is_spot_allowed,
                 is_elsewhere_allowed=is_elsewhere_allowed,
                 service_years_left=years_left.get(name))
        for name in demand.gpu_types
        if name in by_type
    )
    replay = replay_mix(tuple(buy_decision(item) for item in types), demand, offers,
                        savings_plans=savings_plans)
    replayed = {plan.offer.gpu_type: plan.expected for plan in replay.plans}
    types = tuple(with_replayed_split(item, replayed[item.gpu_type]) for item in types)
    lines = tuple(line for item in types for line in item.lines)
    return WhatToBuy(
        types=types,
        lines=lines,
        first_year_worst_case_usd=sum(item.sizing.first_year_worst_case_usd for item in types),
        first_year_savings_p50_usd=sum(item.sizing.first_year_savings_usd.p50 for item in types),
        upfront_usd=sum(line.upfront_usd for line in lines),
        usd_per_hour=sum(line.usd_per_hour for line in lines),
        settings=settings,
        replay=replay,
    )
