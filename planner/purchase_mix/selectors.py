"""Reads: a user's histories and runs, and the offers (current prices) a recommendation uses."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from django.db.models import OuterRef, QuerySet, Subquery

from planner.core.cloud import (
    DEFAULT_SPOT_BAND,
    SPOT_BAND_MONTHLY_FRACTION,
    hazard_per_instance_hour,
)
from planner.core.providers import DEFAULT_PROVIDER_SPOT_BANDS
from planner.core.purchase_options import (
    NO_UPFRONT,
    PAYMENT_OPTION_WORDS,
    PURCHASE_OPTION_WORDS,
    RESERVATIONS,
    SAVINGS_PLANS,
)
from planner.purchase_mix.core.offers import CommitmentOption, GpuOffer
from planner.purchase_mix.core.savings_plan import SavingsPlanOffer
from planner.purchase_mix.core.upload.gpu_names import CatalogGpu, match_accelerators
from planner.purchase_mix.models import AnalysisRun, History
from pricing.models import Accelerator, Price, Provider, PurchaseOption
from pricing.selectors import current_prices

BIG_DEMAND_GPUS = 8.0


def owned_histories(owner_id: int) -> QuerySet[History]:
    return History.objects.filter(owner_id=owner_id)


def histories_with_status(owner_id: int) -> QuerySet[History]:
    """The owner's histories, newest first, each with its latest analysis's status and time
    (`analysis_status`, `analyzed_at`; None before any run)."""
    latest = AnalysisRun.objects.filter(history_id=OuterRef("pk")).order_by("-created_at", "-id")
    return owned_histories(owner_id).annotate(
        analysis_status=Subquery(latest.values("status")[:1]),
        analyzed_at=Subquery(latest.values("finished_at")[:1]),
    ).order_by("-created_at")


def latest_run(history_id: int, run_id: int | None = None) -> AnalysisRun | None:
    runs = AnalysisRun.objects.filter(history_id=history_id)
    if run_id is not None:
        runs = runs.filter(pk=run_id)
    return runs.order_by("-created_at", "-id").first()


def spot_hazard_per_hour(band: str) -> float:
    """Per instance-hour reclaim hazard for a monthly band: -ln(1 - fraction) / 730 h."""
    # The bands and provider defaults are the planner's (planner.core.cloud): a history's mix
    # and a plan price spot the same way.
    if band not in SPOT_BAND_MONTHLY_FRACTION:
        raise ValueError(f"spot band must be one of {', '.join(SPOT_BAND_MONTHLY_FRACTION)}, "
                         f"got {band!r}")
    return hazard_per_instance_hour(SPOT_BAND_MONTHLY_FRACTION[band])


def spot_band_for(provider: str, bands: Mapping[str, str]) -> str:
    return bands.get(provider) or DEFAULT_PROVIDER_SPOT_BANDS.get(provider, DEFAULT_SPOT_BAND)


def spot_providers() -> list[str]:
    """Providers with current spot prices (the page offers a band for each)."""
    rows = current_prices(purchase_options=[PurchaseOption.SPOT])
    return sorted(set(rows.values_list("instance_type__provider__slug", flat=True)))


def region_choices() -> list[tuple[str, str]]:
    """(provider, region code) pairs that have current on-demand prices."""
    rows = current_prices(purchase_options=[PurchaseOption.ON_DEMAND]).values_list(
        "instance_type__provider__slug", "region__code"
    )
    return sorted(set(rows))


def catalog_gpus() -> list[CatalogGpu]:
    rows = Accelerator.objects.values_list("slug", "model", "variant", "memory_gb")
    return [CatalogGpu(*row) for row in rows]


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
    accelerators: dict[str, str] = field(default_factory=dict)
    unpriced: dict[str, str] = field(default_factory=dict)


def _current(option: str, provider: str, region: str) -> QuerySet[Price]:
    return current_prices(
        purchase_options=[option],
        providers=[provider] if provider else None,
        regions=[region] if region else None,
    )


def _fits(price: Price, p90_gpus: float) -> bool:
    count = price.instance_type.gpu_count
    if p90_gpus >= BIG_DEMAND_GPUS:
        return count >= BIG_DEMAND_GPUS
    return count <= max(1, math.ceil(p90_gpus))


def choose_on_demand(prices: Iterable[Price], p90_gpus: float) -> Price | None:
    """Cheapest on-demand $/GPU-hour, among 8-GPU nodes for big demand (or small nodes for
    small demand) when any exist; ties go to fewer GPUs per node."""
    rows = list(prices)
    preferred = [price for price in rows if _fits(price, p90_gpus)] or rows
    if not preferred:
        return None
    return min(
        preferred, key=lambda p: (p.usd_per_gpu_hour, p.instance_type.gpu_count, p.pk)
    )


def price_row(gpu_type: str, price: Price, on_demand_usd_per_hour: float) -> dict[str, Any]:
    """One price as the document lists it: $/instance-hour, $/GPU-hour, discount, source."""
    usd = float(price.usd_per_hour)
    return {
        "gpu_type": gpu_type,
        "accelerator": price.instance_type.accelerator.slug,
        "provider": price.instance_type.provider.slug,
        "region": price.region.code,
        "instance_type": price.instance_type.name,
        "gpus_per_instance": price.instance_type.gpu_count,
        "purchase_option": price.purchase_option,
        "purchase_words": PURCHASE_OPTION_WORDS.get(price.purchase_option, price.purchase_option),
        "payment_words": PAYMENT_OPTION_WORDS.get(price.payment_option, ""),
        "offering_class": price.offering_class,
        "usd_per_hour": usd,
        "usd_per_gpu_hour": usd / price.instance_type.gpu_count,
        "discount_pct": 100.0 * (1.0 - usd / on_demand_usd_per_hour),
        "as_of": price.as_of.isoformat(),
        "source": price.source.name,
        "source_url": price.source.url,
        "is_derived": price.is_derived,
    }


def _same_node(option: str, chosen: Price) -> Price | None:
    rows = current_prices(
        purchase_options=[option], instance_type_ids=[chosen.instance_type_id]
    ).filter(region_id=chosen.region_id)
    return rows.order_by("usd_per_hour", "-as_of").first()


def _payment_options(option: str, chosen: Price) -> list[Price]:
    """The cheapest current price of each payment option for a term on the chosen node."""
    rows = current_prices(
        purchase_options=[option], instance_type_ids=[chosen.instance_type_id]
    ).filter(region_id=chosen.region_id).order_by("usd_per_hour", "-as_of")
    by_payment: dict[tuple[str, str], Price] = {}
    for price in rows:
        key = (price.payment_option or NO_UPFRONT, price.offering_class)
        by_payment.setdefault(key, price)
    return list(by_payment.values())


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
    result: OfferSet, size: GpuDemandSize, chosen: Price, band: str, elsewhere: Price | None
) -> None:
    name = size.gpu_type
    od = float(chosen.usd_per_hour)
    result.prices.append(price_row(name, chosen, od))
    commitments = []
    for option, years in RESERVATIONS.items():
        for price in _payment_options(option, chosen):
            if float(price.usd_per_hour) > 0:
                commitments.append(commitment_option(option, years, price))
                result.prices.append(price_row(name, price, od))
    spot = _same_node(PurchaseOption.SPOT, chosen)
    if spot is not None and float(spot.usd_per_hour) > 0:
        result.prices.append(price_row(name, spot, od))
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
            spot_interruptions_per_hour=spot_hazard_per_hour(band) if spot is not None else 0.0,
            **_elsewhere(chosen, elsewhere),
        )
    )
    result.accelerators[name] = chosen.instance_type.accelerator.slug


def _elsewhere(chosen: Price, elsewhere: Price | None) -> dict[str, Any]:
    """The cheapest on-demand price outside the chosen region, scaled to the chosen node's GPUs."""
    if elsewhere is None or elsewhere.pk == chosen.pk:
        return {}
    gpus = chosen.instance_type.gpu_count
    return {
        "elsewhere_usd_per_hour": float(elsewhere.usd_per_hour) * gpus
        / elsewhere.instance_type.gpu_count,
        "elsewhere": f"{elsewhere.instance_type.provider.slug} {elsewhere.region.code} "
        f"({elsewhere.instance_type.name})",
    }


