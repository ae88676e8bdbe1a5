"""What to buy for the recommended pool, by the purchase mix's one buying rule
(planner/purchase_mix/core/buying_rule.py): the same history gates, whole instances,
full-term money and line fields as the purchase mix's what-to-buy. No ORM here: services pass
the analysis document in."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import fields
from typing import Any

from planner.capacity.core.frontier import recommend_index
from planner.capacity.core.inputs import CapacityInputs
from planner.capacity.core.jobs import PoolJobs, hourly_gpus
from planner.capacity.core.owned import owned_cost
from planner.capacity.core.points import PointFigures
from planner.capacity.core.prices import CapacityPrices
from planner.core import formatting as fmt
from planner.core.purchase_options import ALL_UPFRONT
from planner.core.serialize import json_safe
from planner.purchase_mix.core.buying_rule import (
    NO_POOL,
    PoolPurchase,
    buy_line,
    history_gate,
    pool_option,
    price_pool,
    ungated,
)
from planner.purchase_mix.core.forecast import (
    MIN_DAYS_FOR_3_YEARS,
    MIN_DAYS_FOR_COMMITMENT,
    HistoryGate,
    option_block,
)
from planner.purchase_mix.core.offers import CommitmentOption, GpuOffer
from planner.purchase_mix.core.risk import RiskSettings, term_savings


def analysis_offer(document: Mapping[str, Any], gpu_type: str) -> dict[str, Any]:
    """The analysis's offer for the type (the instance, its on-demand, spot and commitment
    prices)."""
    for offer in document.get("offers") or []:
        if offer.get("gpu_type") == gpu_type:
            return dict(offer)
    reason = (document.get("unpriced") or {}).get(gpu_type, "no offer in the analysis")
    raise ValueError(f"gpu_type: {gpu_type} has no prices ({reason})")


def gpu_offer(offer: Mapping[str, Any]) -> GpuOffer:
    """The analysis's offer (JSON) as the core's GpuOffer."""
    names = {f.name for f in fields(GpuOffer)} - {"commitments"}
    option_names = {f.name for f in fields(CommitmentOption)}
    return GpuOffer(**{k: v for k, v in offer.items() if k in names}, commitments=tuple(
        CommitmentOption(**{k: v for k, v in c.items() if k in option_names})
        for c in offer.get("commitments") or []))


def pool_gate(jobs: PoolJobs) -> HistoryGate:
    """The buying rule's history gate on the type's no-wait hourly demand."""
    return history_gate(hourly_gpus(jobs))


def risk_settings(document: Mapping[str, Any]) -> RiskSettings:
    """The purchase mix's growth scenarios and paths (its what-to-buy's settings)."""
    given = (document.get("what_to_buy") or {}).get("settings") or {}
    names = {f.name for f in fields(RiskSettings)}
    values = {k: v for k, v in given.items() if k in names}
    if "growth_scenarios_per_year" in values:
        values["growth_scenarios_per_year"] = tuple(values["growth_scenarios_per_year"])
    return RiskSettings(**values)


def is_buyable(document: Mapping[str, Any], jobs: PoolJobs, inputs: CapacityInputs,
               gate: HistoryGate) -> bool:
    """Whether the buying rule lets this history commit to a pool at the chosen price (the
    same gate pool_purchase applies: owned hardware is a term of its lifetime)."""
    if inputs.pool_price == "owned":
        return not option_block(owned_option(jobs.gpu_type, inputs), gate)
    offer = gpu_offer(analysis_offer(document, jobs.gpu_type))
    return pool_option(offer, gate, inputs.pool_price)[0] is not None


def owned_option(gpu_type: str, inputs: CapacityInputs) -> CommitmentOption:
    """Owned GPUs as a term the buying rule prices: bought upfront (with network and
    storage), running costs (power, space, staff) paid hourly, for the hardware's lifetime
    (one GPU an "instance"); its effective rate is every cost line's (core/owned.py)."""
    cost = owned_cost(gpu_type, inputs.owned or {})
    return CommitmentOption("owned", cost.hardware.lifetime_years,
                            max(cost.usd_per_gpu_hour, 1e-9), payment_option=ALL_UPFRONT,
                            upfront_usd=cost.upfront_usd_per_gpu,
                            recurring_usd_per_hour=cost.running_usd_per_gpu_hour)


