"""Checkpoint storage plan of each option: size, write stall, retention, tier and dollars.

Per option (vectorized over options, closed form over checkpoints):
- size: params × bytes per parameter (BYTES_PER_PARAM by precision: 16-bit weights 2 B + fp32
  master 4 B + Adam m and v 8 B = 14 B; fp32/tf32 12 B; pricing/data/storage/checkpoint_io.csv,
  the Hugging Face accounting) unless the user gives it, divided by the compression ratio.
  Written in shards, one file per writing rank: every GPU under ZeRO >= 1 (the optimizer
  state is sharded over data-parallel ranks), one data-parallel replica (tp × pp × cp ranks)
  under ZeRO 0 (the replicas hold identical copies).
- write and read seconds: stored GB / min(write GB/s per node × writing nodes, the storage's
  aggregate cap) (PlanAssumptions' bandwidths). A synchronous write stalls training for all of
  it; an asynchronous one (PyTorch DCP async) for ASYNC_STALL_FACTOR of it.
- interval: the user's, else the option's spot rework interval, else Young/Daly
  sqrt(2 · C · MTBF) with the goodput line's stall C and failures × GPUs.
- checkpoint i (i = 1..n, n = floor(T / interval)) is written at t_i = i × interval. In the hot
  tier it lives until K newer ones exist (keep-last K; never with "all"), at most D days
  (delete-after), at most until the end of the run plus the retention after it (H = T +
  storage months × 730 h). Every M days one is copied to a colder tier (milestone) and lives
  there min(D days, H − t_i). A tier bills max(lifetime, minimum days) per object.
- restarts (failures at the goodput line's rate and expected spot interruptions) each read
  the latest checkpoint back: retrieval $/GB and GET requests of the hot tier.
- the data set stays in the provider's cheapest tier with no retrieval fee and no minimum
  longer than its stay (read every epoch) for H hours.
Policy chosen: the cheapest (hot, cold) pair among the provider's instant-read object tiers
for the hot copies (restarts read them at once) and every priced object tier for milestones,
never a tier whose minimum storage duration is longer than the copies it would hold live
(their early deletion pays for days nothing is stored). S3 Intelligent-Tiering is one tier:
Frequent Access for an object's first 30 days, Infrequent Access after, plus its monitoring
fee per object-month. The flat alternative is the option's storage_usd (one $/GB-month).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import pandas as pd

from planner.core.cloud import HOURS_PER_DAY, HOURS_PER_MONTH
from planner.core.storage_tiers import (
    IT_DAYS_FREQUENT,
    IT_FREQUENT,
    IT_INFREQUENT,
    IT_MONITORING_USD_PER_1K_OBJECT_MONTHS,
    IT_PREFIX,
    StorageTier,
    checkpoint_tiers,
)

FloatArray = npt.NDArray[np.float64]
# Bytes per parameter a resumable checkpoint keeps (checkpoint_io.csv, Hugging Face row):
# 16-bit weights (2) + fp32 master weights (4) + Adam m and v (8); fp32 training keeps no copy.
BYTES_PER_PARAM: dict[str, float] = {"bf16": 14.0, "fp16": 14.0, "fp8": 14.0,
                                     "tf32": 12.0, "fp32": 12.0}
# PyTorch DCP async, 7B model: 148.8 s -> 6.3 s of downtime per checkpoint (checkpoint_io.csv).
ASYNC_STALL_FACTOR = 6.3 / 148.8
IT_NAME = "S3 Intelligent-Tiering (auto: Infrequent after 30 days)"
RETENTION_KEYS = ("keep-last", "milestone-days", "delete-after-days")
RETENTION_EXAMPLE = "keep-last=3,milestone-days=7,delete-after-days=30"


@dataclass(frozen=True)
class Retention:
    """keep_last: hot checkpoints kept (None = all); milestone_days: one checkpoint copied to
    a colder tier this often (None = none); delete_after_days: every copy deleted at this age
    (None = kept to the end of the retention after the run)."""

    keep_last: int | None = 2
    milestone_days: float | None = None
    delete_after_days: float | None = None

    def __post_init__(self) -> None:
        if self.keep_last is not None and self.keep_last < 1:
            raise ValueError("retention: keep-last must be a whole number from 1, or all")
        for name in ("milestone_days", "delete_after_days"):
            value = getattr(self, name)
            if value is not None and not (math.isfinite(value) and 0 < value <= 36_500):
                raise ValueError(f"retention: {name.replace('_', '-')} must be above 0 and "
                                 "up to 36,500 days")

    @property
    def text(self) -> str:
        parts = [f"keep-last={'all' if self.keep_last is None else self.keep_last}"]
        if self.milestone_days is not None:
            parts.append(f"milestone-days={self.milestone_days:g}")
        if self.delete_after_days is not None:
            parts.append(f"delete-after-days={self.delete_after_days:g}")
        return ",".join(parts)


def parse_retention(text: str | None) -> Retention:
    """Retention from "keep-last=3,milestone-days=7,delete-after-days=30" (keep-last=all keeps
    every checkpoint; blank: keep the last 2). ValueError "retention: ..." naming the part."""
    if text is None or not str(text).strip():
        return Retention()
    values: dict[str, str] = {}
    for part in str(text).split(","):
        key, sep, value = part.strip().partition("=")
        key = key.strip().lower().replace("_", "-")
        if not sep or key not in RETENTION_KEYS or key in values:
            raise ValueError(f"retention: {part.strip()!r} is not one of "
                             f"{', '.join(k + '=' for k in RETENTION_KEYS)} given once, e.g. "
                             f"{RETENTION_EXAMPLE}")
        values[key] = value.strip()
    keep = values.get("keep-last", "2")
    if keep.lower() != "all" and not re.fullmatch(r"\d{1,6}", keep):
        raise ValueError(f"retention: keep-last must be a whole number from 1, or all "
                         f"(you gave {keep!r})")
    return Retention(keep_last=None if keep.lower() == "all" else int(keep),
                     milestone_days=_days(values, "milestone-days"),
                     delete_after_days=_days(values, "delete-after-days"))


def _days(values: dict[str, str], key: str) -> float | None:
    if key not in values:
        return None
    try:
        return float(values[key])
    except ValueError:
        raise ValueError(f"retention: {key} must be a number of days "
                         f"(you gave {values[key]!r})") from None


@dataclass(frozen=True)
class StorageInputs:
    """What every option's storage plan shares. Sizes in GB, bandwidths in GB/s, hours."""

    params: float
    checkpoint_gb: float | None  # the user's (None: from params and each option's precision)
    dataset_gb: float
    retention: Retention
    storage_months: float  # kept after the run
    compression_ratio: float = 1.0
    is_async: bool = False
    interval_hours: float | None = None  # the user's; None: spot rework or Young/Daly
    write_gbytes_per_s_per_node: float = 2.0
    max_aggregate_gbytes_per_s: float = 20.0
    stall_seconds: float = 30.0  # the goodput line's checkpoint stall (its Young/Daly C)
    failures_per_gpu_hour: float = 0.0

    def __post_init__(self) -> None:
        if not self.compression_ratio >= 1.0:
            raise ValueError("checkpoint_compression_ratio: must be 1 (none) or more")
        if self.interval_hours is not None and not self.interval_hours > 0:
            raise ValueError("checkpoint_every_hours: must be above 0")


