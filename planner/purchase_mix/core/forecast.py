"""Demand over a commitment's term: history gate, trend with its confidence, and
block-bootstrapped paths under growth scenarios.

Paths: the term is a sequence of weeks; each week is a 168-hour block of the history
(started at a random whole day, wrapping around; blocks come from the last year of history)
scaled by (1 + g) ** (years ahead) for a scenario growth rate g per year, and by 0 after the
GPU type's retirement. Demand is in instances (GPUs / GPUs per instance).
Per block, the instance-hours above a level u, E_b(u) = sum_h max(0, x_h - u), are tabulated
on a grid of u; a scaled block's excess s * E_b(L / s) is read by linear interpolation.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

HOURS_PER_WEEK = 168
WEEKS_PER_YEAR = 52
GRID_POINTS = 96
BLOCK_HISTORY_HOURS = 365 * 24
MIN_DAYS_FOR_COMMITMENT = 30
MIN_DAYS_FOR_3_YEARS = 90
MIN_TREND_DAYS = 3  # fewer whole days: no trend is fitted, and none is drawn
Z_90 = 1.6449  # two-sided 90 % normal interval


@dataclass(frozen=True)
class TrendFit:
    """Least-squares line through daily mean demand, as a growth rate per year of the mean.

    growth_per_year = slope * 365 / mean; the interval is +-1.645 standard errors (90 %).
    is_significant_decline: the whole interval is below zero.
    """

    days: int
    growth_per_year: float | None
    low_per_year: float | None
    high_per_year: float | None
    is_significant_decline: bool


def fit_growth(hourly_total: np.ndarray) -> TrendFit:
    """Trend of daily mean demand (any unit) with a 90 % interval; None below 3 days."""
    n_days = len(hourly_total) // 24
    if n_days < MIN_TREND_DAYS:
        return TrendFit(n_days, None, None, None, False)
    daily = hourly_total[: n_days * 24].reshape(n_days, 24).mean(axis=1)
    mean = float(daily.mean())
    if mean <= 0:
        return TrendFit(n_days, None, None, None, False)
    days = np.arange(n_days, dtype=np.float64)
    slope, intercept = np.polyfit(days, daily, 1)
    residual = daily - (slope * days + intercept)
    spread = float(np.sqrt((residual**2).sum() / (n_days - 2)))
    slope_se = spread / float(np.sqrt(((days - days.mean()) ** 2).sum()))
    scale = 365.0 / mean
    low, high = (slope - Z_90 * slope_se) * scale, (slope + Z_90 * slope_se) * scale
    return TrendFit(n_days, float(slope * scale), float(low), float(high), bool(high < 0))


class TermLike(Protocol):
    @property
    def term_years(self) -> float: ...


@dataclass(frozen=True)
class HistoryGate:
    """Whether the history is long and steady enough to commit, and why not."""

    days: float
    is_commitment_allowed: bool
    is_3_year_allowed: bool
    reasons: tuple[str, ...]


def gate_history(n_hours: int, trend: TrendFit) -> HistoryGate:
    """Under 30 days: no commitment. 3-year terms: 90 days and no significant decline."""
    days = n_hours / 24.0
    reasons: list[str] = []
    is_any = days >= MIN_DAYS_FOR_COMMITMENT
    if not is_any:
        reasons.append(
            f"The history covers {days:.1f} days; a commitment needs at least "
            f"{MIN_DAYS_FOR_COMMITMENT} days ({MIN_DAYS_FOR_COMMITMENT - days:.1f} more days "
            "of history), so everything runs without commitment."
        )
    is_3y = is_any and days >= MIN_DAYS_FOR_3_YEARS
    if is_any and not is_3y:
        reasons.append(
            f"3-year terms need at least {MIN_DAYS_FOR_3_YEARS} days of history; this one has "
            f"{days:.1f} ({MIN_DAYS_FOR_3_YEARS - days:.1f} more days would allow one)."
        )
    if is_3y and trend.is_significant_decline and trend.growth_per_year is not None:
        is_3y = False
        reasons.append(
            f"Demand is falling ({100 * trend.growth_per_year:+.0f}% per year, 90% interval "
            f"{100 * (trend.low_per_year or 0):+.0f}% to {100 * (trend.high_per_year or 0):+.0f}%)"
            ": no 3-year term."
        )
    return HistoryGate(days, is_any, is_3y, tuple(reasons))


def option_block(option: TermLike, gate: HistoryGate) -> str:
    """Why the gate forbids a term ("" when it allows it): the buying rule's history gates."""
    if not gate.is_commitment_allowed:
        return gate.reasons[0]
    if option.term_years > 1 and not gate.is_3_year_allowed:
        return next((r for r in gate.reasons if "3-year" in r), "no 3-year term")
    return ""


