"""Storage tiers (checkpoints and data sets): parse the shipped price table into tiers.

Pure: no Django. `parse_storage_prices` reads pricing/data/storage/storage_prices.csv (its
.md says where every price comes from) into StorageTier rows; ValueError names the line and
the field. A cell holding several prices ("0.0208 (first 50 TB); 0.019968 (next 450 TB)",
"0.01 (standard); 0.03 (expedited)") is read as its first price: the first volume band, the
standard retrieval speed. A blank request or retrieval price is read as 0 and said in the
tier's note; a blank capacity price leaves the tier unpriced (never chosen).

Kinds: "object" (S3, Cloud Storage, Blob: billed on stored bytes), "block" (EBS, Persistent
Disk, Hyperdisk: billed on provisioned size), "file" (FSx for Lustre, Managed Lustre),
"snapshot" and "ephemeral" (Local SSD, lost with the VM: never a checkpoint target). A tier
is `is_instant` unless the table says objects must be restored before reading (Glacier
Flexible Retrieval and Deep Archive, Intelligent-Tiering's archive tiers, Azure Archive).
"""

from __future__ import annotations

import csv
import io
import math
import re
from dataclasses import dataclass

from planner.core.providers import AWS, AZURE, GCP

REQUIRED_COLUMNS = ("provider", "service", "tier", "region", "usd_per_gb_month",
                    "usd_per_1k_put", "usd_per_1k_get", "usd_per_gb_retrieval",
                    "min_storage_days", "throughput_note", "as_of", "source_url", "quote",
                    "source_kind", "caveats")
# The CSV names providers by their catalog codes (planner.core.providers), in any case.
PROVIDER_CODES = {code: code for code in (AWS, GCP, AZURE)}
KINDS = ("object", "block", "file", "snapshot", "ephemeral")
# Words in a row's notes meaning objects must be restored (hours) before a read.
RESTORE_WORDS = ("restore needed", "asynchronous", "offline", "rehydrat")
NAME = "storage_prices.csv"
# S3 Intelligent-Tiering: the table's Frequent Access price for an object's first 30 days,
# its Infrequent Access price after, and a monitoring fee per object-month (the table's
# Frequent Access row states it; the plan's storage plan and the storage what-if both bill it).
IT_PREFIX = "S3 Intelligent-Tiering"
IT_FREQUENT = "S3 Intelligent-Tiering, Frequent Access"
IT_INFREQUENT = "S3 Intelligent-Tiering, Infrequent Access"
IT_DAYS_FREQUENT = 30.0
IT_MONITORING_USD_PER_1K_OBJECT_MONTHS = 0.0025
_NUMBER = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)")


@dataclass(frozen=True)
class StorageTier:
    """One priced storage class: USD per GB-month of capacity, per 1,000 write (put) and
    read (get) requests, per GB read back (retrieval), and the minimum billable days."""

    provider: str
    service: str
    tier: str
    region: str
    kind: str
    usd_per_gb_month: float  # NaN: no dated price in the table (never chosen)
    usd_per_1k_put: float
    usd_per_1k_get: float
    usd_per_gb_retrieval: float
    min_storage_days: float
    is_instant: bool
    as_of: str
    source_url: str
    source_kind: str
    note: str

    @property
    def is_priced(self) -> bool:
        return math.isfinite(self.usd_per_gb_month)

    @property
    def basis(self) -> str:
        """"S3 Standard us-east-1, list price as of 2024-07-01 (source kind)"."""
        return f"{self.tier} {self.region}, list price as of {self.as_of} ({self.source_kind})"


def first_price(text: str) -> float | None:
    """The first number of a price cell (None when blank); ValueError when it has none."""
    if not text.strip():
        return None
    found = _NUMBER.match(text)
    if not found:
        raise ValueError(f"not a price: {text!r}")
    value = float(found.group(1))
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"not a price: {text!r}")
    return value


