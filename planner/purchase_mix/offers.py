"""Service: price a history's GPU types from current prices (one GpuOffer per type).

Reads through selectors (the only reader of prices here) and decides through the core
(core/instance_choice.py): which instance type, and the cheaper equivalent elsewhere.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from planner.core.purchase_options import NO_UPFRONT, RESERVATIONS, SAVINGS_PLANS
from planner.purchase_mix import selectors
from planner.purchase_mix.core.instance_choice import (
    InstanceCandidate,
    choose_on_demand,
    elsewhere_rate,
)
from planner.purchase_mix.core.offers import CommitmentOption, GpuOffer
from planner.purchase_mix.core.savings_plan import SavingsPlanOffer
from planner.purchase_mix.core.upload.gpu_names import CatalogGpu, match_accelerators
from pricing.models import Price, PurchaseOption


@dataclass(frozen=True)
class GpuDemandSize:
    """How much of one GPU type a history needs: P90 of hourly average concurrent GPUs."""

    gpu_type: str
    p90_gpus: float


@dataclass
class OfferSet:
    """Offers for the history's GPU types, the price rows behind them, and what stayed unpriced."""

    offers: list[GpuOffer] = field(default_factory=list)
    savings_plans: list[SavingsPlanOffer] = field(default_factory=list)
    prices: list[dict[str, Any]] = field(default_factory=list)
    # (GPU type, price, fields to override) of each price row, in order: turned into `prices`
    # at the end of gpu_offers, so the discounts read on-demand prices once, not per row
    priced: list[tuple[str, Price, dict[str, Any]]] = field(default_factory=list)
    accelerators: dict[str, str] = field(default_factory=dict)
    unpriced: dict[str, str] = field(default_factory=dict)


def gpu_words(price: Price) -> str:
    """"A100 SXM4-40GB": the catalog GPU with its form factor (SXM or PCIe) and memory."""
    accelerator = price.instance_type.accelerator
    return f"{accelerator.model} {accelerator.variant}".strip()


def candidate(price: Price) -> InstanceCandidate:
    return InstanceCandidate(
        key=price.pk, usd_per_hour=float(price.usd_per_hour),
        gpus_per_instance=price.instance_type.gpu_count,
        provider=price.instance_type.provider.slug, region=price.region.code,
        instance_type=price.instance_type.name, gpu_words=gpu_words(price),
    )


def commitment_option(option: str, years: float, price: Price) -> CommitmentOption:
    """A term and payment option; prices without payment fields read as no upfront."""
    upfront, recurring = price.upfront_usd, price.recurring_usd_per_hour
    return CommitmentOption(
        option, years, float(price.usd_per_hour),
        payment_option=price.payment_option or NO_UPFRONT,
        upfront_usd=float(upfront) if upfront is not None else 0.0,
        recurring_usd_per_hour=float(recurring) if recurring is not None else None,
        offering_class=price.offering_class,
    )


def _slugs_for(
    gpu_type: str, accelerator_map: Mapping[str, str], catalog: list[CatalogGpu]
) -> tuple[str, ...]:
    if gpu_type in accelerator_map:
        return match_accelerators(accelerator_map[gpu_type], catalog)
    return match_accelerators(gpu_type, catalog)


def _add_offer(
    result: OfferSet, size: GpuDemandSize, chosen: Price, band: str, elsewhere: Price | None,
    burst: Price | None = None,
) -> None:
    name = size.gpu_type
    od = float(chosen.usd_per_hour)
    result.priced.append((name, chosen, {}))
    if burst is not None and burst.pk != chosen.pk:
        result.priced.append((name, burst, {
            "purchase_words": "On-demand for bursts (the cheapest GPU-hour here)",
            "is_burst": True}))
    commitments = []
    for option, years in RESERVATIONS.items():
        for price in selectors.payment_options(option, chosen):
            if float(price.usd_per_hour) > 0:
                commitments.append(commitment_option(option, years, price))
                result.priced.append((name, price, {}))
    spot = selectors.same_node(PurchaseOption.SPOT, chosen)
    if spot is not None and float(spot.usd_per_hour) > 0:
        result.priced.append((name, spot, {}))
    other = elsewhere_rate(candidate(chosen), candidate(elsewhere) if elsewhere else None)
    result.offers.append(
        GpuOffer(
            gpu_type=name,
            provider=chosen.instance_type.provider.slug,
            region=chosen.region.code,
            instance_type=chosen.instance_type.name,
            gpus_per_instance=chosen.instance_type.gpu_count,
            on_demand_usd_per_hour=od,
            commitments=tuple(commitments),
            spot_usd_per_hour=float(spot.usd_per_hour) if spot is not None else None,
            spot_interruptions_per_hour=(
                selectors.spot_hazard_per_hour(band) if spot is not None else 0.0),
            elsewhere_usd_per_hour=other.usd_per_hour if other else None,
            elsewhere=other.words if other else "",
            gpu_words=gpu_words(chosen),
            burst_instance_type=burst.instance_type.name if burst is not None else "",
            burst_gpus_per_instance=burst.instance_type.gpu_count if burst is not None else 0,
            burst_usd_per_hour=float(burst.usd_per_hour) if burst is not None else None,
        )
    )
    result.accelerators[name] = chosen.instance_type.accelerator.slug


