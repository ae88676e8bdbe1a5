"""A price's discount against on-demand, compared at the same age: only against an on-demand
price of the same instance and region dated within NEARBY_DAYS (the newest such); a price
above it is flagged and shows none. The price list, instance page, exports and the explorer's
sort read this one rule."""

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date

from pricing.importers.sanity import SPOT_TOLERANCE
from pricing.models import Price, PurchaseOption

DISCOUNTED_OPTIONS = frozenset(PurchaseOption.values) - {PurchaseOption.ON_DEMAND}

# A discount compares two snapshots: only when their dates are at most this far apart.
NEARBY_DAYS = 90


@dataclass(frozen=True)
class PriceRow:
    """One price with its discount against the on-demand price of the same instance and
    region of the nearest date (within NEARBY_DAYS); `note` says why there is none, or that
    the price is above on-demand (flagged, no discount shown)."""

    price: Price
    on_demand_usd_per_hour: float | None
    discount_pct: float | None
    on_demand_as_of: date | None = None
    note: str = ""
    is_above_on_demand: bool = False


def _on_demand_prices(prices: Sequence[Price]
                      ) -> dict[tuple[int, int], list[tuple[date, float]]]:
    """On-demand (as_of, USD/hour) pairs per (instance type, region), current and past."""
    keys = {(p.instance_type_id, p.region_id) for p in prices}
    rows = Price.objects.filter(
        purchase_option=PurchaseOption.ON_DEMAND,
        instance_type_id__in={k[0] for k in keys},
        region_id__in={k[1] for k in keys},
    ).values_list("instance_type_id", "region_id", "as_of", "usd_per_hour")
    found: dict[tuple[int, int], list[tuple[date, float]]] = {}
    for i, r, as_of, usd in rows:
        found.setdefault((i, r), []).append((as_of, float(usd)))
    return found


def _discount_row(price: Price, bases: list[tuple[date, float]]) -> PriceRow:
    """The price against the on-demand price of the nearest date (see PriceRow)."""
    if not bases:
        return PriceRow(price, None, None)
    near = [b for b in bases if abs((b[0] - price.as_of).days) <= NEARBY_DAYS]
    # The newest within the window (as the explorer sorts by it), else the nearest for the note.
    as_of, base = (max(near) if near else
                   min(bases, key=lambda b: abs((b[0] - price.as_of).days)))
    gap = abs((as_of - price.as_of).days)
    if gap > NEARBY_DAYS:
        return PriceRow(price, base, None, as_of,
                        f"no discount: the on-demand price nearest in date is of {as_of}, "
                        f"{gap} days from this price's {price.as_of} (at most {NEARBY_DAYS})")
    if base <= 0:  # a zero on-demand price (planted, or a free tier) gives no discount
        return PriceRow(price, base, None, as_of,
                        f"no discount: the on-demand price of {as_of} is $0")
    discount = 100.0 * (1.0 - float(price.usd_per_hour) / base)
    if float(price.usd_per_hour) <= base * SPOT_TOLERANCE:  # equal but for rounding: no discount
        discount = max(discount, 0.0)
    if discount < 0:
        return PriceRow(price, base, None, as_of,
                        f"above the on-demand price of {as_of} ({-discount:.0f}% dearer): "
                        "flagged and left out of discounts", is_above_on_demand=True)
    return PriceRow(price, base, discount, as_of,
                    f"against the on-demand price of {as_of}")


def price_rows(prices: Sequence[Price]) -> list[PriceRow]:
    """Attach the discount vs on-demand to spot, reserved, committed and savings-plan prices,
    computed only against an on-demand price of a nearby date (PriceRow says which)."""
    on_demand = _on_demand_prices([p for p in prices if p.purchase_option in DISCOUNTED_OPTIONS])
    return [_discount_row(price, on_demand.get((price.instance_type_id, price.region_id), []))
            if price.purchase_option in DISCOUNTED_OPTIONS else PriceRow(price, None, None)
            for price in prices]
