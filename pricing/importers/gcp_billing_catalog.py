"""Google Cloud Billing Catalog API `services.skus.list` response (Compute Engine SKUs, JSON).

GCP bills an accelerator-optimized VM as its parts, so a machine type's price is built the same
way: vCPUs x core SKU + GiB x RAM SKU + GPUs x GPU SKU, per service region and usage type
(OnDemand, Preemptible = spot, Commit1Yr/Commit3Yr = committed use). Bundled local SSD is not
included. A price is units + nanos / 1e9 USD per usage unit (h or GiBy.h).
"""

import re
from dataclasses import dataclass, field
from datetime import date
from functools import partial
from pathlib import Path
from typing import Any, NamedTuple

from planner.core.providers import GCP
from planner.core.purchase_options import COMMITTED_BY_YEARS, ON_DEMAND, SPOT
from pricing.canonical import canonical_accelerator
from pricing.importers.common import (
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
    require_as_of_or,
    require_container,
    require_keys,
)


class Machine(NamedTuple):
    family: str  # core/RAM SKU family, as the SKU description writes it without spaces
    vcpus: int
    memory_gib: float
    gpu: str  # SkyPilot-style accelerator name (see pricing.canonical)
    gpu_count: int


def _series(prefix: str, family: str, gpu: str, sizes: dict[str, tuple[int, float, int]]
            ) -> dict[str, Machine]:
    return {f"{prefix}{size}": Machine(family, v, m, gpu, g) for size, (v, m, g) in sizes.items()}


# vCPUs, memory (GB as GCP's machine-type docs list it) and GPUs per accelerator-optimized type.
MACHINES = {
    **_series("a2-highgpu-", "A2", "A100", {
        "1g": (12, 85, 1), "2g": (24, 170, 2), "4g": (48, 340, 4), "8g": (96, 680, 8)}),
    **_series("a2-megagpu-", "A2", "A100", {"16g": (96, 1360, 16)}),
    **_series("a2-ultragpu-", "A2", "A100-80GB", {
        "1g": (12, 170, 1), "2g": (24, 340, 2), "4g": (48, 680, 4), "8g": (96, 1360, 8)}),
    **_series("a3-highgpu-", "A3", "H100", {
        "1g": (26, 234, 1), "2g": (52, 468, 2), "4g": (104, 936, 4), "8g": (208, 1872, 8)}),
    **_series("a3-megagpu-", "A3MEGA", "H100-MEGA", {"8g": (208, 1872, 8)}),
    **_series("g2-standard-", "G2", "L4", {
        "4": (4, 16, 1), "8": (8, 32, 1), "12": (12, 48, 1), "16": (16, 64, 1),
        "24": (24, 96, 2), "32": (32, 128, 1), "48": (48, 192, 4), "96": (96, 384, 8)}),
}
USAGE_OPTIONS = {
    "OnDemand": ON_DEMAND, "Preemptible": SPOT,
    "Commit1Yr": COMMITTED_BY_YEARS[1], "Commit3Yr": COMMITTED_BY_YEARS[3],
}
# Most specific first: "A100 80GB" before "A100".
_GPU_PATTERNS = (
    ("H100 80GB MEGA", "H100-MEGA"), ("H100", "H100"), ("H200", "H200"),
    ("A100 80GB", "A100-80GB"), ("A100", "A100"), (r"\bL4\b", "L4"),
)
_HOST = re.compile(r"\b(A2|A3 ?MEGA|A3|G2) (?:INSTANCE )?(CORE|CPU|RAM)\b")
_NOT_VM_GPU = ("WORKSTATION", "DWS")


class _Component(NamedTuple):
    part: str  # GPU, CORE or RAM
    name: str  # GPU name or host family


@dataclass
class _Prices:
    """USD per unit by (component, purchase option, region), with the line of the SKU."""

    by_key: dict[tuple[_Component, str, str], tuple[float, int]] = field(default_factory=dict)
    skipped: dict[str, int] = field(default_factory=dict)
    days: list[date] = field(default_factory=list)


def _component(description: str, resource_group: str, unit: str) -> _Component | None:
    text = description.upper()
    if resource_group == "GPU":
        if any(word in text for word in _NOT_VM_GPU):
            return None
        for pattern, name in _GPU_PATTERNS:
            if re.search(pattern, text):
                return _Component("GPU", name)
        return None
    match = _HOST.search(text)
    if match is None:
        return None
    part = "RAM" if match.group(2) == "RAM" else "CORE"
    if unit != ("GiBy.h" if part == "RAM" else "h"):
        return None
    return _Component(part, match.group(1).replace(" ", ""))


