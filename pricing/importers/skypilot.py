"""SkyPilot catalog v7 `vms.csv` (as anycloud-sh/catalog uses it): AWS, GCP, Azure, Lambda, Vast.

The file names no cloud and no date: the cloud is inferred from its shape unless given, and the
as-of date must be given. GCP rows split a VM into a host row and an accelerator row per zone;
the VM's price is their sum.
"""

import math
import re
from datetime import date
from pathlib import Path
from typing import Any, cast

import pandas as pd

from planner.core.providers import AWS, AZURE, GCP, LAMBDA, PROVIDER_CODES, VAST
from planner.core.purchase_options import ON_DEMAND, SPOT
from pricing.canonical import GCP_ATTACHABLE, canonical_accelerator, gcp_bundled_gpus, gcp_n1_host
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
    "InstanceType",
    "AcceleratorName",
    "AcceleratorCount",
    "vCPUs",
    "MemoryGiB",
    "GpuInfo",
    "Price",
    "SpotPrice",
    "Region",
}
OPTIONAL = {"AvailabilityZone", "Generation"}
PROVIDERS = PROVIDER_CODES
_TOTAL_MIB = re.compile(r"'TotalGpuMemoryInMiB':\s*([\d.]+)")


def infer_provider(frame: pd.DataFrame) -> str:
    """The cloud a SkyPilot-format file describes, from its columns and instance names."""
    names = frame["InstanceType"]
    if "Generation" in frame.columns or names.str.startswith("Standard_").any():
        return AZURE
    if (names == "").any() or names.str.match(r"^(a2|a3|a4|g2|n1)-").any():
        return GCP
    if names.str.startswith("gpu_").any():
        return LAMBDA
    if "AvailabilityZone" not in frame.columns:
        return VAST
    return AWS


def _memory_mib_per_gpu(gpu_info: str, count: float) -> float | None:
    match = _TOTAL_MIB.search(gpu_info)
    if not match or not count:
        return None
    return float(match.group(1)) / count


def _gpu_count(checker: RowChecker, value: str, line: int) -> float:
    count = checker.number(value, line, "AcceleratorCount")
    if not math.isnan(count) and count <= 0:
        checker.error(line, "AcceleratorCount", f"{value!r} must be positive")
    return count


def _priced_rows(checker: RowChecker, frame: pd.DataFrame) -> pd.DataFrame:
    """Numeric Price/SpotPrice/count columns, every cell checked (errors name the line)."""
    out = frame.copy()
    out["line"] = range(2, len(frame) + 2)
    out["price"] = [
        checker.price(v, n, "Price") for v, n in zip(frame["Price"], out["line"], strict=False)
    ]
    # A spot price of 0 means no spot market at fetch time (Vast writes 0.00 for "none").
    out[SPOT] = [
        checker.price(v, n, "SpotPrice") or None
        for v, n in zip(frame["SpotPrice"], out["line"], strict=False)
    ]
    out["count"] = [
        _gpu_count(checker, v, n) if v != "" else math.nan
        for v, n in zip(frame["AcceleratorCount"], out["line"], strict=False)
    ]
    for column in ("vCPUs", "MemoryGiB"):
        out[column] = [
            checker.number(v, n, column) for v, n in zip(frame[column], out["line"], strict=False)
        ]
    if "AvailabilityZone" not in out.columns:
        out["AvailabilityZone"] = ""
    return out


def _option_rows(row: dict[str, Any], as_of: date, skipped: dict[str, int]
                 ) -> list[dict[str, Any]]:
    rows = []
    for option, price in ((ON_DEMAND, row["price"]), (SPOT, row[SPOT])):
        if price is None or (isinstance(price, float) and math.isnan(price)):
            reason = f"no {option.replace('_', '-')} price"
            skipped[reason] = skipped.get(reason, 0) + 1
        else:
            rows.append(
                base_row(
                    provider=row["provider"],
                    instance_type=row["InstanceType"],
                    accelerator=row["accelerator"],
                    provider_accelerator_name=row["AcceleratorName"],
                    gpu_count=row["gpu_count"],
                    vcpus=row["vCPUs"],
                    memory_gib=row["MemoryGiB"],
                    host_machine_type=row.get("host", ""),
                    region=row["Region"],
                    zone=row["AvailabilityZone"] if option == SPOT else "",
                    purchase_option=option,
                    usd_per_hour=price,
                    as_of=as_of,
                    line=row["line"],
                )
            )
    return rows


