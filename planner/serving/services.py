"""The serving plan service: current offers and carbon factors from the catalog, the shipped
serving calibration, and the Django-free ranking in planner.serving.core.plan."""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import date

from planner.core.purchase_options import NO_UPFRONT
from planner.serving.core.plan import ServingOffer, ServingPlan, ServingRequest, plan_serving
from pricing.carbon.selectors import carbon_factors
from pricing.selectors import current_prices
from simulator.services import catalog_gpu_specs
from simulator.serving import serving_calibration

_FIELDS = ("instance_type__provider__slug", "instance_type__name", "region__code",
           "purchase_option", "instance_type__accelerator__model",
           "instance_type__accelerator__variant", "instance_type__gpu_count", "usd_per_hour",
           "as_of", "source__name", "is_derived", "is_estimated")


def serving_offers(*, purchase_options: Sequence[str],
                   providers: Sequence[str] | None = None) -> list[ServingOffer]:
    """The cheapest current region of every instance type and purchase option (listed or
    derived, no-upfront commitments), with that region's grid intensity and PUE."""
    prices = current_prices(purchase_options=purchase_options, providers=providers).filter(
        payment_option__in=["", NO_UPFRONT], offering_class__in=["", "standard"],
        usd_per_hour__gt=0, instance_type__gpu_count__gt=0).order_by("usd_per_hour")
    factors = carbon_factors(accounting="location")
    grid = {(p, r): (float(g), float(pue)) for p, r, g, pue in zip(
        factors["provider"], factors["region"], factors["g_co2e_per_kwh"], factors["pue"],
        strict=True)}
    offers: dict[tuple[str, str, str], ServingOffer] = {}
    for (provider, instance, region, option, model, variant, gpus, usd, as_of, source,
         is_derived, is_estimated) in prices.values_list(*_FIELDS):
        key = (provider, instance, option)
        if key in offers:
            continue
        g, pue = grid.get((provider, region), (math.nan, math.nan))
        basis = "estimated" if is_estimated else "derived" if is_derived else "listed"
        offers[key] = ServingOffer(provider, instance, region, option, f"{model} {variant}",
                                   int(gpus), float(usd), as_of.isoformat(), str(source),
                                   basis, g, pue)
    return list(offers.values())


def serving_plan_build(*, request: ServingRequest, purchase_options: Sequence[str],
                       providers: Sequence[str] | None = None,
                       today: date | None = None) -> ServingPlan:
    """Rank every configuration of the catalog's offers for `request`."""
    cal, bands = serving_calibration()
    offers = serving_offers(purchase_options=purchase_options, providers=providers)
    return plan_serving(request, offers, catalog_gpu_specs(), cal, bands)