def sum_clipped(first: FloatArray, step: FloatArray, count: FloatArray,
                low: FloatArray | float, high: FloatArray | float) -> FloatArray:
    """Σ_{j<count} clip(first − j·step, low, high) per element, in closed form (step >= 0).
    Used for a group of checkpoints whose lifetimes fall by one interval each."""
    first, step, count = (np.asarray(a, dtype=np.float64) for a in (first, step, count))
    low = np.asarray(low, dtype=np.float64) + 0.0 * first
    high = np.maximum(np.asarray(high, dtype=np.float64) + 0.0 * first, low)
    with np.errstate(divide="ignore", invalid="ignore"):
        above = np.where(step > 0, np.floor((first - high) / step) + 1,
                         np.where(first >= high, count, 0.0))
        below_from = np.where(step > 0, np.ceil((first - low) / step),
                              np.where(first <= low, 0.0, count))
    # Only finite or -inf values reach here (high >= low >= 0; an infinite high gives -inf).
    n_high = np.clip(above, 0, count)
    start_low = np.maximum(np.clip(below_from, 0, count), n_high)
    middle = start_low - n_high
    middle_sum = middle * first - step * (n_high + start_low - 1) * middle / 2.0
    high_part = n_high * np.where(n_high > 0, high, 0.0)
    low_part = (count - start_low) * np.where(count - start_low > 0, low, 0.0)
    return np.asarray(high_part + middle_sum + low_part, dtype=np.float64)


