"""Azure Retail Prices API response (`prices.azure.com/api/retail/prices`, JSON).

Linux VM items only: Windows, Low Priority and Dev/Test items are skipped. Consumption items
give `on_demand` (or `spot` when the SKU or meter name says Spot) and their `savingsPlan`
entries `savings_plan_1y`/`_3y` (already hourly). Reservation items are priced for the whole
term, so the hourly price is the term price / (8760 h x years). The feed names neither the
GPU nor its count, so both come from a table of Azure GPU sizes.
"""

from datetime import date
from functools import partial
from pathlib import Path
from typing import Any, NamedTuple

from planner.core.cloud import HOURS_PER_YEAR
from planner.core.providers import AZURE
from planner.core.purchase_options import ON_DEMAND, RESERVED_BY_YEARS, SAVINGS_PLAN_BY_YEARS, SPOT
from pricing.canonical import canonical_accelerator
from pricing.importers.common import (
    MAX_UPFRONT_USD,
    MAX_USD_PER_HOUR,
    ParsedPrices,
    RowChecker,
    base_row,
    check_text,
    to_frame,
)
from pricing.importers.jsonfile import (
    array_item_lines,
    count,
    first_per_key,
    guarded,
    iso_date,
    load_json,
    require_container,
    require_keys,
)


class AzureSize(NamedTuple):
    gpu: str  # SkyPilot-style accelerator name (see pricing.canonical)
    gpu_count: int
    vcpus: int
    memory_gib: float


# Azure GPU VM sizes (learn.microsoft.com VM size pages); fractional-GPU sizes are left out.
SIZES = {
    "Standard_ND96asr_v4": AzureSize("A100", 8, 96, 900),
    "Standard_ND96amsr_A100_v4": AzureSize("A100-80GB", 8, 96, 1900),
    "Standard_NC24ads_A100_v4": AzureSize("A100-80GB", 1, 24, 220),
    "Standard_NC48ads_A100_v4": AzureSize("A100-80GB", 2, 48, 440),
    "Standard_NC96ads_A100_v4": AzureSize("A100-80GB", 4, 96, 880),
    "Standard_ND96isr_H100_v5": AzureSize("H100", 8, 96, 1900),
    "Standard_NC40ads_H100_v5": AzureSize("H100", 1, 40, 320),
    "Standard_NC80adis_H100_v5": AzureSize("H100", 2, 80, 640),
    "Standard_ND96isr_H200_v5": AzureSize("H200", 8, 96, 1850),
    "Standard_ND96isr_MI300X_v5": AzureSize("MI300X", 8, 96, 1850),
    "Standard_NC4as_T4_v3": AzureSize("T4", 1, 4, 28),
    "Standard_NC8as_T4_v3": AzureSize("T4", 1, 8, 56),
    "Standard_NC16as_T4_v3": AzureSize("T4", 1, 16, 110),
    "Standard_NC64as_T4_v3": AzureSize("T4", 4, 64, 440),
    "Standard_NC6s_v3": AzureSize("V100", 1, 6, 112),
    "Standard_NC12s_v3": AzureSize("V100", 2, 12, 224),
    "Standard_NC24s_v3": AzureSize("V100", 4, 24, 448),
    "Standard_NC24rs_v3": AzureSize("V100", 4, 24, 448),
    "Standard_ND40rs_v2": AzureSize("V100-32GB", 8, 40, 672),
    "Standard_NC8ads_A10_v4": AzureSize("A10", 1, 8, 100),
    "Standard_NC16ads_A10_v4": AzureSize("A10", 1, 16, 200),
    "Standard_NC32ads_A10_v4": AzureSize("A10", 2, 32, 400),
    "Standard_NV36ads_A10_v5": AzureSize("A10", 1, 36, 440),
    "Standard_NV72ads_A10_v5": AzureSize("A10", 2, 72, 880),
}
REQUIRED = (
    "currencyCode", "retailPrice", "armRegionName", "armSkuName", "type", "productName",
    "skuName", "meterName", "serviceName", "unitOfMeasure", "effectiveStartDate",
)
_TERM_YEARS = {"1 Year": 1, "3 Years": 3}


