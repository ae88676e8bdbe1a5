"""Energy and CO2e of a job history, and what moving its burst to a cleaner region would do.

    energy_kwh = GPU-hours × GPU board power (TDP) / 1000
    co2e_kg    = energy_kwh × PUE × grid intensity (gCO2e/kWh) / 1000
The GPU-side count of planner.plans.core.carbon: host CPUs, memory and network are left out.
A place without a published intensity (a GPU cloud, an uncovered region) gets no CO2e and a
note; a GPU type without a TDP gets no energy.

The burst share is the part of a type's GPU-hours the recommendation runs without commitment
(on demand). Moving it to the lowest-carbon region that prices the same GPU on demand saves
burst energy × (PUE × intensity here − there) and costs burst GPU-hours × (price there −
price here), per GPU-hour.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

import pandas as pd

from planner.core import formatting as fmt

USAGE_COLUMNS = ("gpu_type", "provider", "region", "gpu_hours")
PRICE_COLUMNS = ("gpu_type", "provider", "region", "usd_per_gpu_hour")
FACTOR_COLUMNS = ("provider", "region", "g_co2e_per_kwh", "pue", "year", "source")


@dataclass(frozen=True)
class PlaceCarbon:
    """Energy (kWh) and CO2e (kg; None without data) of one GPU type's hours in one place."""

    gpu_type: str
    provider: str
    region: str
    gpu_hours: float
    energy_kwh: float | None
    co2e_kg: float | None
    g_co2e_per_kwh: float | None
    pue: float | None
    basis: str  # "Google region-carbon-info 2024, PUE 1.1", or why there is no CO2e


@dataclass(frozen=True)
class BurstInput:
    """A GPU type's burst: GPU-hours run without commitment, where and at what price."""

    gpu_type: str
    provider: str
    region: str
    burst_gpu_hours: float
    usd_per_gpu_hour: float


@dataclass(frozen=True)
class BurstMove:
    """Moving a type's burst to its lowest-carbon priced region: CO2e saved (kg) and the
    change in cost (USD, positive = dearer). `to_region` is "" when no priced region has data."""

    gpu_type: str
    from_provider: str
    from_region: str
    to_provider: str
    to_region: str
    burst_gpu_hours: float
    co2e_saved_kg: float | None
    cost_change_usd: float | None
    words: str


def _records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    return cast(list[dict[str, Any]], frame.to_dict("records"))


def _factors(table: pd.DataFrame) -> dict[tuple[str, str], tuple[float, float, str]]:
    missing = [c for c in FACTOR_COLUMNS if c not in table.columns]
    if missing:
        raise ValueError(f"carbon factors: missing columns {missing}")
    return {(str(r["provider"]), str(r["region"])): (
        float(r["g_co2e_per_kwh"]), float(r["pue"]),
        f"{r['source']}, {fmt.data_year(r['year'])}, PUE {float(r['pue']):g}")
        for r in _records(table)}


def _kw(tdp_watts: Mapping[str, float], gpu_type: str) -> float | None:
    watts = tdp_watts.get(gpu_type)
    return None if watts is None or not math.isfinite(watts) or watts <= 0 else watts / 1000.0


def history_carbon(usage: pd.DataFrame, tdp_watts: Mapping[str, float],
                   factors: pd.DataFrame) -> tuple[PlaceCarbon, ...]:
    """One row per (GPU type, provider, region) of `usage` (USAGE_COLUMNS, GPU-hours >= 0)."""
    missing = [c for c in USAGE_COLUMNS if c not in usage.columns]
    if missing:
        raise ValueError(f"usage: missing columns {missing}")
    if (usage["gpu_hours"] < 0).any():
        raise ValueError("usage: gpu_hours must be >= 0")
    found = _factors(factors)
    keys = ["gpu_type", "provider", "region"]
    totals = usage.astype({k: str for k in keys}).groupby(keys, sort=True)["gpu_hours"].sum()
    rows = []
    for row in _records(totals.reset_index()):
        gpu_type, provider, region = row["gpu_type"], row["provider"], row["region"]
        hours = float(row["gpu_hours"])
        kw = _kw(tdp_watts, str(gpu_type))
        energy = None if kw is None else float(hours) * kw
        factor = found.get((str(provider), str(region)))
        if factor is None or energy is None:
            why = (f"no TDP for {gpu_type}" if energy is None
                   else f"no carbon data for {fmt.label(str(provider))} {region}")
            rows.append(PlaceCarbon(str(gpu_type), str(provider), str(region), float(hours),
                                    energy, None, None, None, why))
            continue
        grams, pue, basis = factor
        rows.append(PlaceCarbon(str(gpu_type), str(provider), str(region), float(hours), energy,
                                energy * pue * grams / 1000.0, grams, pue, basis))
    return tuple(rows)


def _cleanest(prices: pd.DataFrame, gpu_type: str,
              found: Mapping[tuple[str, str], tuple[float, float, str]]
              ) -> tuple[str, str, float, float] | None:
    """(provider, region, kg CO2e per kWh drawn, USD per GPU-hour) of the lowest-carbon place
    pricing `gpu_type` on demand; ties go to the cheaper."""
    best = None
    for row in _records(prices[prices["gpu_type"] == gpu_type]):
        factor = found.get((str(row["provider"]), str(row["region"])))
        if factor is None:
            continue
        key = (factor[0] * factor[1] / 1000.0, float(row["usd_per_gpu_hour"]))
        if best is None or key < (best[2], best[3]):
            best = (str(row["provider"]), str(row["region"]), *key)
    return best


def burst_moves(bursts: Sequence[BurstInput], prices: pd.DataFrame,
                tdp_watts: Mapping[str, float], factors: pd.DataFrame) -> tuple[BurstMove, ...]:
    """Per type, moving its burst to the lowest-carbon region pricing the same GPU on demand
    (`prices`: PRICE_COLUMNS, USD per GPU-hour)."""
    found = _factors(factors)
    moves = []
    for burst in bursts:
        kw = _kw(tdp_watts, burst.gpu_type)
        target = _cleanest(prices, burst.gpu_type, found)
        here = found.get((burst.provider, burst.region))
        base = BurstMove(burst.gpu_type, burst.provider, burst.region, "", "",
                         burst.burst_gpu_hours, None, None, "")
        if target is None or kw is None:
            moves.append(_replace_words(base, "no priced region with carbon data"
                                        if kw is not None else f"no TDP for {burst.gpu_type}"))
            continue
        provider, region, kg_per_kwh, usd = target
        cost = burst.burst_gpu_hours * (usd - burst.usd_per_gpu_hour)
        saved = None if here is None else (
            burst.burst_gpu_hours * kw * (here[0] * here[1] / 1000.0 - kg_per_kwh))
        words = (f"{fmt.label(provider)} {region} ({kg_per_kwh * 1000:,.0f} gCO2e per kWh "
                 f"drawn, {fmt.usd(usd)} per GPU-hour on demand)")
        moves.append(BurstMove(burst.gpu_type, burst.provider, burst.region, provider, region,
                               burst.burst_gpu_hours, saved, cost, words))
    return tuple(moves)


def _replace_words(move: BurstMove, words: str) -> BurstMove:
    return BurstMove(move.gpu_type, move.from_provider, move.from_region, "", "",
                     move.burst_gpu_hours, None, None, words)