def _add_savings_plans(result: OfferSet, chosen: dict[str, Price]) -> None:
    rates: dict[str, dict[str, float]] = {}
    for name, on_demand in chosen.items():
        for option in SAVINGS_PLANS:
            price = selectors.same_node(option, on_demand)
            if price is not None and float(price.usd_per_hour) > 0:
                rates.setdefault(option, {})[name] = float(price.usd_per_hour)
                result.priced.append((name, price, {}))
    for option, by_type in rates.items():
        result.savings_plans.append(
            SavingsPlanOffer(option, SAVINGS_PLANS[option], by_type))


def _pick(rows: list[Price], p90_gpus: float, *, sells: set[tuple[int, int]]) -> Price | None:
    # Buy where commitments are sold, when any place (or any instance type in the chosen
    # provider and region) sells them: the p3dn.24xlarge that reserves V100s, not the
    # p3.16xlarge that does not.
    committing = [p for p in rows if (p.instance_type_id, p.region_id) in sells]
    pool = committing if committing else rows
    best = choose_on_demand([candidate(p) for p in pool], p90_gpus)
    return next((p for p in pool if best is not None and p.pk == best.key), None)


def _cheapest_gpu_hour(rows: Iterable[Price]) -> Price | None:
    return min(rows, key=lambda p: (p.usd_per_gpu_hour, p.pk), default=None)


def gpu_offers(
    *,
    sizes: Iterable[GpuDemandSize],
    provider: str,
    region: str,
    spot_bands: Mapping[str, str],
    accelerator_map: Mapping[str, str],
) -> OfferSet:
    """One GpuOffer per GPU type from current prices in the chosen provider/region ("" = any).

    Each name maps to catalog accelerators (an explicit accelerator_map entry first); the
    instance type is the cheapest on-demand $/GPU-hour (core choose_on_demand); commitments,
    savings plans and spot come from the same instance type and region.
    """
    catalog = selectors.catalog_gpus()
    result = OfferSet()
    chosen: dict[str, Price] = {}
    sells = selectors.commitment_nodes()
    for size in sizes:
        slugs = _slugs_for(size.gpu_type, accelerator_map, catalog)
        if not slugs:
            result.unpriced[size.gpu_type] = "no catalog GPU matches this name"
            continue
        rows = selectors.current_on_demand(provider, region, slugs)
        price = _pick(rows, size.p90_gpus, sells=sells)
        if price is None:
            where = " ".join(filter(None, [provider, region])) or "any provider"
            result.unpriced[size.gpu_type] = f"no on-demand price for {', '.join(slugs)} in {where}"
            continue
        band = selectors.spot_band_for(price.instance_type.provider.slug, spot_bands)
        # Bursts buy the cheapest on-demand GPU-hour of the type in the same place.
        burst = _cheapest_gpu_hour(p for p in rows if p.region_id == price.region_id and
                                   p.instance_type.provider_id == price.instance_type.provider_id)
        _add_offer(result, size, price, band,
                   _cheapest_gpu_hour(selectors.cloud_on_demand(slugs)), burst)
        chosen[size.gpu_type] = price
    _add_savings_plans(result, chosen)
    listed = selectors.price_dicts([(name, price) for name, price, _ in result.priced])
    result.prices = [{**row, **extra} for row, (_, _, extra) in zip(listed, result.priced,
                                                                   strict=True)]
    return result