@dataclass(frozen=True)
class Lifetimes:
    """A group of copies per option: `count` copies, the first living `first` hours and each
    next one `step` hours less (before capping at `cap` hours); `shortest` is the shortest."""

    first: FloatArray
    step: FloatArray
    count: FloatArray
    cap: FloatArray
    shortest: FloatArray

    def billed_hours(self, min_hours: float, limit: float = np.inf) -> FloatArray:
        """Σ min(max(lifetime, min_hours), limit) over the group's copies."""
        high = np.minimum(self.cap, limit)
        return sum_clipped(self.first, self.step, self.count, min(min_hours, limit), high)


def _groups(run: FloatArray, interval: FloatArray, horizon: FloatArray,
            retention: Retention) -> tuple[list[Lifetimes], Lifetimes | None, FloatArray]:
    """(hot groups, milestone group or None, checkpoints written) per option."""
    n = np.floor(run / interval)
    cap = np.full(len(run), np.inf if retention.delete_after_days is None
                  else retention.delete_after_days * HOURS_PER_DAY)
    keep = n if retention.keep_last is None else np.minimum(n, retention.keep_last)
    superseded = Lifetimes(first=keep * interval, step=0.0 * n, count=n - keep,
                           cap=cap, shortest=np.minimum(keep * interval, cap))
    # The last `keep` copies live to the horizon: the newest (i = n) shortest.
    tail_first = horizon - (n - keep + 1) * interval
    tail = Lifetimes(first=tail_first, step=interval, count=keep, cap=cap,
                     shortest=np.minimum(horizon - n * interval, cap))
    hot = [superseded, tail]
    if retention.milestone_days is None:
        return hot, None, n
    every = np.maximum(1.0, np.round(retention.milestone_days * HOURS_PER_DAY / interval))
    count = np.floor(n / every)
    milestones = Lifetimes(first=horizon - every * interval, step=every * interval,
                           count=count, cap=cap,
                           shortest=np.minimum(horizon - count * every * interval, cap))
    return hot, milestones, n


@dataclass(frozen=True)
class TierOffer:
    """A tier a copy can be stored in: its price row, and for S3 Intelligent-Tiering the
    cheaper price an object moves to after `later_after_days` and the monitoring fee."""

    name: str
    row: StorageTier
    later_usd_per_gb_month: float = math.nan
    later_after_days: float = math.inf
    monitoring_usd_per_1k_object_months: float = 0.0


def tier_offers(tiers: tuple[StorageTier, ...], provider: str) -> tuple[TierOffer, ...]:
    """The provider's object tiers for checkpoints (planner.core.storage_tiers), with S3
    Intelligent-Tiering's access tiers folded into one offer."""
    rows = checkpoint_tiers(tiers, provider)
    found = {t.tier: t for t in rows}
    offers = [TierOffer(t.tier, t) for t in rows if not t.tier.startswith(IT_PREFIX)]
    if IT_FREQUENT in found and IT_INFREQUENT in found:
        offers.append(TierOffer(IT_NAME, found[IT_FREQUENT],
                                later_usd_per_gb_month=found[IT_INFREQUENT].usd_per_gb_month,
                                later_after_days=IT_DAYS_FREQUENT,
                                monitoring_usd_per_1k_object_months=(
                                    IT_MONITORING_USD_PER_1K_OBJECT_MONTHS)))
    return tuple(offers)


@dataclass(frozen=True)
class TierCost:
    """One tier's part of a policy, per option: stored and billed GB-hours, USD (storage,
    early deletion, monitoring and write requests), and whether its minimum fits every copy."""

    offer: TierOffer
    stored_gb_hours: FloatArray
    billed_gb_hours: FloatArray
    usd: FloatArray
    is_eligible: npt.NDArray[np.bool_]