def tier_kind(service: str, tier: str) -> str:
    """The kind of a row (see the module docstring) from its service and tier names."""
    words = f"{service} {tier}".lower()
    if "local ssd" in words:
        return "ephemeral"
    if "snapshot" in words:
        return "snapshot"
    if "lustre" in words:
        return "file"
    if service.startswith(("EBS", "Compute Engine")):
        return "block"
    return "object"


def _date(text: str) -> str:
    """"2024-07-01" from "2024-07-01 (Infracost golden file ...)"; the text when undated."""
    found = re.match(r"\s*(\d{4}-\d{2}(?:-\d{2})?)", text)
    return found.group(1) if found else text.strip()


def _tier(row: dict[str, str]) -> StorageTier:
    provider = PROVIDER_CODES.get(row["provider"].strip().lower())
    if provider is None:
        raise ValueError(f"provider: unknown {row['provider']!r}")
    prices = {}
    blanks = []
    for name in ("usd_per_gb_month", "usd_per_1k_put", "usd_per_1k_get",
                 "usd_per_gb_retrieval", "min_storage_days"):
        try:
            prices[name] = first_price(row[name])
        except ValueError as exc:
            raise ValueError(f"{name}: {exc}") from None
        if prices[name] is None and name not in ("usd_per_gb_month", "min_storage_days"):
            blanks.append(name.removeprefix("usd_per_").replace("_", " "))
    notes = f"{row['throughput_note']} {row['caveats']}".lower()
    capacity = prices["usd_per_gb_month"]
    note = "; ".join(filter(None, (
        f"no {', '.join(blanks)} price in the table (read as 0)" if blanks else "",
        row["caveats"].strip())))
    return StorageTier(
        provider=provider, service=row["service"].strip(), tier=row["tier"].strip(),
        region=row["region"].strip(), kind=tier_kind(row["service"], row["tier"]),
        usd_per_gb_month=math.nan if capacity is None else capacity,
        usd_per_1k_put=prices["usd_per_1k_put"] or 0.0,
        usd_per_1k_get=prices["usd_per_1k_get"] or 0.0,
        usd_per_gb_retrieval=prices["usd_per_gb_retrieval"] or 0.0,
        min_storage_days=prices["min_storage_days"] or 0.0,
        is_instant=not any(word in notes for word in RESTORE_WORDS),
        as_of=_date(row["as_of"]), source_url=row["source_url"].strip(),
        source_kind=row["source_kind"].strip(), note=note)


def parse_storage_prices(text: str) -> tuple[StorageTier, ...]:
    """Every row of storage_prices.csv as a StorageTier, in file order.

    ValueError "storage_prices.csv line N: field: why" on a missing column or a bad cell."""
    try:
        return _parse(text)
    except csv.Error as exc:
        raise ValueError(f"{NAME}: not a readable CSV ({exc})") from None


def _parse(text: str) -> tuple[StorageTier, ...]:
    reader = csv.DictReader(io.StringIO(text))
    missing = [c for c in REQUIRED_COLUMNS if c not in (reader.fieldnames or ())]
    if missing:
        raise ValueError(f"storage_prices.csv: missing columns {missing}")
    tiers = []
    for line, row in enumerate(reader, start=2):
        try:
            tiers.append(_tier({k: row.get(k) or "" for k in REQUIRED_COLUMNS}))
        except ValueError as exc:
            raise ValueError(f"storage_prices.csv line {line}: {exc}") from None
    if not tiers:
        raise ValueError("storage_prices.csv: no rows")
    return tuple(tiers)


def checkpoint_tiers(tiers: tuple[StorageTier, ...], provider: str
                     ) -> tuple[StorageTier, ...]:
    """The priced object tiers of `provider` a checkpoint or a milestone can go to, one per
    tier name (the first region the table lists): operations-only rows are left out."""
    seen: set[str] = set()
    chosen = []
    for tier in tiers:
        if (tier.provider != provider or tier.kind != "object" or not tier.is_priced
                or "operations" in tier.tier or tier.tier in seen):
            continue
        seen.add(tier.tier)
        chosen.append(tier)
    return tuple(chosen)
