"""The serving plan's purchase mix: the cheapest on-demand configuration's instance type,
its current commitment and spot prices (read as the purchase mix reads them), and the core's
mix by the one buying rule (planner.serving.core.mix). JSON for the plan document."""

from __future__ import annotations

import math
from dataclasses import asdict
from typing import Any

import numpy as np

from planner.core.purchase_options import NO_UPFRONT, ON_DEMAND, RESERVATIONS, SPOT
from planner.core.serialize import json_safe
from planner.purchase_mix.core.offers import GpuOffer
from planner.purchase_mix.core.risk import RiskSettings
from planner.purchase_mix.offers import commitment_option
from planner.serving.core.fields import ServingInput
from planner.serving.core.mix import serving_mix
from planner.serving.core.plan import ServingOption, ServingPlan
from pricing.models import Price
from pricing.selectors import current_prices

NO_ON_DEMAND = ("No on-demand configuration in the ranking: tick on-demand among the purchase "
                "options to have the fleet's purchase mix.")


def _cheapest(rows: list[Price]) -> dict[tuple[str, str, str], Price]:
    """The cheapest current price of each purchase option, payment option and class."""
    by_key: dict[tuple[str, str, str], Price] = {}
    for price in sorted(rows, key=lambda p: (p.usd_per_hour, -p.as_of.toordinal())):
        key = (price.purchase_option, price.payment_option or NO_UPFRONT, price.offering_class)
        by_key.setdefault(key, price)
    return by_key


def mix_offer(option: ServingOption) -> GpuOffer | None:
    """The option's instance type in its region with its on-demand, commitment (every payment
    option sold) and spot prices, in one read; None without an on-demand price."""
    rows = list(current_prices(purchase_options=[ON_DEMAND, SPOT, *RESERVATIONS],
                               providers=[option.provider]).filter(
        instance_type__name=option.instance_type, region__code=option.region,
        usd_per_hour__gt=0))
    prices = _cheapest(rows)
    chosen = next((p for (code, _, _), p in prices.items() if code == ON_DEMAND), None)
    if chosen is None:
        return None
    spot = next((p for (code, _, _), p in prices.items() if code == SPOT), None)
    commitments = tuple(commitment_option(code, RESERVATIONS[code], price)
                        for (code, _, _), price in prices.items() if code in RESERVATIONS)
    return GpuOffer(option.gpu, option.provider, option.region, option.instance_type,
                    chosen.instance_type.gpu_count, float(chosen.usd_per_hour), commitments,
                    float(spot.usd_per_hour) if spot is not None else None)


def mix_document(checked: ServingInput, plan: ServingPlan) -> dict[str, Any]:
    """The purchase of the cheapest on-demand configuration's fleet: the rule's lines (the
    same fields as the purchase mix's what-to-buy), the peaks, spot, and the monthly cost of
    the mix against all on-demand."""
    option = next((o for o in plan.options if o.purchase_option == ON_DEMAND), None)
    offer = mix_offer(option) if option is not None else None
    if option is None or offer is None:
        return {"is_available": False, "lines": [NO_ON_DEMAND]}
    layout = option.layout
    history = checked.traffic.history_rate_per_s
    history_instances = np.asarray(layout.hourly_instances(
        history, option.goodput_per_replica_per_s, offer.gpus_per_instance) if history else (),
        float)
    request = checked.request
    mix = serving_mix(offer, option.instances_by_hour, history_instances,
                      scale_up_minutes=request.scale_up_minutes,
                      is_offline=math.isinf(request.ttft_p99_s) and math.isinf(
                          request.tpot_p99_s), settings=RiskSettings())
    return {
        "is_available": True,
        "configuration": f"{option.provider} {option.instance_type} ({option.gpu}), "
                         f"{layout.label}, {option.region}",
        "base_instances": mix.base_instances, "peak_instances": mix.peak_instances,
        "committed_instances": mix.committed_instances, "is_forecast": mix.is_forecast,
        "history_days": mix.committed.gate.days,
        "scale_up_minutes": request.scale_up_minutes,
        "committed": [json_safe(asdict(line)) for line in mix.committed.lines],
        "reasons": list(dict.fromkeys(mix.committed.reasons)),
        "lines": list(mix.lines),
        "committed_usd_per_month": mix.committed_usd_per_month,
        "on_demand_usd_per_month": mix.on_demand_usd_per_month,
        "spot_usd_per_month": mix.spot_usd_per_month,
        "mix_usd_per_month": mix.mix_usd_per_month,
        "all_on_demand_usd_per_month": mix.all_on_demand_usd_per_month,
        "saving_usd_per_month": mix.saving_usd_per_month,
        "on_demand_usd_per_hour": offer.on_demand_usd_per_hour,
        "price_as_of": option.price_as_of, "price_source": option.price_source,
    }