def _skip_reason(item: dict[str, Any]) -> str | None:
    names = f"{item['skuName']} {item['meterName']}"
    if item["serviceName"] != "Virtual Machines":
        return f"service {item['serviceName']}"
    if item["currencyCode"] != "USD":
        return f"price not in USD ({item['currencyCode']})"
    if item["type"] not in ("Consumption", "Reservation"):
        return f"price type {item['type']}"
    if "Windows" in item["productName"]:
        return "Windows"
    if "Low Priority" in names:
        return "Low Priority"
    if item["armSkuName"] not in SIZES:
        return f"unknown Azure GPU size: {item['armSkuName'] or '(blank)'}"
    return None


def _years(checker: RowChecker, term: Any, line: int, field_name: str) -> int | None:
    years = _TERM_YEARS.get(str(term))
    if years is None:
        checker.error(line, field_name, f"term {term!r} is not '1 Year' or '3 Years'")
    return years


def _savings_plans(checker: RowChecker, item: dict[str, Any], line: int, where: str
                   ) -> dict[str, float]:
    prices = {}
    for plan in item.get("savingsPlan") or []:
        if not require_keys(checker, plan, ("retailPrice", "term"), line, f"{where} savingsPlan"):
            continue
        price = checker.price(plan["retailPrice"], line, "savingsPlan.retailPrice")
        years = _years(checker, plan["term"], line, "savingsPlan.term")
        if price is not None and years is not None:
            prices[SAVINGS_PLAN_BY_YEARS[years]] = price
    return prices


def _item_prices(
    checker: RowChecker, item: dict[str, Any], price: float, line: int, where: str
) -> dict[str, float]:
    """Purchase option -> USD per hour for one kept item (errors recorded, nothing returned)."""
    if item["type"] == "Reservation":
        years = _years(checker, item.get("reservationTerm"), line, "reservationTerm")
        return {} if years is None else {
            RESERVED_BY_YEARS[years]: round(price / (HOURS_PER_YEAR * years), 6)
        }
    if item["unitOfMeasure"] != "1 Hour":
        checker.error(line, "unitOfMeasure", f"{where}: {item['unitOfMeasure']!r} is not 1 Hour")
        return {}
    if "Spot" in f"{item['skuName']} {item['meterName']}":
        return {SPOT: price}
    return {ON_DEMAND: price, **_savings_plans(checker, item, line, where)}


def _item_rows(checker: RowChecker, item: Any, line: int, where: str, as_of: date | None,
               skipped: dict[str, int]) -> list[dict[str, Any]]:
    if not require_keys(checker, item, REQUIRED, line, where):
        return []
    # A reservation is priced for its whole term; every other item per hour.
    is_term = item.get("type") == "Reservation"
    price = checker.price(item["retailPrice"], line, "retailPrice",
                          maximum=MAX_UPFRONT_USD if is_term else MAX_USD_PER_HOUR)
    if item["retailPrice"] is None:
        checker.error(line, "retailPrice", f"{where}: no price")
    reason = _skip_reason(item)
    if reason is not None:
        count(skipped, reason)
        return []
    day = as_of or iso_date(checker, item["effectiveStartDate"], line, "effectiveStartDate")
    if price is None or day is None:
        return []
    prices = _item_prices(checker, item, price, line, where)
    size = SIZES[item["armSkuName"]]
    return [base_row(
        provider=AZURE, instance_type=item["armSkuName"],
        accelerator=canonical_accelerator(size.gpu, item["armSkuName"]),
        provider_accelerator_name=size.gpu, gpu_count=size.gpu_count,
        vcpus=float(size.vcpus), memory_gib=float(size.memory_gib),
        region=item["armRegionName"], purchase_option=option, usd_per_hour=price, as_of=day,
        line=line,
    ) for option, price in prices.items()]


def parse(
    path: Path | str, *, as_of: date | None = None, provider: str | None = None
) -> ParsedPrices:
    """Parse an Azure Retail Prices API page into canonical rows (USD per instance-hour)."""
    checker = RowChecker(path)
    document, text = load_json(checker, path)
    require_keys(checker, document, ("Items",), 1, "price list")
    checker.raise_if_any()
    require_container(checker, document, "Items", list)
    items = document["Items"]
    lines = array_item_lines(text, "Items", len(items))
    skipped: dict[str, int] = {}
    rows: list[dict[str, Any]] = []
    for index, item in enumerate(items):
        line = lines[index] if lines else index
        build = partial(_item_rows, checker, item, line, f"item {index}", as_of, skipped)
        rows += guarded(checker, line, f"item {index}", build) or []
    checker.raise_if_any()
    check_text(checker, rows)
    return ParsedPrices(to_frame(first_per_key(rows, skipped)), skipped)
