"""Cyclenerd google-cloud-pricing-cost-calculator `pricing.yml`, flattened to CSV (GCP).

Prices include GPUs, vCPUs, RAM and bundled local SSD. `hour` is on-demand, `hour_spot` spot,
and `month_1y`/`month_3y` the monthly price under a resource-based committed use discount,
turned into USD per hour over 730 hours a month.
"""

import math
from datetime import date
from pathlib import Path
from typing import Any, cast

from planner.core.cloud import HOURS_PER_MONTH
from planner.core.providers import GCP
from planner.core.purchase_options import COMMITTED_BY_YEARS, ON_DEMAND, SPOT
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

REQUIRED = {"machine_type", "gpu_key", "gpu_count", "vcpu", "ram_gb", "region", "hour"}
OPTIONAL = {"local_ssd_gb", "hour_spot", "month", "month_1y", "month_3y", "month_spot"}
_GPU_NAMES = {
    "a100": "A100",
    "a100-80gb": "A100-80GB",
    "h100-80gb": "H100",
    "h100-80gb-mega": "H100-MEGA",
    "l4": "L4",
    "h200-141gb": "H200",
    "b200": "B200",
}
_OPTIONS = (
    ("hour", ON_DEMAND, 1.0),
    ("hour_spot", SPOT, 1.0),
    ("month_1y", COMMITTED_BY_YEARS[1], HOURS_PER_MONTH),
    ("month_3y", COMMITTED_BY_YEARS[3], HOURS_PER_MONTH),
)


def _prices(checker: RowChecker, row: dict[str, Any], line: int) -> dict[str, float]:
    prices = {}
    for column, option, hours in _OPTIONS:
        value = checker.price(row.get(column, ""), line, column)
        if value is not None and value > 0:
            prices[option] = round(value / hours, 6)
    return prices


def parse(
    path: Path | str, *, as_of: date | None = None, provider: str | None = None
) -> ParsedPrices:
    """Parse Cyclenerd's GCP machine-type price table into canonical rows."""
    checker = RowChecker(path)
    frame = read_csv_text(checker, path)
    check_columns(checker, frame.columns, REQUIRED, OPTIONAL)
    day = require_as_of(checker, as_of, "cyclenerd")
    rows: list[dict[str, Any]] = []
    skipped: dict[str, int] = {}
    for index, row in enumerate(cast(list[dict[str, Any]], frame.to_dict("records"))):
        line = index + 2
        prices = _prices(checker, row, line)
        count = checker.number(row["gpu_count"], line, "gpu_count")
        name = _GPU_NAMES.get(row["gpu_key"], row["gpu_key"])
        slug = canonical_accelerator(name, row["machine_type"])
        if slug is None or math.isnan(count):
            key = f"accelerator not in catalog: {row['gpu_key']}"
            skipped[key] = skipped.get(key, 0) + 1
            continue
        if count != int(count):
            key = f"fractional GPU count ({row['gpu_key']})"
            skipped[key] = skipped.get(key, 0) + 1
            continue
        instance = {
            "provider": GCP,
            "instance_type": row["machine_type"],
            "accelerator": slug,
            "provider_accelerator_name": name,
            "gpu_count": int(count),
            "vcpus": checker.number(row["vcpu"], line, "vcpu"),
            "memory_gib": checker.number(row["ram_gb"], line, "ram_gb"),
            "host_machine_type": row["machine_type"],
            "region": row["region"],
        }
        for option, price in prices.items():
            rows.append(
                base_row(
                    **instance, purchase_option=option, usd_per_hour=price, as_of=day, line=line
                )
            )
    checker.raise_if_any()
    check_text(checker, rows)
    return ParsedPrices(to_frame(rows), skipped)
