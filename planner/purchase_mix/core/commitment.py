"""Exact commitment sizing by replaying hourly demand.

Demand is in instances per hour (GPUs / gpus_per_instance, fractional). A commitment of
c instances at r USD/instance-hour costs c*r every hour; demand above the committed
capacity runs on demand at p USD/instance-hour (fractional instances allowed):
    cost(c) = sum_h [ c*r + p * max(0, x_h - c) ].
With several terms (e.g. 3-year and 1-year) stacked, committed capacity is shared, so for a
total level L the cheapest split fills the cheapest term first (up to its cap). Every
integer total L in [0, ceil(max x)] is evaluated exactly with sorted demand and prefix
sums: O(H log H + L_max log H). Without caps the whole commitment lands in the cheapest
term; a cap on it (e.g. the sustained baseline for 3 years) makes the next term the layer
above.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import cast

import numpy as np

from planner.core.limits import check_array_bytes


@dataclass(frozen=True)
class TermRate:
    """One commitment option as the solver sees it (USD per instance-hour, optional cap)."""

    usd_per_hour: float
    max_instances: int | None = None


@dataclass(frozen=True)
class CommitmentSolution:
    levels: tuple[int, ...]  # instances per term, in the order the terms were given
    cost_usd: float  # replayed cost over the hours, commitment + on demand


def on_demand_excess(demand_instances: np.ndarray, levels: np.ndarray) -> np.ndarray:
    """sum_h max(0, x_h - L) for every level L (instance-hours above the commitment)."""
    ordered = np.sort(np.asarray(demand_instances, dtype=np.float64))
    suffix = np.concatenate([np.cumsum(ordered[::-1])[::-1], [0.0]])
    above = np.searchsorted(ordered, levels, side="right")
    return np.asarray(suffix[above] - levels * (len(ordered) - above), dtype=np.float64)


def replay_cost_usd(
    demand_instances: np.ndarray,
    levels: Sequence[int],
    terms: Sequence[TermRate],
    on_demand_usd_per_hour: float,
) -> float:
    """Replayed cost of fixed commitment levels over the hours of `demand_instances`."""
    n_hours = len(demand_instances)
    committed = sum(level * term.usd_per_hour for level, term in zip(levels, terms, strict=True))
    excess = on_demand_excess(demand_instances, np.array([float(sum(levels))]))[0]
    return float(n_hours * committed + on_demand_usd_per_hour * excess)


def _split_levels(totals: np.ndarray, caps: np.ndarray) -> np.ndarray:
    """Fill terms (already sorted cheapest first) up to their caps: shape (n_terms, n_levels)."""
    floors = np.concatenate([[0.0], np.cumsum(caps)[:-1]])
    return cast(np.ndarray, np.clip(totals[None, :] - floors[:, None], 0.0, caps[:, None]))


def _validate(terms: Sequence[TermRate], on_demand_usd_per_hour: float) -> None:
    if on_demand_usd_per_hour <= 0:
        raise ValueError("on-demand rate must be > 0")
    for term in terms:
        if term.usd_per_hour <= 0:
            raise ValueError("commitment rates must be > 0")
        if term.max_instances is not None and term.max_instances < 0:
            raise ValueError("max_instances must be >= 0")


def solve_commitment(
    demand_instances: np.ndarray, terms: Sequence[TermRate], on_demand_usd_per_hour: float
) -> CommitmentSolution:
    """Cost-minimizing whole-instance levels per term; ties go to the smaller commitment."""
    _validate(terms, on_demand_usd_per_hour)
    demand = np.asarray(demand_instances, dtype=np.float64)
    if len(demand) == 0:
        raise ValueError("no demand hours")
    if not terms:
        return CommitmentSolution((), float(on_demand_usd_per_hour * demand.sum()))
    order = np.argsort([term.usd_per_hour for term in terms], kind="stable")
    peak = float(np.ceil(demand.max()))
    caps = np.array(
        [peak if terms[i].max_instances is None else terms[i].max_instances for i in order],
        dtype=np.float64,
    )
    n_levels = int(min(peak, caps.sum())) + 1
    # The level grid, its split per term and their temporaries (checked before allocation).
    check_array_bytes((len(terms) + 3, n_levels), "sizing commitments over every level "
                      f"up to the peak of {peak:,.0f} instances",
                      "check the GPU counts in the history (the peak sets the levels tried)")
    totals = np.arange(0.0, float(n_levels))
    split = _split_levels(totals, caps)
    rates = np.array([terms[i].usd_per_hour for i in order])
    cost = len(demand) * (rates @ split) + on_demand_usd_per_hour * on_demand_excess(demand, totals)
    best = int(np.argmin(cost))
    levels = np.zeros(len(terms), dtype=np.int64)
    levels[order] = np.rint(split[:, best]).astype(np.int64)
    return CommitmentSolution(tuple(int(level) for level in levels), float(cost[best]))
