"""AWS Price List bulk offer file for EC2 (`offerCode: AmazonEC2`, JSON).

Kept: GPU compute instances on Linux, shared tenancy, no pre-installed software, capacity
status "Used", bought on demand (Capacity Block products are skipped). On-demand terms give
`on_demand`; Standard Reserved terms give `reserved_1y`/`reserved_3y` at the effective hourly
rate (hourly fee + upfront fee / term hours), taking No Upfront, else Partial, else All Upfront.
AWS's `gpu` attribute is a count; the model comes from the instance family.
"""

from dataclasses import dataclass
from datetime import date
from functools import partial
from pathlib import Path
from typing import Any

from planner.core.cloud import HOURS_PER_YEAR
from planner.core.providers import AWS
from planner.core.purchase_options import ALL_UPFRONT, NO_UPFRONT, ON_DEMAND, PARTIAL_UPFRONT
from pricing.canonical import canonical_accelerator
from pricing.importers.common import (
    MAX_SPEC,
    MAX_UPFRONT_USD,
    MAX_USD_PER_HOUR,
    ParsedPrices,
    RowChecker,
    base_row,
    check_text,
    to_frame,
)
from pricing.importers.jsonfile import (
    count,
    first_per_key,
    guarded,
    iso_date,
    load_json,
    object_key_lines,
    require_as_of_or,
    require_container,
    require_keys,
)

COMPUTE_FAMILIES = {"Compute Instance", "Compute Instance (bare metal)"}
# Attribute values of the products that are kept; missing attributes take the default.
_KEPT = {
    "operatingSystem": ("Linux", None), "tenancy": ("Shared", None),
    "preInstalledSw": ("NA", "NA"), "capacitystatus": ("Used", "Used"),
    "marketoption": ("OnDemand", "OnDemand"), "operation": ("RunInstances", "RunInstances"),
}
_FAMILY_GPU = {
    "p3": "V100", "p3dn": "V100-32GB", "p4d": "A100", "p4de": "A100-80GB", "p5": "H100",
    "p5e": "H200", "p5en": "H200", "p6-b200": "B200", "g4dn": "T4", "g5": "A10G", "g6": "L4",
    "gr6": "L4", "g6e": "L40S",
}
# Commercial regions by the `location` name older files give instead of `regionCode`.
REGION_CODES = {
    "US East (N. Virginia)": "us-east-1", "US East (Ohio)": "us-east-2",
    "US West (N. California)": "us-west-1", "US West (Oregon)": "us-west-2",
    "Africa (Cape Town)": "af-south-1", "Asia Pacific (Hong Kong)": "ap-east-1",
    "Asia Pacific (Taipei)": "ap-east-2", "Asia Pacific (Mumbai)": "ap-south-1",
    "Asia Pacific (Hyderabad)": "ap-south-2", "Asia Pacific (Tokyo)": "ap-northeast-1",
    "Asia Pacific (Seoul)": "ap-northeast-2", "Asia Pacific (Osaka)": "ap-northeast-3",
    "Asia Pacific (Singapore)": "ap-southeast-1", "Asia Pacific (Sydney)": "ap-southeast-2",
    "Asia Pacific (Jakarta)": "ap-southeast-3", "Asia Pacific (Melbourne)": "ap-southeast-4",
    "Asia Pacific (Malaysia)": "ap-southeast-5", "Asia Pacific (New Zealand)": "ap-southeast-6",
    "Asia Pacific (Thailand)": "ap-southeast-7", "Canada (Central)": "ca-central-1",
    "Canada West (Calgary)": "ca-west-1", "EU (Frankfurt)": "eu-central-1",
    "EU (Zurich)": "eu-central-2", "EU (Ireland)": "eu-west-1", "EU (London)": "eu-west-2",
    "EU (Paris)": "eu-west-3", "EU (Milan)": "eu-south-1", "EU (Spain)": "eu-south-2",
    "EU (Stockholm)": "eu-north-1", "Israel (Tel Aviv)": "il-central-1",
    "Mexico (Central)": "mx-central-1", "Middle East (Bahrain)": "me-south-1",
    "Middle East (UAE)": "me-central-1", "South America (Sao Paulo)": "sa-east-1",
}
_PAYMENT_OPTIONS = {"No Upfront": NO_UPFRONT, "Partial Upfront": PARTIAL_UPFRONT,
                    "All Upfront": ALL_UPFRONT}
