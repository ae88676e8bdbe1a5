"""The cheapest current on-demand offer of each GPU in each cloud (as `sky show-gpus` lists
them): the catalog and compare pages show one line per provider."""

from dataclasses import dataclass
from datetime import date

from pricing import selectors
from pricing.models import PurchaseOption, price_basis


@dataclass(frozen=True)
class CloudOffer:
    provider: str  # the provider's name
    provider_slug: str
    instance_type: str
    gpu_count: int
    region: str
    usd_per_gpu_hour: float
    as_of: date
    is_stale: bool
    source: str  # the price source's name
    basis: str  # listed, derived or estimated (Price.basis)


def cheapest_per_cloud(*, today: date) -> dict[int, list[CloudOffer]]:
    """Per accelerator id: its cheapest current on-demand $/GPU-hour price in each provider,
    cheapest provider first (ties: the lower price id)."""
    prices = selectors.price_list(today=today, purchase_option=PurchaseOption.ON_DEMAND)
    rows = prices.order_by("usd_per_gpu_hour_value", "id").values_list(
        "instance_type__accelerator_id", "instance_type__provider__name",
        "instance_type__provider__slug", "instance_type__name", "instance_type__gpu_count",
        "region__code", "usd_per_gpu_hour_value", "as_of", "is_stale_value", "source__name",
        "is_derived", "is_estimated")
    offers: dict[int, list[CloudOffer]] = {}
    seen: set[tuple[int, str]] = set()
    for (gpu_id, name, slug, instance, count, region, usd, as_of, is_stale, source, is_derived,
         is_estimated) in rows:
        if (gpu_id, slug) in seen:
            continue
        seen.add((gpu_id, slug))
        offers.setdefault(gpu_id, []).append(
            CloudOffer(name, slug, instance, count, region, usd, as_of, bool(is_stale), source,
                       price_basis(is_derived=is_derived, is_estimated=is_estimated)))
    return offers
