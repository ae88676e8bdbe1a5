"""Storage what-if: a team's checkpoint fleet priced per provider and tier policy, per year.

Steady state: each model writes `checkpoints_per_day` checkpoints of `checkpoint_gb`, all
year, so every copy of a policy lives the same `L` hours and the year costs
    copies per year × (the copy's billed GB-hours × price) (+ requests, monitoring)
A tier bills max(L, minimum days) per copy (early deletion); S3 Intelligent-Tiering bills
Frequent Access for a copy's first 30 days and Infrequent Access after, plus its monitoring
fee per object-month. Block volumes (EBS gp3, Persistent Disk) bill what is provisioned:
(copies alive) × size × (1 + headroom), whether used or not, 12 months a year.

Policies (per provider with prices in the table):
- block: every checkpoint on block volumes for `before_days`, uncompressed (the "before");
- object: the same checkpoints in the provider's standard object class, same retention;
- tiered: the last `hot_keep_last` checkpoints per model on block volumes (restarts), every
  checkpoint compressed by `compression_ratio` in an object tier deleted after
  `after_days` (lifecycle): S3 Intelligent-Tiering, or the cheapest instant class whose
  minimum storage duration fits (never one whose minimum is longer than the copies live).
`hot_data_gb` (data sets being trained on) stays on block volumes in every policy.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from planner.core.cloud import HOURS_PER_DAY, HOURS_PER_MONTH
from planner.core.storage_tiers import (
    IT_DAYS_FREQUENT,
    IT_FREQUENT,
    IT_INFREQUENT,
    IT_MONITORING_USD_PER_1K_OBJECT_MONTHS,
    IT_PREFIX,
    StorageTier,
)

DAYS_PER_YEAR = 365.0
# Block volume and standard object class per provider (the first matching table row).
BLOCK_TIERS = ("gp3 (General Purpose SSD)", "Persistent Disk balanced (pd-balanced)")
STANDARD_TIERS = ("S3 Standard", "Standard", "Hot")
# Lossless codecs on bf16 weights stay under ~1.51x (checkpoint_io.csv, z4ai row).
LOSSLESS_CEILING = 1.51


@dataclass(frozen=True)
class FleetModel:
    """One model's checkpoints: GB each (uncompressed) and how many a day."""

    name: str
    checkpoint_gb: float
    checkpoints_per_day: float

    def __post_init__(self) -> None:
        if not (math.isfinite(self.checkpoint_gb) and 0 < self.checkpoint_gb <= 1e6):
            raise ValueError(f"models: {self.name}: checkpoint GB must be above 0 and up to "
                             "1,000,000")
        if not (math.isfinite(self.checkpoints_per_day) and 0 < self.checkpoints_per_day <= 1440):
            raise ValueError(f"models: {self.name}: checkpoints per day must be above 0 and "
                             "up to 1,440")


@dataclass(frozen=True)
class FleetInputs:
    """The fleet and both policies' settings (days, shares, GB)."""

    models: tuple[FleetModel, ...]
    before_days: float = 60.0
    headroom_pct: float = 25.0
    hot_data_gb: float = 0.0
    hot_keep_last: int = 2
    after_days: float = 30.0
    compression_ratio: float = 1.0
    files_per_checkpoint: int = 8

    def __post_init__(self) -> None:
        if not self.models:
            raise ValueError("models: give at least one model")
        checks = (("before_days", 0 < self.before_days <= 3650),
                  ("after_days", 0 < self.after_days <= 3650),
                  ("headroom_pct", 0 <= self.headroom_pct <= 1000),
                  ("hot_data_gb", 0 <= self.hot_data_gb <= 1e9),
                  ("hot_keep_last", 0 <= self.hot_keep_last <= 1000),
                  ("compression_ratio", 1 <= self.compression_ratio <= 100),
                  ("files_per_checkpoint", 1 <= self.files_per_checkpoint <= 1_000_000))
        for name, ok in checks:
            if not ok:
                raise ValueError(f"{name}: out of range")


@dataclass(frozen=True)
class PolicyCost:
    """One policy on one provider, per year: TB-months by tier, USD by tier, total."""

    provider: str
    policy: str
    label: str
    tb_months: dict[str, float]
    usd: dict[str, float]
    total_usd: float
    notes: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"provider": self.provider, "policy": self.policy, "label": self.label,
                "tb_months_per_year": self.tb_months, "usd_per_year": self.usd,
                "total_usd_per_year": self.total_usd, "notes": list(self.notes)}


def _row(tiers: tuple[StorageTier, ...], provider: str, names: tuple[str, ...]
         ) -> StorageTier | None:
    return next((t for t in tiers if t.provider == provider and t.tier in names
                 and t.is_priced), None)


