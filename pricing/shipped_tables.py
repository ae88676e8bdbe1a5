"""The shipped storage price and GPU power-cap tables, parsed once per process.

pricing/data/storage/storage_prices.csv (dated list prices of checkpoint and data-set storage,
see storage_prices.md) and pricing/data/power/power_cap_curves.csv (measured throughput and
energy at reduced power limits, see power_cap_curves.md). They are facts shipped with the
code, read from the files (not the database) by the plan and the storage what-if; the pure
parsers are planner.core.storage_tiers and planner.core.power_caps.
"""

from functools import cache

from planner.core.power_caps import PowerCurve, parse_power_curves
from planner.core.storage_tiers import StorageTier, parse_storage_prices
from pricing.catalog_sources import DATA_DIR

STORAGE_PRICES_CSV = DATA_DIR / "storage" / "storage_prices.csv"
POWER_CURVES_CSV = DATA_DIR / "power" / "power_cap_curves.csv"


@cache
def storage_tiers() -> tuple[StorageTier, ...]:
    """Every priced storage class of the shipped table (file order)."""
    return parse_storage_prices(STORAGE_PRICES_CSV.read_text(encoding="utf-8"))


@cache
def power_curves() -> tuple[PowerCurve, ...]:
    """The measured power-limit curves of the shipped table."""
    return parse_power_curves(POWER_CURVES_CSV.read_text(encoding="utf-8"))