@dataclass(frozen=True)
class BlockTable:
    """Excess instance-hours per history block on a level grid: excess[b, k] at grid[k]."""

    grid: np.ndarray  # levels, instances, ascending from 0
    excess: np.ndarray  # (blocks, grid points), instance-hours above the level in the block
    total: np.ndarray  # (blocks,), instance-hours in the block

    @property
    def n_blocks(self) -> int:
        return int(self.excess.shape[0])


def block_table(demand_instances: np.ndarray) -> BlockTable:
    """Blocks of HOURS_PER_WEEK hours starting at every whole day of the last year (circular)."""
    x = np.asarray(demand_instances, dtype=np.float64)[-BLOCK_HISTORY_HOURS:]
    if len(x) == 0:
        raise ValueError("no demand hours")
    starts = np.arange(0, len(x), 24)
    index = (starts[:, None] + np.arange(HOURS_PER_WEEK)[None, :]) % len(x)
    blocks = x[index]
    peak = float(x.max())
    grid = np.linspace(0.0, peak if peak > 0 else 1.0, GRID_POINTS + 1)
    excess = np.empty((len(starts), len(grid)))
    for k, level in enumerate(grid):
        excess[:, k] = np.maximum(blocks - level, 0.0).sum(axis=1)
    return BlockTable(grid, excess, blocks.sum(axis=1))


@dataclass(frozen=True)
class Paths:
    """Sampled weeks of the term: block ids and scale factors, shape (scenarios, paths, weeks)."""

    scenarios: tuple[float, ...]
    blocks: np.ndarray
    scale: np.ndarray


def sample_paths(
    table: BlockTable,
    *,
    scenarios: Sequence[float],
    n_paths: int,
    n_weeks: int,
    service_years_left: float | None,
    seed: int,
) -> Paths:
    """Block-bootstrap paths for every growth scenario (the same blocks for each scenario,
    so scenarios differ only by growth: common random numbers)."""
    if not scenarios or any(g <= -1.0 for g in scenarios):
        raise ValueError("growth scenarios must be > -100 % per year")
    rng = np.random.default_rng(seed)
    blocks = rng.integers(0, table.n_blocks, size=(n_paths, n_weeks))
    years = (np.arange(n_weeks) + 0.5) / WEEKS_PER_YEAR
    alive = np.ones(n_weeks)
    if service_years_left is not None:
        alive = (years < service_years_left).astype(np.float64)
    growth = np.array([(1.0 + g) ** years for g in scenarios]) * alive[None, :]
    scale = np.broadcast_to(growth[:, None, :], (len(scenarios), n_paths, n_weeks))
    return Paths(tuple(scenarios), np.broadcast_to(blocks, scale.shape), scale)


def used_instance_hours(table: BlockTable, paths: Paths, level: float, n_weeks: int) -> np.ndarray:
    """Instance-hours served by `level` committed instances over the first n_weeks of each
    path: sum_weeks s * (total_b - E_b(level / s)); shape (scenarios, paths)."""
    scale = paths.scale[..., :n_weeks]
    blocks = paths.blocks[..., :n_weeks]
    total = table.total[blocks] * scale
    if level <= 0:
        return np.zeros(scale.shape[:2])
    step = float(table.grid[1] - table.grid[0])
    with np.errstate(divide="ignore"):
        position = np.where(scale > 0, level / np.maximum(scale, 1e-12) / step, np.inf)
    position = np.minimum(position, len(table.grid) - 1)
    low = np.floor(position).astype(np.int64)
    high = np.minimum(low + 1, len(table.grid) - 1)
    frac = position - low
    excess = (1 - frac) * table.excess[blocks, low] + frac * table.excess[blocks, high]
    return np.asarray((total - excess * scale).sum(axis=-1), dtype=np.float64)


def total_instance_hours(table: BlockTable, paths: Paths, n_weeks: int) -> np.ndarray:
    return np.asarray(
        (table.total[paths.blocks[..., :n_weeks]] * paths.scale[..., :n_weeks]).sum(axis=-1)
    )


def cvar_low(values: np.ndarray, tail: float) -> float:
    """Mean of the worst `tail` fraction (at least one value)."""
    ordered = np.sort(np.asarray(values, dtype=np.float64).ravel())
    count = max(1, math.ceil(tail * len(ordered)))
    return float(ordered[:count].mean())