_LEASE_YEARS = {"1yr": 1, "3yr": 3}


@dataclass(frozen=True)
class _Context:
    checker: RowChecker
    lines: dict[str, int]
    skipped: dict[str, int]


def _skip_reason(product: dict[str, Any]) -> str | None:
    if product.get("productFamily") not in COMPUTE_FAMILIES:
        return "not a compute instance"
    attributes = product.get("attributes", {})
    for key, (wanted, default) in _KEPT.items():
        value = attributes.get(key, default)
        if value != wanted:
            return f"{key} is {value} (only {wanted} is kept)"
    return None


def _gpu_count(ctx: _Context, attributes: dict[str, Any], line: int | None) -> int | None:
    value = str(attributes.get("gpu", "")).strip()
    if value in ("", "NA", "0"):
        count(ctx.skipped, "no GPU")
        return None
    number = ctx.checker.number(value, line, "attributes.gpu")
    if number != number or number <= 0 or number != int(number):
        count(ctx.skipped, "fractional or missing GPU count")
        return None
    return int(number)


def _instance(ctx: _Context, sku: str, attributes: dict[str, Any]) -> dict[str, Any] | None:
    """Canonical instance fields of a kept product, or None (counted) when it is not usable."""
    line = ctx.lines.get(sku)
    if not require_keys(ctx.checker, attributes, ("instanceType", "location"), line,
                        f"product {sku} attributes"):
        return None
    gpus = _gpu_count(ctx, attributes, line)
    if gpus is None:
        return None
    name = attributes["instanceType"]
    family = name.split(".")[0]
    gpu_name = _FAMILY_GPU.get(family)
    slug = canonical_accelerator(gpu_name, name) if gpu_name else None
    region = attributes.get("regionCode") or REGION_CODES.get(attributes["location"])
    if slug is None:
        count(ctx.skipped, f"accelerator not in catalog: {family}")
        return None
    if region is None:
        count(ctx.skipped, f"unknown location: {attributes['location']}")
        return None
    return {
        "provider": AWS, "instance_type": name, "accelerator": slug,
        "provider_accelerator_name": gpu_name, "gpu_count": gpus,
        "vcpus": ctx.checker.number(attributes.get("vcpu"), line, "attributes.vcpu"),
        "memory_gib": _memory_gib(ctx, attributes.get("memory", ""), line), "region": region,
    }


def _memory_gib(ctx: _Context, text: str, line: int | None) -> float:
    """GiB from "1,152 GiB"; NaN when the file gives no number."""
    try:
        gib = float(str(text).split()[0].replace(",", ""))
    except (ValueError, IndexError):
        return float("nan")
    if not 0 <= gib <= MAX_SPEC:  # also false for NaN
        ctx.checker.error(line, "attributes.memory", f"{text!r} is not 0 to {MAX_SPEC:g} GiB")
        return float("nan")
    return gib


def _term_fees(ctx: _Context, term: Any, where: str) -> tuple[float, float] | None:
    """(hourly fee, upfront fee) in USD of one offer term; None when it has errors."""
    line = ctx.lines.get(where)
    if not require_keys(ctx.checker, term, ("priceDimensions",), line, f"term {where}"):
        return None
    hourly, upfront = 0.0, 0.0
    for dimension in term["priceDimensions"].values():
        if not require_keys(ctx.checker, dimension, ("unit", "pricePerUnit"), line,
                            f"term {where} price dimension"):
            return None
        usd = dimension["pricePerUnit"].get("USD")
        # "Quantity" is the upfront fee of a whole term; other units are hourly.
        bound = MAX_UPFRONT_USD if dimension["unit"] == "Quantity" else MAX_USD_PER_HOUR
        price = ctx.checker.price(usd, line, "pricePerUnit.USD", maximum=bound)
        if price is None:
            if usd is None:
                ctx.checker.error(line, "pricePerUnit.USD", f"term {where}: no USD price")
            return None
        if dimension["unit"] == "Quantity":
            upfront += price
        else:
            hourly += price
    return hourly, upfront


