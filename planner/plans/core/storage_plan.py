"""The storage plan of every option: the cheapest tier policy and its figures, as JSON.

The model (sizes, lifetimes, tier costs) is planner.plans.core.storage; this module chooses
the policy per option and words it: TB-months and dollars by tier over the run and the
retention after it, the flat-price alternative (the option's storage_usd) beside it, and
every hot tier tried with why it was or was not chosen.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from planner.core.cloud import HOURS_PER_MONTH
from planner.core.serialize import finite_list
from planner.core.storage_tiers import StorageTier
from planner.plans.core.storage import (
    Checkpointing,
    FloatArray,
    Lifetimes,
    StorageInputs,
    TierCost,
    TierOffer,
    _groups,
    checkpointing,
    tier_cost,
    tier_offers,
)

GB_PER_TB = 1000.0
# The option columns a storage plan reads.
OPTION_COLUMNS = ("provider", "gpus", "nodes", "tp", "pp", "cp", "zero_stage", "precision",
                  "time_to_train_hours", "checkpoint_interval_hours", "expected_interruptions",
                  "storage_usd")
ROLE_CHECKPOINTS = "checkpoints (hot)"
ROLE_MILESTONES = "milestones"
ROLE_DATASET = "data set"


@dataclass(frozen=True)
class Choice:
    """Per option: index of the chosen offer (-1: none eligible) and its USD."""

    index: np.ndarray
    usd: FloatArray


def _cheapest(costs: list[FloatArray], eligible: list[np.ndarray]) -> Choice:
    table = np.array([np.where(ok, usd, np.inf) for usd, ok in zip(costs, eligible,
                                                                     strict=True)])
    index = np.argmin(table, axis=0)
    usd = table[index, np.arange(table.shape[1])]
    return Choice(np.where(np.isfinite(usd), index, -1), usd)


def _restart_usd(offer: TierOffer, gb: FloatArray, objects: FloatArray,
                 restarts: FloatArray) -> FloatArray:
    """Each restart reads the latest checkpoint back: retrieval per GB and GET requests."""
    row = offer.row
    return np.asarray(restarts * (gb * row.usd_per_gb_retrieval
                                  + objects * row.usd_per_1k_get / 1000.0), dtype=np.float64)


def _dataset_offer(offers: tuple[TierOffer, ...], horizon_hours: float) -> TierOffer | None:
    """The cheapest instant tier with no retrieval fee whose minimum fits the stay."""
    fits = [o for o in offers if o.row.is_instant and o.row.usd_per_gb_retrieval == 0
            and o.row.min_storage_days * 24.0 <= horizon_hours
            and not np.isfinite(o.later_usd_per_gb_month)]
    return min(fits, key=lambda o: o.row.usd_per_gb_month, default=None)


def _num(value: Any) -> float | None:
    """A figure as a Python float, None when not finite (JSON has no infinity): extreme
    inputs (a write speed of 1e-320 GB/s) give infinite seconds."""
    number = float(value)
    return number if math.isfinite(number) else None


class _TierLines:
    """One tier's line of every option, its figures listed once (not a numpy scalar per
    option and figure)."""

    def __init__(self, role: str, cost: TierCost, usd: FloatArray) -> None:
        row = cost.offer.row
        self.fixed = {"role": role, "tier": cost.offer.name, "region": row.region,
                      "kind": row.kind}
        self.prices = {"usd_per_gb_month": row.usd_per_gb_month,
                       "min_storage_days": row.min_storage_days}
        self.tb_months = finite_list(cost.stored_gb_hours / HOURS_PER_MONTH / GB_PER_TB)
        self.billed = finite_list(cost.billed_gb_hours / HOURS_PER_MONTH / GB_PER_TB)
        self.usd = finite_list(usd)
        self.raw_usd = usd

    def line(self, i: int) -> dict[str, Any]:
        return {**self.fixed, "tb_months": self.tb_months[i],
                "billed_tb_months": self.billed[i], "usd": self.usd[i], **self.prices}


def _why_not(cost: TierCost, i: int, shortest_hours: float) -> str:
    row = cost.offer.row
    if not row.is_instant:
        return "objects must be restored before a restart can read them"
    if not cost.is_eligible[i]:
        return (f"{row.min_storage_days:g}-day minimum, but copies are deleted after "
                f"{shortest_hours / 24.0:.1f} days")
    return ""


def _shortest_all(groups: list[Lifetimes], n_options: int) -> list[float]:
    """Per option, the shortest lifetime of its copies over the groups that hold any (0 when
    none does)."""
    if not groups:
        return [0.0] * n_options
    held = np.array([g.count > 0 for g in groups])
    low = np.min(np.where(held, [g.shortest for g in groups], np.inf), axis=0)
    shortest: list[float] = np.where(held.any(axis=0), low, 0.0).tolist()
    return shortest


def _provider_plans(options: pd.DataFrame, offers: tuple[TierOffer, ...],
                    inputs: StorageInputs) -> list[dict[str, Any]]:
    """Storage plans of options of one provider (rows in order)."""
    ck = checkpointing(options, inputs)
    run = options["time_to_train_hours"].to_numpy(dtype=np.float64)
    horizon = run + inputs.storage_months * HOURS_PER_MONTH
    hot_groups, milestones, written = _groups(run, ck.interval_hours, horizon, inputs.retention)
    hot = [tier_cost(o, hot_groups, ck.gb, ck.objects) for o in offers]
    reads = [_restart_usd(o, ck.gb, ck.objects, ck.restarts) for o in offers]
    hot_ok = [c.is_eligible & c.offer.row.is_instant for c in hot]
    # a hot line's dollars include reading the checkpoint back at each restart
    hot_usd = [c.usd + r for c, r in zip(hot, reads, strict=True)]
    hot_pick = _cheapest(hot_usd, hot_ok)
    cold = [tier_cost(o, [milestones], ck.gb, ck.objects) for o in offers] if milestones else []
    cold_pick = _cheapest([c.usd for c in cold], [c.is_eligible for c in cold]) if cold else None
    hot_lines = [_TierLines(ROLE_CHECKPOINTS, c, usd) for c, usd in zip(hot, hot_usd,
                                                                          strict=True)]
    cold_lines = [_TierLines(ROLE_MILESTONES, c, c.usd) for c in cold]
    datasets = _dataset_lines(offers, inputs.dataset_gb, horizon)
    shortest = _shortest_all(hot_groups, len(options))
    is_ok = [ok.tolist() for ok in hot_ok]
    hot_index = hot_pick.index.tolist()
    cold_index = cold_pick.index.tolist() if cold_pick is not None else [-1] * len(options)
    figures = _plan_figures(options, ck, written)
    plans = []
    for i in range(len(options)):
        chosen = [tier for tier in (hot_lines[hot_index[i]] if hot_index[i] >= 0 else None,
                                    cold_lines[cold_index[i]] if cold_index[i] >= 0 else None,
                                    datasets[i]) if tier is not None]
        total = sum(float(tier.raw_usd[i]) for tier in chosen)
        alternatives = [{"tier": c.offer.name, "usd": tier.usd[i], "is_eligible": ok[i],
                         "why_not": _why_not(c, i, shortest[i])}
                        for c, tier, ok in zip(hot, hot_lines, is_ok, strict=True)]
        plans.append(_plan_dict(figures, inputs, i, [tier.line(i) for tier in chosen], total,
                                alternatives))
    return plans


def _dataset_lines(offers: tuple[TierOffer, ...], dataset_gb: float, horizon_hours: FloatArray
                   ) -> list[_TierLines | None]:
    """Per option, the data set's tier line (_dataset_offer at the option's stay, and what
    the stay costs there); None without a data set or a tier that fits."""
    if dataset_gb <= 0:
        return [None] * len(horizon_hours)
    gb_hours = dataset_gb * horizon_hours
    tiers: dict[str, _TierLines] = {}
    lines: list[_TierLines | None] = []
    for hours in horizon_hours.tolist():
        offer = _dataset_offer(offers, hours)
        if offer is not None and offer.name not in tiers:
            usd = gb_hours * offer.row.usd_per_gb_month / HOURS_PER_MONTH
            cost = TierCost(offer, gb_hours, gb_hours, usd, np.ones(len(gb_hours), dtype=bool))
            tiers[offer.name] = _TierLines(ROLE_DATASET, cost, usd)
        lines.append(None if offer is None else tiers[offer.name])
    return lines


def _plan_figures(options: pd.DataFrame, ck: Checkpointing, written: FloatArray
                  ) -> dict[str, list[Any]]:
    """Per option, the storage plan's own figures (JSON-safe lists, None where not finite)."""
    flat = (options["storage_usd"].to_numpy(dtype=np.float64) if "storage_usd" in options
            else np.full(len(options), np.nan))
    hours = options["time_to_train_hours"].to_numpy(dtype=np.float64)
    count = np.asarray(written, dtype=np.float64)
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        stall_hours = count * ck.stall_seconds / 3600.0
        arrays = {
            "checkpoint_gb": ck.raw_gb, "stored_checkpoint_gb": ck.gb,
            "shard_gb": ck.raw_gb / ck.objects, "interval_hours": ck.interval_hours,
            "write_seconds": ck.write_seconds, "read_seconds": ck.read_seconds,
            "stall_seconds_per_checkpoint": ck.stall_seconds, "stall_hours": stall_hours,
            "stall_share_of_run": stall_hours / hours, "restarts_expected": ck.restarts,
        }
    figures: dict[str, list[Any]] = {name: finite_list(values) for name, values in arrays.items()}
    figures["files_per_checkpoint"] = [int(n) for n in ck.objects.tolist()]
    figures["interval_basis"] = [str(basis) for basis in ck.interval_basis]
    figures["checkpoints_written"] = [int(n) for n in count.tolist()]
    figures["flat"] = flat.tolist()
    return figures