def _unit_price(checker: RowChecker, sku: dict[str, Any], line: int, where: str
                ) -> tuple[float, str] | None:
    """(USD per unit of the first tier, currency); None when malformed (errors recorded)."""
    info: Any = sku["pricingInfo"][0] if sku["pricingInfo"] else None
    if not require_keys(checker, info, ("pricingExpression",), line, f"{where} pricingInfo[0]"):
        return None
    expression = info["pricingExpression"]
    if not require_keys(checker, expression, ("usageUnit", "tieredRates"), line, where):
        return None
    rates = sorted(expression["tieredRates"], key=lambda r: float(r.get("startUsageAmount", 0)))
    if not rates or not require_keys(checker, rates[0], ("unitPrice",), line, f"{where} tier"):
        if not rates:
            checker.error(line, "tieredRates", f"{where}: no tiered rate")
        return None
    price = rates[0]["unitPrice"]
    units = checker.price(price.get("units", "0"), line, "unitPrice.units")
    nanos = checker.price(price.get("nanos", 0), line, "unitPrice.nanos", maximum=999_999_999)
    if units is None or nanos is None:
        return None
    return units + nanos / 1e9, str(price.get("currencyCode", "USD"))


def _effective_day(checker: RowChecker, sku: dict[str, Any], line: int) -> date | None:
    info = sku["pricingInfo"][0] if sku["pricingInfo"] else {}
    stamp = info.get("effectiveTime") or info.get("EffectiveTime")
    return iso_date(checker, stamp, line, "effectiveTime") if stamp else None


def _add_sku(checker: RowChecker, prices: _Prices, sku: Any, line: int, index: int) -> None:
    where = f"item {index} ({sku.get('skuId', '?') if isinstance(sku, dict) else '?'})"
    keys = ("description", "category", "serviceRegions", "pricingInfo")
    if not require_keys(checker, sku, keys, line, where) or not require_keys(
        checker, sku["category"], ("resourceGroup", "usageType"), line, f"{where} category"
    ):
        return
    priced = _unit_price(checker, sku, line, where)
    day = _effective_day(checker, sku, line)
    if priced is None:
        return
    if day is not None:
        prices.days.append(day)
    unit = sku["pricingInfo"][0]["pricingExpression"]["usageUnit"]
    component = _component(sku["description"], sku["category"]["resourceGroup"], unit)
    option = USAGE_OPTIONS.get(sku["category"]["usageType"])
    if component is None or option is None:
        count(prices.skipped, "not a GPU, A2, A3 or G2 price SKU")
    elif priced[1] != "USD":
        count(prices.skipped, f"price not in USD ({priced[1]})")
    else:
        for region in sku["serviceRegions"]:
            key = (component, option, region)
            prices.by_key.setdefault(key, (priced[0], line))


def _machine_rows(checker: RowChecker, prices: _Prices, day: date) -> list[dict[str, Any]]:
    rows = []
    gpu_keys = [key for key in prices.by_key if key[0].part == "GPU"]
    for machine, spec in MACHINES.items():
        slug = canonical_accelerator(spec.gpu, machine)
        for gpu, option, region in gpu_keys:
            core = prices.by_key.get((_Component("CORE", spec.family), option, region))
            ram = prices.by_key.get((_Component("RAM", spec.family), option, region))
            if gpu.name != spec.gpu or core is None or ram is None:
                continue
            gpu_price, line = prices.by_key[(gpu, option, region)]
            total = spec.vcpus * core[0] + spec.memory_gib * ram[0] + spec.gpu_count * gpu_price
            if total > MAX_USD_PER_HOUR:
                checker.error(line, "unitPrice", f"{machine} in {region} would cost "
                              f"{total:,.0f} USD/h, above the {MAX_USD_PER_HOUR:,.0f} bound")
                continue
            rows.append(base_row(
                provider=GCP, instance_type=machine, accelerator=slug,
                provider_accelerator_name=spec.gpu, gpu_count=spec.gpu_count,
                vcpus=float(spec.vcpus), memory_gib=float(spec.memory_gib),
                host_machine_type=machine, region=region, purchase_option=option,
                usd_per_hour=round(total, 6), as_of=day, line=line,
            ))
    return rows


def parse(
    path: Path | str, *, as_of: date | None = None, provider: str | None = None
) -> ParsedPrices:
    """Parse a Cloud Billing Catalog SKU list into machine-type prices (USD per hour)."""
    checker = RowChecker(path)
    document, text = load_json(checker, path)
    require_keys(checker, document, ("skus",), 1, "SKU list")
    checker.raise_if_any()
    require_container(checker, document, "skus", list)
    skus = document["skus"]
    lines = array_item_lines(text, "skus", len(skus))
    prices = _Prices()
    for index, sku in enumerate(skus):
        line = lines[index] if lines else index
        build = partial(_add_sku, checker, prices, sku, line, index)
        guarded(checker, line, f"item {index}", build)
    checker.raise_if_any()
    day = require_as_of_or(checker, as_of or max(prices.days, default=None), "effectiveTime")
    skipped = prices.skipped
    rows = _machine_rows(checker, prices, day)
    checker.raise_if_any()
    check_text(checker, rows)
    return ParsedPrices(to_frame(first_per_key(rows, skipped)), skipped)