def _lowest_per_region(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One price per (instance, region, option). On-demand: the lowest zone (zones list the
    same price). Spot: the median zone (named), with the cheapest and dearest zone beside it,
    because a spot allocation lands wherever capacity is, not in the cheapest zone."""
    groups: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    for row in rows:
        key = (row["instance_type"], row["region"], row["purchase_option"])
        groups.setdefault(key, []).append(row)
    chosen = []
    for (_, _, option), members in groups.items():
        members.sort(key=lambda r: r["usd_per_hour"])
        if option != SPOT:
            chosen.append(members[0])
            continue
        median = dict(members[(len(members) - 1) // 2])  # the lower median: a listed zone price
        median.update(zone_low_usd_per_hour=members[0]["usd_per_hour"],
                      zone_high_usd_per_hour=members[-1]["usd_per_hour"])
        chosen.append(median)
    return chosen


_VAST_NAME = re.compile(r"^(\d+x-[A-Za-z0-9_]+?)(-\d+-\d+)$")


def vast_instance_name(name: str, memory_mib_per_gpu: float | None) -> str:
    """A Vast listing name that tells 40 GB from 80 GB cards ("1x-A100_SXM4-32-65536" with
    40 GiB per GPU -> "1x-A100_SXM4_40GB-32-65536"): otherwise both become one instance type."""
    match = _VAST_NAME.match(name)
    if memory_mib_per_gpu is None or match is None or "GB" in match.group(1).upper():
        return name
    return f"{match.group(1)}_{round(memory_mib_per_gpu / 1024):d}GB{match.group(2)}"


def vast_region(text: str) -> str:
    """A region code from Vast's free text "<place>, <country code>, <continent>":
    "Georgia, US, NA" -> "us-georgia", ", CA, NA" -> "ca" (no place given)."""
    parts = [part.strip() for part in text.split(",")]
    if len(parts) != 3 or not parts[1]:
        return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "unknown"
    place = re.sub(r"[^a-z0-9]+", "-", parts[0].lower()).strip("-")
    return f"{parts[1].lower()}-{place}" if place else parts[1].lower()


def _plain_rows(frame: pd.DataFrame, provider: str) -> tuple[list[dict[str, Any]], dict[str, int]]:
    records: list[dict[str, Any]] = []
    skipped: dict[str, int] = {}
    for row in cast(list[dict[str, Any]], frame.to_dict("records")):
        count = row["count"]
        name = row["AcceleratorName"]
        if math.isnan(count) or count != int(count):
            key = f"fractional or missing GPU count ({name or row['InstanceType']})"
            skipped[key] = skipped.get(key, 0) + 1
            continue
        mib = _memory_mib_per_gpu(row["GpuInfo"], count)
        slug = canonical_accelerator(name, row["InstanceType"], mib) if name else None
        if slug is None:
            key = f"accelerator not in catalog: {name or '(blank)'}"
            skipped[key] = skipped.get(key, 0) + 1
            continue
        row.update(provider=provider, accelerator=slug, gpu_count=int(count))
        if provider == VAST:
            row.update(InstanceType=vast_instance_name(row["InstanceType"], mib),
                       Region=vast_region(row["Region"]))
        records.append(row)
    return records, skipped


def _gcp_rows(frame: pd.DataFrame) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """Join each host row with its zone's accelerator row; attach T4/V100 to N1 hosts."""
    hosts = frame[frame["InstanceType"] != ""]
    gpus = frame[(frame["InstanceType"] == "") & ~frame["AcceleratorName"].str.startswith("tpu")]
    uncounted = int(gpus["count"].isna().sum())
    gpus = gpus[gpus["count"].notna()]  # an accelerator row without a count prices nothing
    gpu_by_key = {
        (r["AvailabilityZone"], r["AcceleratorName"], int(r["count"])): r
        for r in cast(list[dict[str, Any]], gpus.to_dict("records"))
    }
    host_by_key = {
        (r["AvailabilityZone"], r["InstanceType"]): r
        for r in cast(list[dict[str, Any]], hosts.to_dict("records"))
    }
    combos: list[dict[str, Any]] = []
    host: dict[str, Any] | None
    for host in cast(list[dict[str, Any]], hosts.to_dict("records")):
        bundled = gcp_bundled_gpus(host["InstanceType"])
        if bundled:
            gpu = gpu_by_key.get((host["AvailabilityZone"], bundled[0], bundled[1]))
            if gpu is not None:
                combos.append(_gcp_combo(host, gpu, host["InstanceType"]))
    for (zone, name, count), gpu in gpu_by_key.items():
        if count in GCP_ATTACHABLE.get(name, ()):
            host = host_by_key.get((zone, gcp_n1_host(count)))
            if host is not None:
                combos.append(_gcp_combo(host, gpu, f"{host['InstanceType']}+{count}x{name}"))
    combined = pd.DataFrame(combos) if combos else frame.iloc[0:0].assign(host="")
    records, skipped = _plain_rows(combined, GCP)
    if uncounted:
        skipped["accelerator row without AcceleratorCount"] = uncounted
    return records, skipped


def _sum(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else round(a + b, 6)


def _gcp_combo(host: dict[str, Any], gpu: dict[str, Any], name: str) -> dict[str, Any]:
    combo = dict(gpu)
    combo.update(
        InstanceType=name,
        host=host["InstanceType"],
        vCPUs=host["vCPUs"],
        MemoryGiB=host["MemoryGiB"],
        price=_sum(host["price"], gpu["price"]),
        spot=_sum(host[SPOT], gpu[SPOT]),
        line=gpu["line"],
    )
    return combo


def parse(
    path: Path | str, *, as_of: date | None = None, provider: str | None = None
) -> ParsedPrices:
    """Parse a SkyPilot v7 vms.csv into canonical rows (USD per instance-hour)."""
    checker = RowChecker(path)
    frame = read_csv_text(checker, path)
    check_columns(checker, frame.columns, REQUIRED, OPTIONAL)
    day = require_as_of(checker, as_of, "skypilot")
    if provider is not None and provider not in PROVIDERS:
        checker.error(None, "provider", f"{provider!r} is not one of {', '.join(PROVIDERS)}")
    cloud = provider or infer_provider(frame)
    priced = _priced_rows(checker, frame)
    checker.raise_if_any()
    if cloud == GCP:
        records, skipped = _gcp_rows(priced)
    else:
        records, skipped = _plain_rows(priced, cloud)
    rows = [r for record in records for r in _option_rows(record, day, skipped)]
    check_text(checker, rows)
    return ParsedPrices(to_frame(_lowest_per_region(rows)), skipped)