def _plan_dict(figures: dict[str, list[Any]], inputs: StorageInputs, i: int,
               lines: list[dict[str, Any]], total: float,
               alternatives: list[dict[str, Any]]) -> dict[str, Any]:
    """One option's storage plan: `lines` the tiers chosen and `total` their USD; without
    lines the flat rate is the total."""
    flat = figures["flat"][i]
    total = total if lines else flat
    return {
        "checkpoint_gb": figures["checkpoint_gb"][i],
        "stored_checkpoint_gb": figures["stored_checkpoint_gb"][i],
        "compression_ratio": inputs.compression_ratio,
        "files_per_checkpoint": figures["files_per_checkpoint"][i],
        "shard_gb": figures["shard_gb"][i],
        "interval_hours": figures["interval_hours"][i],
        "interval_basis": figures["interval_basis"][i],
        "checkpoints_written": figures["checkpoints_written"][i],
        "write_seconds": figures["write_seconds"][i], "read_seconds": figures["read_seconds"][i],
        "is_async": inputs.is_async,
        "stall_seconds_per_checkpoint": figures["stall_seconds_per_checkpoint"][i],
        "stall_hours": figures["stall_hours"][i],
        "goodput_stall_seconds": inputs.stall_seconds,
        "stall_share_of_run": figures["stall_share_of_run"][i],
        "restarts_expected": figures["restarts_expected"][i],
        "retention": inputs.retention.text,
        "tiers": lines, "total_usd": _num(total), "flat_usd": _num(flat),
        "saving_vs_flat_usd": _num(flat - total),
        "policy": " + ".join(f"{line['tier']} ({line['role']})" for line in lines)
        or "flat rate (no tier prices for this provider)",
        "alternatives": alternatives,
    }


