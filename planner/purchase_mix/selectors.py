"""Reads: a user's histories and runs, and the offers (current prices) a recommendation uses."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from django.core.cache import cache
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
)
from planner.purchase_mix.core.upload.gpu_names import CatalogGpu
from planner.purchase_mix.models import AnalysisRun, History
from pricing.models import Accelerator, Price, Provider, PurchaseOption
from pricing.selectors import PriceRow, catalog_version, current_prices, price_rows


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


def latest_run(history_id: int, run_id: int | None = None, *,
               with_result: bool = True) -> AnalysisRun | None:
    """The history's newest run (or this one); `with_result=False` leaves its document (large
    JSON) unread until asked for."""
    runs = AnalysisRun.objects.filter(history_id=history_id)
    if not with_result:
        runs = runs.defer("result")
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
    """Providers with current spot prices (the page offers a band for each); cached per
    catalog version, as every history page's form asks."""
    def read() -> list[str]:
        rows = current_prices(purchase_options=[PurchaseOption.SPOT])
        return sorted(set(rows.values_list("instance_type__provider__slug", flat=True)))

    return list(cache.get_or_set(f"mix-spot-providers:{catalog_version()}", read, 3600))


def region_choices() -> list[tuple[str, str]]:
    """(provider, region code) pairs that have current on-demand prices (cached per catalog
    version)."""
    def read() -> list[tuple[str, str]]:
        rows = current_prices(purchase_options=[PurchaseOption.ON_DEMAND]).values_list(
            "instance_type__provider__slug", "region__code"
        )
        return sorted(set(rows))

    return list(cache.get_or_set(f"mix-region-choices:{catalog_version()}", read, 3600))


def catalog_gpus() -> list[CatalogGpu]:
    rows = Accelerator.objects.values_list("slug", "model", "variant", "memory_gb")
    return [CatalogGpu(*row) for row in rows]


def current_on_demand(provider: str, region: str, slugs: Iterable[str]) -> list[Price]:
    """Current on-demand prices of these catalog GPUs in a provider/region ("" = any)."""
    return list(_current(PurchaseOption.ON_DEMAND, provider, region).filter(
        instance_type__accelerator__slug__in=list(slugs)
    ).select_related("instance_type__provider", "region", "instance_type__accelerator"))


def cloud_on_demand(slugs: Iterable[str]) -> list[Price]:
    """Current on-demand prices of these GPUs anywhere, marketplace hosts left out (their
    reliability is not a cloud's on-demand)."""
    return list(_current(PurchaseOption.ON_DEMAND, "", "").filter(
        instance_type__accelerator__slug__in=list(slugs)
    ).exclude(instance_type__provider__kind=Provider.Kind.MARKETPLACE).select_related(
        "instance_type__provider", "region", "instance_type__accelerator"
    ))


def _current(option: str, provider: str, region: str) -> QuerySet[Price]:
    return current_prices(
        purchase_options=[option],
        providers=[provider] if provider else None,
        regions=[region] if region else None,
    )


def price_dicts(entries: Sequence[tuple[str, Price]]) -> list[dict[str, Any]]:
    """Each (GPU type, price) as the document lists it: $/instance-hour, $/GPU-hour,
    discount, source. The discount is the price list's (pricing.discounts): only against an
    on-demand price of the same instance and region dated within NEARBY_DAYS, none for a
    price above it; `discount_note` says which on-demand price, or why there is none. The
    on-demand prices behind the discounts are read once for all the entries."""
    compared = price_rows([price for _, price in entries])
    return [_price_dict(name, row) for (name, _), row in zip(entries, compared, strict=True)]


def _price_dict(gpu_type: str, compared: PriceRow) -> dict[str, Any]:
    price = compared.price
    usd = float(price.usd_per_hour)
    return {
        "gpu_type": gpu_type,
        "accelerator": price.instance_type.accelerator.slug,
        "accelerator_name": price.instance_type.accelerator.name,
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
        "discount_pct": compared.discount_pct,
        "discount_note": compared.note,
        "is_above_on_demand": compared.is_above_on_demand,
        "as_of": price.as_of.isoformat(),
        "source": price.source.name,
        "source_url": price.source.url,
        "is_derived": price.is_derived,
        "basis": price.basis,  # listed, derived or estimated
        "derivation_basis": price.derivation_basis,  # how a derived price was computed
    }


def same_node(option: str, chosen: Price) -> Price | None:
    rows = current_prices(
        purchase_options=[option], instance_type_ids=[chosen.instance_type_id]
    ).filter(region_id=chosen.region_id)
    return rows.order_by("usd_per_hour", "-as_of").first()


def payment_options(option: str, chosen: Price) -> list[Price]:
    """The cheapest current price of each payment option for a term on the chosen node."""
    rows = current_prices(
        purchase_options=[option], instance_type_ids=[chosen.instance_type_id]
    ).filter(region_id=chosen.region_id).order_by("usd_per_hour", "-as_of")
    by_payment: dict[tuple[str, str], Price] = {}
    for price in rows:
        key = (price.payment_option or NO_UPFRONT, price.offering_class)
        by_payment.setdefault(key, price)
    return list(by_payment.values())


def commitment_nodes() -> set[tuple[int, int]]:
    rows = current_prices(purchase_options=list(RESERVATIONS)).values_list(
        "instance_type_id", "region_id"
    )
    return set(rows)