def tier_cost(offer: TierOffer, groups: list[Lifetimes], gb: FloatArray,
              objects: FloatArray) -> TierCost:
    """What `groups` of copies of `gb` each (in `objects` files) cost in `offer`."""
    row = offer.row
    min_hours = row.min_storage_days * HOURS_PER_DAY
    stored = sum((g.billed_hours(0.0) for g in groups), np.zeros(len(gb))) * gb
    billed = sum((g.billed_hours(min_hours) for g in groups), np.zeros(len(gb))) * gb
    writes = sum((g.count for g in groups), np.zeros(len(gb)))
    shortest = np.min([np.where(g.count > 0, g.shortest, np.inf) for g in groups], axis=0)
    usd = billed * row.usd_per_gb_month / HOURS_PER_MONTH
    if math.isfinite(offer.later_usd_per_gb_month):
        early_hours = offer.later_after_days * HOURS_PER_DAY
        early = sum((g.billed_hours(min_hours, early_hours) for g in groups),
                    np.zeros(len(gb))) * gb
        usd = (early * row.usd_per_gb_month
               + (billed - early) * offer.later_usd_per_gb_month) / HOURS_PER_MONTH
    object_months = objects * stored / np.maximum(gb, 1e-12) / HOURS_PER_MONTH
    usd = (usd + object_months * offer.monitoring_usd_per_1k_object_months / 1000.0
           + writes * objects * row.usd_per_1k_put / 1000.0)
    return TierCost(offer, stored, billed, np.asarray(usd, dtype=np.float64),
                    np.asarray(shortest >= min_hours - 1e-9))


@dataclass(frozen=True)
class Checkpointing:
    """Per option: checkpoint GB as stored (after compression), files per checkpoint, write
    and read seconds, stall seconds per checkpoint, interval hours, restarts expected."""

    raw_gb: FloatArray
    gb: FloatArray
    objects: FloatArray
    write_seconds: FloatArray
    read_seconds: FloatArray
    stall_seconds: FloatArray
    interval_hours: FloatArray
    interval_basis: npt.NDArray[np.object_]
    restarts: FloatArray


def _column(options: pd.DataFrame, name: str, default: float) -> FloatArray:
    if name not in options.columns:
        return np.full(len(options), default)
    values = pd.to_numeric(options[name], errors="coerce").to_numpy(dtype=np.float64)
    return np.where(np.isfinite(values), values, default)


def checkpointing(options: pd.DataFrame, inputs: StorageInputs) -> Checkpointing:
    """Size, shards, bandwidth, stall and interval of every option (see module docstring)."""
    gpus, nodes = _column(options, "gpus", 1.0), _column(options, "nodes", 1.0)
    run = _column(options, "time_to_train_hours", 1.0)
    precision = options.get("precision", pd.Series(["bf16"] * len(options)))
    per_param = precision.astype(str).map(BYTES_PER_PARAM).fillna(14.0).to_numpy(np.float64)
    raw = (np.full(len(options), inputs.checkpoint_gb) if inputs.checkpoint_gb is not None
           else inputs.params * per_param / 1e9)
    gb = raw / inputs.compression_ratio
    replica = (_column(options, "tp", 1.0) * _column(options, "pp", 1.0)
               * _column(options, "cp", 1.0))
    writers = np.where(_column(options, "zero_stage", 0.0) >= 1, gpus, np.minimum(replica, gpus))
    writer_nodes = np.ceil(writers / np.maximum(gpus / nodes, 1.0))
    per_node, cap = inputs.write_gbytes_per_s_per_node, inputs.max_aggregate_gbytes_per_s
    write = gb / np.minimum(per_node * writer_nodes, cap)
    read = gb / np.minimum(per_node * nodes, cap)
    stall = write * (ASYNC_STALL_FACTOR if inputs.is_async else 1.0)
    failures_per_hour = inputs.failures_per_gpu_hour * gpus
    with np.errstate(divide="ignore"):
        young = np.sqrt(2.0 * inputs.stall_seconds / 3600.0 / failures_per_hour)
    spot = _column(options, "checkpoint_interval_hours", np.nan)
    if inputs.interval_hours is not None:
        interval = np.full(len(options), inputs.interval_hours)
        basis = np.full(len(options), "yours", dtype=object)
    else:
        has_spot = np.isfinite(spot) & (spot > 0)
        interval = np.where(has_spot, spot, np.minimum(young, run))
        basis = np.where(has_spot, "Young/Daly on spot interruptions and failures",
                         "Young/Daly on failures (the goodput line)").astype(object)
    restarts = failures_per_hour * run + _column(options, "expected_interruptions", 0.0)
    return Checkpointing(np.asarray(raw, dtype=np.float64), np.asarray(gb, dtype=np.float64),
                         writers, write, read, stall, np.maximum(interval, 1e-6), basis,
                         restarts)