def _no_tiers_plans(options: pd.DataFrame, inputs: StorageInputs) -> list[dict[str, Any]]:
    ck = checkpointing(options, inputs)
    run = options["time_to_train_hours"].to_numpy(dtype=np.float64)
    figures = _plan_figures(options, ck, np.floor(run / ck.interval_hours))
    plans = []
    for i in range(len(options)):
        plan = _plan_dict(figures, inputs, i, [], 0.0, [])
        plan["note"] = ("no storage tier prices in the shipped table for this provider: the "
                        "flat $/GB-month applies")
        plans.append(plan)
    return plans


def storage_plans(options: pd.DataFrame, tiers: tuple[StorageTier, ...],
                  inputs: StorageInputs) -> list[dict[str, Any]]:
    """One storage plan (JSON-safe dict) per option row, in row order.

    options: plan rows with provider, gpus, nodes, tp, pp, cp, zero_stage, precision,
    time_to_train_hours, checkpoint_interval_hours, expected_interruptions, storage_usd."""
    plans: list[dict[str, Any] | None] = [None] * len(options)
    groups = options.groupby("provider", sort=False, observed=True).indices.items()
    # Extreme inputs (a write speed of 1e-320 GB/s) give infinite seconds: written as null.
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        for provider, rows in groups:
            offers = tier_offers(tiers, str(provider))
            part = options.iloc[rows].reset_index(drop=True)
            found = (_provider_plans(part, offers, inputs) if offers
                     else _no_tiers_plans(part, inputs))
            for position, plan in zip(rows, found, strict=True):
                plans[int(position)] = plan
    return [p for p in plans if p is not None]


def attach_storage_plans(document_options: list[dict[str, Any]],
                         tiers: tuple[StorageTier, ...], inputs: StorageInputs,
                         ) -> None:
    """Set `storage_plan` on every option record of a plan document (in place)."""
    if not document_options:
        return
    frame = pd.DataFrame({name: [o.get(name) for o in document_options]
                          for name in OPTION_COLUMNS})
    for record, plan in zip(document_options, storage_plans(frame, tiers, inputs),
                            strict=True):
        record["storage_plan"] = plan




def tier_sources(tiers: tuple[StorageTier, ...]) -> dict[str, dict[str, str]]:
    """Where each tier's price comes from, by tier name (once per plan document, not per
    option): basis in words and the source URL."""
    sources: dict[str, dict[str, str]] = {}
    for tier in tiers:
        if tier.is_priced and tier.tier not in sources:
            sources[tier.tier] = {"basis": tier.basis, "source_url": tier.source_url}
    for provider in sorted({t.provider for t in tiers}):
        for offer in tier_offers(tiers, provider):
            sources.setdefault(offer.name, {"basis": offer.row.basis,
                                            "source_url": offer.row.source_url})
    return sources
