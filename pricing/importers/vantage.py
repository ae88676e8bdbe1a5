"""ec2instances.info (Vantage) GPU extract: AWS on-demand and 1-year Standard RI prices.

Columns as in tsaol/aws-gpu `all_gpu_instances.js`; prices are USD per instance-hour, Linux.
The reserved column is the effective hourly of a 1-year Standard RI with no upfront payment.
"""

import math
import re
from datetime import date
from pathlib import Path
from typing import Any, cast

from planner.core.providers import AWS
from planner.core.purchase_options import NO_UPFRONT, ON_DEMAND, RESERVED_BY_YEARS
from pricing.canonical import canonical_accelerator
from pricing.importers.common import (
    ParsedPrices,
    RowChecker,
    base_row,
    check_columns,
    check_text,
    read_csv_text,
    require_as_of,
    to_frame,
)

REQUIRED = {
    "instance_type",
    "gpu",
    "gpu_count",
    "vcpu",
    "memory",
    "region",
    "on_demand_usd_hr",
    "reserved_1y_std_noupfront_usd_hr",
}
OPTIONAL = {"gpu_memory", "gpu_interconnect", "family", "generation"}
_OPTIONS = (("on_demand_usd_hr", ON_DEMAND),
            ("reserved_1y_std_noupfront_usd_hr", RESERVED_BY_YEARS[1]))
_SIZE = re.compile(r"([\d.]+)\s*(GiB|GB)")


def _size_gib(checker: RowChecker, text: str, line: int, field_name: str) -> float:
    """GiB from "16 GB GDDR6"; NaN when there is no size; an error when it is no number."""
    match = _SIZE.search(text)
    return checker.number(match.group(1), line, field_name) if match else math.nan


def _instance(
    checker: RowChecker, row: dict[str, Any], line: int, skipped: dict[str, int]
) -> dict[str, Any] | None:
    count = checker.number(row["gpu_count"], line, "gpu_count")
    if math.isnan(count) or count <= 0 or count != int(count):
        skipped["fractional or missing GPU count"] = (
            skipped.get("fractional or missing GPU count", 0) + 1
        )
        return None
    mib = _size_gib(checker, row.get("gpu_memory", ""), line, "gpu_memory") * 1024 / count
    slug = canonical_accelerator(row["gpu"], row["instance_type"], None if math.isnan(mib) else mib)
    if slug is None:
        key = f"accelerator not in catalog: {row['gpu']}"
        skipped[key] = skipped.get(key, 0) + 1
        return None
    return {
        "provider": AWS,
        "instance_type": row["instance_type"],
        "accelerator": slug,
        "provider_accelerator_name": row["gpu"],
        "gpu_count": int(count),
        "vcpus": checker.number(row["vcpu"], line, "vcpu"),
        "memory_gib": _size_gib(checker, row["memory"], line, "memory"),
        "region": row["region"],
    }


def parse(
    path: Path | str, *, as_of: date | None = None, provider: str | None = None
) -> ParsedPrices:
    """Parse the Vantage/ec2instances.info GPU CSV into canonical rows."""
    checker = RowChecker(path)
    frame = read_csv_text(checker, path)
    check_columns(checker, frame.columns, REQUIRED, OPTIONAL)
    day = require_as_of(checker, as_of, "vantage")
    rows: list[dict[str, Any]] = []
    skipped: dict[str, int] = {}
    for index, row in enumerate(cast(list[dict[str, Any]], frame.to_dict("records"))):
        line = index + 2
        prices = {opt: checker.price(row[col], line, col) for col, opt in _OPTIONS}
        instance = _instance(checker, row, line, skipped)
        if instance is None:
            continue
        for option, price in prices.items():
            if price is None:
                reason = f"no {option.replace('_', ' ')} price"
                skipped[reason] = skipped.get(reason, 0) + 1
            else:
                # The reserved column is the 1-year Standard RI with no upfront payment.
                commitment = (
                    {"payment_option": NO_UPFRONT, "offering_class": "standard",
                     "upfront_usd": 0.0, "recurring_usd_per_hour": price}
                    if option == RESERVED_BY_YEARS[1] else {}
                )
                rows.append(
                    base_row(
                        **instance, purchase_option=option, usd_per_hour=price, as_of=day,
                        line=line, **commitment,
                    )
                )
    checker.raise_if_any()
    check_text(checker, rows)
    return ParsedPrices(to_frame(rows), skipped)