def _commitment_nodes() -> set[tuple[int, int]]:
    rows = current_prices(purchase_options=list(RESERVATIONS)).values_list(
        "instance_type_id", "region_id"
    )
    return set(rows)


def _cheapest_gpu_hour(rows: Iterable[Price]) -> Price | None:
    return min(rows, key=lambda p: (p.usd_per_gpu_hour, p.pk), default=None)


def _add_savings_plans(result: OfferSet, chosen: dict[str, Price]) -> None:
    rates: dict[str, dict[str, float]] = {}
    for name, on_demand in chosen.items():
        for option in SAVINGS_PLANS:
            price = _same_node(option, on_demand)
            if price is not None and float(price.usd_per_hour) > 0:
                rates.setdefault(option, {})[name] = float(price.usd_per_hour)
                result.prices.append(price_row(name, price, float(on_demand.usd_per_hour)))
    for option, by_type in rates.items():
        result.savings_plans.append(SavingsPlanOffer(option, SAVINGS_PLANS[option], by_type))


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
    instance type is the cheapest on-demand $/GPU-hour (see choose_on_demand); commitments,
    savings plans and spot come from the same instance type and region.
    """
    catalog = catalog_gpus()
    result = OfferSet()
    chosen: dict[str, Price] = {}
    sells = _commitment_nodes()
    for size in sizes:
        slugs = _slugs_for(size.gpu_type, accelerator_map, catalog)
        if not slugs:
            result.unpriced[size.gpu_type] = "no catalog GPU matches this name"
            continue
        rows = list(_current(PurchaseOption.ON_DEMAND, provider, region).filter(
            instance_type__accelerator__slug__in=slugs
        ).select_related("instance_type__provider", "region", "instance_type__accelerator"))
        # "Cheapest where offered" buys where commitments are sold, when any place sells them.
        committing = [p for p in rows if (p.instance_type_id, p.region_id) in sells]
        price = choose_on_demand(committing if not provider and committing else rows,
                                 size.p90_gpus)
        # Marketplace hosts are left out: their reliability is not a cloud's on-demand.
        anywhere = _current(PurchaseOption.ON_DEMAND, "", "").filter(
            instance_type__accelerator__slug__in=slugs
        ).exclude(instance_type__provider__kind=Provider.Kind.MARKETPLACE).select_related(
            "instance_type__provider", "region"
        )
        if price is None:
            where = " ".join(filter(None, [provider, region])) or "any provider"
            result.unpriced[size.gpu_type] = f"no on-demand price for {', '.join(slugs)} in {where}"
            continue
        band = spot_band_for(price.instance_type.provider.slug, spot_bands)
        _add_offer(result, size, price, band, _cheapest_gpu_hour(anywhere))
        chosen[size.gpu_type] = price
    _add_savings_plans(result, chosen)
    return result