def _block_usd(gb_provisioned: float, row: StorageTier) -> tuple[float, float]:
    """(TB-months, USD) of block volumes provisioned all year."""
    tb_months = gb_provisioned * 12.0 / 1000.0
    return tb_months, gb_provisioned * 12.0 * row.usd_per_gb_month


def _copies_per_year(inputs: FleetInputs) -> float:
    return sum(m.checkpoints_per_day for m in inputs.models) * DAYS_PER_YEAR


def _gb_written_per_year(inputs: FleetInputs) -> float:
    return sum(m.checkpoint_gb * m.checkpoints_per_day for m in inputs.models) * DAYS_PER_YEAR


def _object_year(row: StorageTier, inputs: FleetInputs, days: float, ratio: float,
                 later: StorageTier | None = None) -> tuple[float, float]:
    """(TB-months, USD) a year of every checkpoint kept `days` in `row` (`later`: the price
    after 30 days, Intelligent-Tiering), with PUT requests and monitoring."""
    life_hours = days * HOURS_PER_DAY
    billed_hours = max(life_hours, row.min_storage_days * HOURS_PER_DAY)
    gb = _gb_written_per_year(inputs) / ratio
    tb_months = gb * life_hours / HOURS_PER_MONTH / 1000.0
    objects = _copies_per_year(inputs) * inputs.files_per_checkpoint
    puts = objects * row.usd_per_1k_put / 1000.0
    if later is None:
        return tb_months, gb * billed_hours / HOURS_PER_MONTH * row.usd_per_gb_month + puts
    early = min(billed_hours, IT_DAYS_FREQUENT * HOURS_PER_DAY)
    storage = gb / HOURS_PER_MONTH * (early * row.usd_per_gb_month
                                      + (billed_hours - early) * later.usd_per_gb_month)
    monitoring = (objects * life_hours / HOURS_PER_MONTH
                  * IT_MONITORING_USD_PER_1K_OBJECT_MONTHS / 1000.0)
    return tb_months, storage + puts + monitoring


def _policy(provider: str, policy: str, label: str, parts: dict[str, tuple[float, float]],
            notes: tuple[str, ...] = ()) -> PolicyCost:
    return PolicyCost(provider, policy, label, {k: v[0] for k, v in parts.items()},
                      {k: v[1] for k, v in parts.items()},
                      sum(v[1] for v in parts.values()), notes)


def _cheapest_fitting(tiers: tuple[StorageTier, ...], provider: str,
                      days: float) -> StorageTier | None:
    fits = [t for t in tiers if t.provider == provider and t.kind == "object" and t.is_instant
            and t.is_priced and "operations" not in t.tier
            and not t.tier.startswith(IT_PREFIX)
            and t.min_storage_days <= days]
    return min(fits, key=lambda t: t.usd_per_gb_month, default=None)


def provider_policies(tiers: tuple[StorageTier, ...], provider: str,
                      inputs: FleetInputs) -> list[PolicyCost]:
    """The policies of one provider ([] when the table has no block-volume price for it)."""
    block = _row(tiers, provider, BLOCK_TIERS)
    standard = _row(tiers, provider, STANDARD_TIERS)
    if block is None or standard is None:
        return []
    headroom = 1.0 + inputs.headroom_pct / 100.0
    alive_gb = sum(m.checkpoint_gb * m.checkpoints_per_day for m in inputs.models)
    hot_data = _block_usd(inputs.hot_data_gb * headroom, block)
    before = _block_usd(alive_gb * inputs.before_days * headroom, block)
    hot_keep = _block_usd(sum(m.checkpoint_gb for m in inputs.models)
                          * inputs.hot_keep_last * headroom, block)
    policies = [
        _policy(provider, "block", f"All checkpoints on {block.tier}, "
                f"{inputs.before_days:g} days",
                {f"{block.tier}: checkpoints": before, f"{block.tier}: hot data": hot_data}),
        _policy(provider, "object", f"All checkpoints in {standard.tier}, "
                f"{inputs.before_days:g} days", {
                    f"{standard.tier}: checkpoints": _object_year(
                        standard, inputs, inputs.before_days, 1.0),
                    f"{block.tier}: hot data": hot_data}),
    ]
    for row, later in _tiered_rows(tiers, provider, inputs.after_days):
        name = IT_PREFIX if later is not None else row.tier
        policies.append(_policy(
            provider, "tiered" if later is not None else "tiered_cheapest",
            f"Last {inputs.hot_keep_last} per model on {block.tier}; every checkpoint "
            f"compressed {inputs.compression_ratio:.2f}x in {name}, deleted after "
            f"{inputs.after_days:g} days",
            {f"{block.tier}: last checkpoints": hot_keep,
             f"{name}: checkpoints": _object_year(row, inputs, inputs.after_days,
                                                  inputs.compression_ratio, later),
             f"{block.tier}: hot data": hot_data}))
    return policies


