"""What to buy: per GPU type, the risk-sized layered commitments (risk.py) as lines a buyer
can act on, beside spot and on-demand shares and the worst case. Plain words throughout.

Money in USD; rates per instance-hour; shares of the first year's expected GPU-hours (P50).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from planner.core.purchase_options import PURCHASE_OPTION_WORDS
from planner.core.serialize import json_safe
from planner.core.spot import DEFAULT_CHECKPOINT_POLICY, CheckpointPolicy, SpotPlan
from planner.purchase_mix.core.demand import HourlyDemand
from planner.purchase_mix.core.offers import GpuOffer
from planner.purchase_mix.core.recommend import offers_by_type, spot_plan_for
from planner.purchase_mix.core.risk import RiskSettings, TypeSizing, size_type


@dataclass(frozen=True)
class BuyLine:
    """One purchase: `count` instances of `instance_type` in `region` for the term."""

    gpu_type: str
    provider: str
    region: str
    instance_type: str
    term: str
    term_words: str
    payment_option: str
    payment_words: str
    count: int
    gpus: int
    upfront_usd: float  # all instances, paid at purchase
    usd_per_hour: float  # all instances, effective (upfront amortised + fee)
    recurring_usd_per_hour: float  # all instances, billed hourly
    starting: str


@dataclass(frozen=True)
class Alternative:
    """The cheapest way to run an instance-hour of this type without commitment."""

    usd_per_hour: float
    words: str


@dataclass(frozen=True)
class TypeBuy:
    gpu_type: str
    offer: GpuOffer
    alternative: Alternative
    sizing: TypeSizing
    lines: tuple[BuyLine, ...]
    is_spot: bool
    spot: SpotPlan | None
    spot_share_pct: float  # of the type's GPU-hours: interruptible jobs sent to spot
    committed_share_pct: float  # P50 coverage of the first year
    on_demand_share_pct: float
    off_spot_gpu_hours: float = 0.0  # interruptible jobs too large or too long for spot


@dataclass(frozen=True)
class WhatToBuy:
    types: tuple[TypeBuy, ...]
    lines: tuple[BuyLine, ...]
    first_year_worst_case_usd: float  # sum over types of each type's CVaR (conservative)
    first_year_savings_p50_usd: float
    upfront_usd: float
    usd_per_hour: float
    settings: RiskSettings

    def to_dict(self) -> dict[str, Any]:
        result: dict[str, Any] = json_safe(self)
        return result


def alternative_for(offer: GpuOffer, spot: SpotPlan | None, *, is_spot_allowed: bool,
                    is_elsewhere_allowed: bool) -> Alternative:
    """Cheapest allowed no-commitment rate per instance-hour, with where it comes from."""
    found = [Alternative(offer.on_demand_usd_per_hour,
                         f"on-demand in {offer.provider} {offer.region}")]
    if is_elsewhere_allowed and offer.elsewhere_usd_per_hour:
        found.append(Alternative(offer.elsewhere_usd_per_hour, f"on-demand in {offer.elsewhere}"))
    if is_spot_allowed and spot is not None:
        found.append(Alternative(
            spot.effective_usd_per_hour,
            f"spot in {offer.provider} {offer.region} with "
            f"{100 * spot.overhead_fraction:.1f}% interruption overhead",
        ))
    return min(found, key=lambda item: item.usd_per_hour)


def _lines(offer: GpuOffer, sizing: TypeSizing) -> tuple[BuyLine, ...]:
    lines = []
    for layer in sizing.layers:
        option, count = layer.option, layer.count
        recurring = option.recurring_usd_per_hour
        if recurring is None:
            recurring = option.usd_per_hour if option.upfront_usd == 0 else 0.0
        lines.append(BuyLine(
            gpu_type=offer.gpu_type, provider=offer.provider, region=offer.region,
            instance_type=offer.instance_type, term=option.term,
            term_words=PURCHASE_OPTION_WORDS.get(option.term, option.term),
            payment_option=option.payment_option,
            payment_words=option.payment_words,
            count=count, gpus=count * offer.gpus_per_instance,
            upfront_usd=count * option.upfront_usd, usd_per_hour=count * option.usd_per_hour,
            recurring_usd_per_hour=count * recurring,
            starting="now" if option.term_years > 1 else "now; review at renewal in 12 months",
        ))
    return tuple(lines)


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
    spare = inputs.spot_instances
    total = float(inputs.base_instances.sum() + spare.sum())
    spot_pct = 100.0 * float(spare.sum()) / total if total > 0 else 0.0
    base_pct = 100.0 - spot_pct
    committed_pct = base_pct * sizing.coverage_pct.p50 / 100.0 if sizing.layers else 0.0
    return TypeBuy(offer.gpu_type, offer, alternative, sizing, _lines(offer, sizing), is_spot,
                   spot, spot_pct, committed_pct, base_pct - committed_pct,
                   demand.off_spot_gpu_hours.get(offer.gpu_type, 0.0))


def what_to_buy(
    demand: HourlyDemand,
    offers: Sequence[GpuOffer],
    *,
    settings: RiskSettings,
    is_spot_allowed: bool = False,
    is_elsewhere_allowed: bool = True,
    service_years_left: Mapping[str, float] | None = None,
) -> WhatToBuy:
    """Risk-sized purchases for every priced GPU type in `demand` (see risk.py)."""
    by_type = offers_by_type(offers)
    years_left = service_years_left or {}
    types = tuple(
        buy_type(by_type[name], demand, settings=settings, is_spot_allowed=is_spot_allowed,
                 is_elsewhere_allowed=is_elsewhere_allowed,
                 service_years_left=years_left.get(name))
        for name in demand.gpu_types
        if name in by_type
    )
    lines = tuple(line for item in types for line in item.lines)
    return WhatToBuy(
        types=types,
        lines=lines,
        first_year_worst_case_usd=sum(item.sizing.first_year_worst_case_usd for item in types),
        first_year_savings_p50_usd=sum(item.sizing.first_year_savings_usd.p50 for item in types),
        upfront_usd=sum(line.upfront_usd for line in lines),
        usd_per_hour=sum(line.usd_per_hour for line in lines),
        settings=settings,
    )