def _on_demand(ctx: _Context, sku: str, terms: dict[str, Any]) -> float | None:
    for code, term in terms.items():
        fees = _term_fees(ctx, term, code)
        if fees is None:
            return None
        if fees[0] <= 0:
            count(ctx.skipped, "zero on-demand price")
            return None
        return fees[0]
    return None


def _reserved(ctx: _Context, terms: dict[str, Any]) -> list[dict[str, Any]]:
    """Every reserved-instance offer: term, offering class, payment option, upfront, hourly
    fee and effective hourly rate (fee + upfront spread over 8,760 h a year)."""
    offers: list[dict[str, Any]] = []
    for code, term in terms.items():
        attributes = term.get("termAttributes", {}) if isinstance(term, dict) else {}
        years = _LEASE_YEARS.get(attributes.get("LeaseContractLength", ""))
        payment = _PAYMENT_OPTIONS.get(attributes.get("PurchaseOption", ""))
        offering = attributes.get("OfferingClass", "")
        if years is None or payment is None or offering not in ("standard", "convertible"):
            continue
        fees = _term_fees(ctx, term, code)
        if fees is None:
            continue
        offers.append({
            "purchase_option": f"reserved_{years}y", "payment_option": payment,
            "offering_class": offering, "recurring_usd_per_hour": fees[0],
            "upfront_usd": fees[1],
            "usd_per_hour": round(fees[0] + fees[1] / (HOURS_PER_YEAR * years), 6),
        })
    return offers


def _product_rows(
    ctx: _Context, sku: str, product: Any, terms: dict[str, Any], day: date
) -> list[dict[str, Any]]:
    if not require_keys(ctx.checker, product, ("attributes",), ctx.lines.get(sku),
                        f"product {sku}"):
        return []
    reason = _skip_reason(product)
    if reason is not None:
        count(ctx.skipped, reason)
        return []
    instance = _instance(ctx, sku, product["attributes"])
    if instance is None:
        return []
    offers = _reserved(ctx, terms.get("Reserved", {}).get(sku, {}))
    on_demand = _on_demand(ctx, sku, terms.get("OnDemand", {}).get(sku, {}))
    if on_demand is not None:
        offers.append({"purchase_option": ON_DEMAND, "usd_per_hour": on_demand})
    offers.sort(key=lambda o: (o["purchase_option"], o.get("offering_class", ""),
                               o.get("payment_option", "")))
    return [base_row(**instance, **offer, as_of=day, line=ctx.lines.get(sku, 0))
            for offer in offers]


def parse(
    path: Path | str, *, as_of: date | None = None, provider: str | None = None
) -> ParsedPrices:
    """Parse an EC2 offer file into canonical rows (USD per instance-hour)."""
    checker = RowChecker(path)
    document, text = load_json(checker, path)
    require_keys(checker, document, ("offerCode", "products", "terms"), 1, "offer file")
    checker.raise_if_any()
    if document["offerCode"] != "AmazonEC2":
        checker.error(1, "offerCode", f"{document['offerCode']!r} is not AmazonEC2")
    published = document.get("publicationDate")
    day = as_of or (iso_date(checker, published, 1, "publicationDate") if published else None)
    day = require_as_of_or(checker, day, "publicationDate")
    require_container(checker, document, "products", dict)
    require_container(checker, document, "terms", dict)
    ctx = _Context(checker, object_key_lines(text), {})
    rows: list[dict[str, Any]] = []
    for sku, product in document["products"].items():
        build = partial(_product_rows, ctx, sku, product, document["terms"], day)
        rows += guarded(checker, ctx.lines.get(sku), f"product {sku}", build) or []
    checker.raise_if_any()
    check_text(checker, rows)
    return ParsedPrices(to_frame(first_per_key(rows, ctx.skipped)), ctx.skipped)