def _owned(jobs: PoolJobs, inputs: CapacityInputs, pool_gpus: int, alt_per_gpu: float,
           settings: RiskSettings, is_gated: bool) -> PoolPurchase:
    demand = hourly_gpus(jobs)
    offer = GpuOffer(jobs.gpu_type, "owned", "your data centre", f"owned {jobs.gpu_type} GPU",
                     1, alt_per_gpu)
    option = owned_option(jobs.gpu_type, inputs)
    gate = history_gate(demand) if is_gated else ungated(history_gate(demand))
    blocked = option_block(option, gate)
    if blocked or pool_gpus == 0:
        return PoolPurchase((), (blocked or NO_POOL,), gate)
    spread, first = term_savings(demand, option, pool_gpus,
                                 alternative_usd_per_hour=alt_per_gpu, settings=settings)
    line = buy_line(offer, option, pool_gpus, alternative_usd_per_hour=alt_per_gpu,
                    savings_usd=spread, first_year_savings_usd=first)
    return PoolPurchase((line,), (), gate)


def pool_purchase(document: Mapping[str, Any], jobs: PoolJobs, inputs: CapacityInputs,
                  pool_gpus: int, prices: CapacityPrices, *, is_gated: bool = True
                  ) -> dict[str, Any]:
    """What to buy for a pool of `pool_gpus` GPUs, by the one buying rule: whole instances of
    the offer's type on the cheapest allowed commitment (or that many owned GPUs), `lines` in
    the same fields as the purchase mix's what-to-buy; no line and `reasons` when the history
    allows no commitment. Savings are against bursting the same demand at the sweep's
    on-demand price."""
    settings = risk_settings(document)
    alt_per_gpu = prices.on_demand_usd_per_gpu_hour
    if inputs.pool_price == "owned":
        bought = _owned(jobs, inputs, pool_gpus, alt_per_gpu, settings, is_gated)
    else:
        offer = gpu_offer(analysis_offer(document, jobs.gpu_type))
        per = offer.gpus_per_instance
        bought = price_pool(offer, inputs.pool_price, pool_gpus, hourly_gpus(jobs) / per,
                            alternative_usd_per_hour=alt_per_gpu * per, settings=settings,
                            is_gated=is_gated)
    lines = [json_safe(line) for line in bought.lines]
    return {
        "is_owned": inputs.pool_price == "owned", "gpus": sum(x["gpus"] for x in lines),
        "lines": lines, "reasons": list(dict.fromkeys(bought.reasons)),
        "full_term_cost_usd": sum(x["full_term_cost_usd"] for x in lines),
        "upfront_usd": sum(x["upfront_usd"] for x in lines),
        "usd_per_hour": sum(x["usd_per_hour"] for x in lines),
        "history_days": bought.gate.days,
        "words": "; ".join(x["sentence"] for x in lines) or
                 "Nothing committed: " + " ".join(dict.fromkeys(bought.reasons)),
    }


def would_buy(document: Mapping[str, Any], jobs: PoolJobs, inputs: CapacityInputs,
              points: Sequence[PointFigures], target_p95_wait_hours: float,
              prices: CapacityPrices) -> dict[str, Any] | None:
    """When the history allows no commitment: the pool the sweep would recommend without the
    gate, priced by the same rule, labelled as what it would cost (not what to buy)."""
    index = recommend_index(points, target_p95_wait_hours)
    point = points[index]
    if point.pool_gpus == 0:
        return None
    priced = pool_purchase(document, jobs, inputs, point.pool_gpus, prices, is_gated=False)
    return {"pool_gpus": point.pool_gpus, "point_index": index, "lines": priced["lines"],
            "words": f"Not a purchase yet: once the history allows it "
                     f"({MIN_DAYS_FOR_COMMITMENT} days for a 1-year term, "
                     f"{MIN_DAYS_FOR_3_YEARS} days and no decline for longer ones), the "
                     f"cheapest pool meeting the wait target would be {point.pool_gpus:,} GPUs "
                     f"({fmt.usd(point.total_usd)} over the history): "
                     + priced["words"]}