def _priced_rows(tiers: tuple[StorageTier, ...], provider: str, inputs: FleetInputs
                 ) -> list[StorageTier]:
    """The table rows the provider's policies are priced with ([] when it has none)."""
    rows = [_row(tiers, provider, BLOCK_TIERS), _row(tiers, provider, STANDARD_TIERS)]
    if None in rows:  # provider_policies prices nothing without both
        return []
    rows += [row for pair in _tiered_rows(tiers, provider, inputs.after_days) for row in pair]
    return [row for row in rows if row is not None]


def _tiered_rows(tiers: tuple[StorageTier, ...], provider: str, days: float
                 ) -> list[tuple[StorageTier, StorageTier | None]]:
    rows: list[tuple[StorageTier, StorageTier | None]] = []
    frequent = _row(tiers, provider, (IT_FREQUENT,))
    infrequent = _row(tiers, provider, (IT_INFREQUENT,))
    if frequent is not None and infrequent is not None:
        rows.append((frequent, infrequent))
    cheapest = _cheapest_fitting(tiers, provider, days)
    if cheapest is not None:
        rows.append((cheapest, None))
    return rows


def price_fleet(tiers: tuple[StorageTier, ...], inputs: FleetInputs,
                providers: tuple[str, ...]) -> dict[str, Any]:
    """Every provider's policies and the saving of each against its block-volume policy, with
    the assumptions in words and a lossless-only sensitivity (JSON-safe dict)."""
    rows: list[dict[str, Any]] = []
    missing = []
    for provider in providers:
        found = provider_policies(tiers, provider, inputs)
        if not found:
            missing.append(provider)
        base = next((p.total_usd for p in found if p.policy == "block"), math.nan)
        for policy in found:
            rows.append({**policy.to_dict(),
                         "saving_usd_per_year": base - policy.total_usd,
                         "saving_pct": 100.0 * (1.0 - policy.total_usd / base)})
    return {"policies": rows, "providers_without_prices": missing,
            "assumptions": assumptions_text(inputs, tuple(
                row for provider in providers for row in _priced_rows(tiers, provider, inputs))),
            "lossless_only": _lossless(tiers, inputs, providers)}


def _lossless(tiers: tuple[StorageTier, ...], inputs: FleetInputs,
              providers: tuple[str, ...]) -> list[dict[str, Any]]:
    """The tiered policies again at lossless compression only (at most 1.51x)."""
    if inputs.compression_ratio <= LOSSLESS_CEILING:
        return []
    lossless = FleetInputs(**{**inputs.__dict__, "compression_ratio": LOSSLESS_CEILING})
    return [p.to_dict() for provider in providers
            for p in provider_policies(tiers, provider, lossless) if p.policy.startswith("tiered")]


def assumptions_text(inputs: FleetInputs, rows: tuple[StorageTier, ...] = ()) -> list[str]:
    """Every assumption of the what-if, one sentence each; `rows`: the table rows priced
    (their basis and as-of date, each once)."""
    models = "; ".join(f"{m.name}: {m.checkpoint_gb:g} GB × {m.checkpoints_per_day:g}/day"
                       for m in inputs.models)
    saved = 100.0 * (1.0 - 1.0 / inputs.compression_ratio)
    lines = [
        f"Fleet: {models}, all year (steady state: each copy lives as long as its policy).",
        f"Before: every checkpoint kept {inputs.before_days:g} days on block volumes "
        f"provisioned {inputs.headroom_pct:g} % above what they hold (billed whether used "
        "or not).",
        f"After: the last {inputs.hot_keep_last} checkpoints per model stay on block volumes "
        "for restarts; every checkpoint goes to object storage compressed "
        f"{inputs.compression_ratio:.2f}x ({saved:.0f} % smaller) and a lifecycle rule "
        f"deletes it after {inputs.after_days:g} days.",
        f"Hot data kept on block volumes in every policy: {inputs.hot_data_gb:,.0f} GB.",
        f"Requests: {inputs.files_per_checkpoint} files per checkpoint, one PUT each; no "
        "reads priced (restarts read the block-volume copies).",
        "Prices: pricing/data/storage/storage_prices.csv (list prices, first volume band"
        + "".join(f"; {basis}" for basis in dict.fromkeys(row.basis for row in rows))
        + "); egress and snapshots not included.",
    ]
    if inputs.compression_ratio > LOSSLESS_CEILING:
        lines.append(f"{saved:.0f} % smaller is beyond lossless compression of bf16 weights "
                     f"(about {LOSSLESS_CEILING}x at most; ZipNN often saves 33 %): it needs "
                     "lossy or delta methods (ExCP, Inshrinkerator, Check-N-Run); the "
                     "lossless-only figures are shown too.")
    return lines
