"""The cost-versus-wait frontier: a grid of pool sizes x disciplines x waiting policies, split
into parts for several workers, swept, and the cheapest point that meets a wait target."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from planner.capacity.core.jobs import DISCIPLINES, POLICIES, PoolJobs, peak_concurrent_gpus
from planner.capacity.core.points import (
    GridPoint,
    PointFigures,
    point_figures,
    queue_length_series,
    replay_point,
)
from planner.capacity.core.prices import CapacityPrices
from planner.core.limits import MAX_CAPACITY_JOB_POINTS, MAX_CAPACITY_POINTS, MAX_GPUS_IN_USE

DEFAULT_POOL_POINTS = 30


def pool_sizes(jobs: PoolJobs, n_points: int = DEFAULT_POOL_POINTS,
               include: Sequence[int] = (), step: int = 1) -> tuple[int, ...]:
    """About `n_points` pool sizes, each a whole number of `step` GPUs (the GPUs of one
    instance: what is priced is what can be bought): the sizes in `include` (e.g. the no-wait
    commitments, so the sweep holds them) and the rest evenly from 0 to the no-wait peak
    (rounded up to whole instances)."""
    step = max(1, int(step))
    peak = -(-peak_concurrent_gpus(jobs) // step)  # instances
    extra = sorted({int(n) for n in include if n >= 0 and n % step == 0})
    even = np.round(np.linspace(0, peak, max(2, n_points - len(extra)))).astype(int) * step
    return tuple(int(n) for n in np.unique(np.concatenate([even, extra]).astype(int)))


def sweep_grid(
    sizes: Sequence[int], disciplines: Sequence[str], policies: Sequence[str],
    max_wait_hours: Sequence[float],
) -> tuple[GridPoint, ...]:
    """Every size x discipline x policy (x T for constant and size_aware; none has T = 0),
    ordered by discipline, policy, T, then size (one frontier curve after another)."""
    if not sizes:
        raise ValueError("pool_gpus: give at least one pool size")
    if any(n < 0 for n in sizes):
        raise ValueError("pool_gpus: pool sizes must be >= 0")
    for name, given, allowed in (("discipline", disciplines, DISCIPLINES),
                                 ("policy", policies, POLICIES)):
        bad = [value for value in given if value not in allowed]
        if bad or not given:
            raise ValueError(f"{name}: choose from {', '.join(allowed)}")
    if any(not t >= 0 for t in max_wait_hours):
        raise ValueError("max_wait_hours: every limit must be a number of hours >= 0 (or inf)")
    if any(p != "none" for p in policies) and not max_wait_hours:
        raise ValueError("max_wait_hours: give at least one limit for constant or size_aware")
    curves = [(d, p, 0.0 if p == "none" else t) for d in dict.fromkeys(disciplines)
              for p in dict.fromkeys(policies)
              for t in (dict.fromkeys(max_wait_hours) if p != "none" else (0.0,))]
    sizes_sorted = sorted(set(int(n) for n in sizes))
    check_points(len(sizes_sorted) * len(dict.fromkeys(curves)))
    return tuple(GridPoint(n, d, p, t) for d, p, t in dict.fromkeys(curves) for n in sizes_sorted)


def check_points(n_points: int, n_jobs: int | None = None) -> None:
    """ValueError naming pool_gpus when a sweep has more than MAX_CAPACITY_POINTS points, or
    (given its jobs) more than MAX_CAPACITY_JOB_POINTS points x jobs to replay."""
    if n_points > MAX_CAPACITY_POINTS:
        raise ValueError(
            f"pool_gpus: the sweep has {n_points:,} points (pool sizes x disciplines x policies "
            f"x wait limits); at most {MAX_CAPACITY_POINTS:,}: give fewer pool sizes or limits")
    if n_jobs is not None and n_points * n_jobs > MAX_CAPACITY_JOB_POINTS:
        raise ValueError(
            f"pool_gpus: {n_points:,} points x {n_jobs:,} jobs is {n_points * n_jobs:,} job "
            f"replays; at most {MAX_CAPACITY_JOB_POINTS:,} (about two CPU-minutes): give "
            f"at most {MAX_CAPACITY_JOB_POINTS // max(n_jobs, 1):,} points, or a shorter "
            "history")


def grid_parts(n_points: int, n_parts: int) -> list[tuple[int, int]]:
    """[start, stop) index ranges of about equal size covering 0..n_points."""
    n_parts = max(1, min(n_parts, n_points))
    bounds = np.linspace(0, n_points, n_parts + 1).round().astype(int)
    return [(int(a), int(b)) for a, b in zip(bounds[:-1], bounds[1:], strict=True) if b > a]


def sweep_points(
    jobs: PoolJobs, points: Sequence[GridPoint], prices: CapacityPrices, *,
    threads: int = 1, report: Callable[[int, int], None] = lambda done, total: None,
) -> list[PointFigures]:
    """Replay each point, on `threads` threads (the compiled loop releases the GIL);
    `report(done, total)` after each, from the calling thread. Results in grid order."""

    def one(point: GridPoint) -> PointFigures:
        return point_figures(jobs, replay_point(jobs, point), point, prices)

    if threads <= 1:
        found = []
        for index, point in enumerate(points):
            found.append(one(point))
            report(index + 1, len(points))
        return found
    with ThreadPoolExecutor(max_workers=threads) as pool:
        futures = [pool.submit(one, point) for point in points]
        for index, future in enumerate(futures):
            future.result()
            report(index + 1, len(points))
        return [future.result() for future in futures]


def _worst_p95(point: PointFigures) -> float:
    """The P95 wait the target holds: every job's, and every job-size class's."""
    return max(point.p95_wait_hours, point.worst_class_p95_wait_hours)


def recommend_index(points: Sequence[PointFigures], target_p95_wait_hours: float, *,
                    is_commitment_allowed: bool = True) -> int:
    """The cheapest point whose P95 wait meets the target in every job-size class (1, 2-7,
    8-63, 64+ GPUs) as well as over all jobs (ties: shorter P95, then the smaller pool);
    when none meets it (no pool of 0 swept), the point with the shortest worst P95.
    When the buying rule allows no commitment, only pools of 0 GPUs (everything in the
    cloud) may be recommended."""
    if not target_p95_wait_hours >= 0:
        raise ValueError("target_p95_wait_hours: must be a number of hours >= 0")
    if not points:
        raise ValueError("pool_gpus: nothing was swept")
    buyable = [i for i, p in enumerate(points) if is_commitment_allowed or p.pool_gpus == 0]
    if not buyable:
        raise ValueError("pool_gpus: include 0 (nothing may be committed on this history)")
    meeting = [i for i in buyable if _worst_p95(points[i]) <= target_p95_wait_hours]
    if not meeting:
        return min(buyable, key=lambda i: (_worst_p95(points[i]), points[i].total_usd))
    return min(meeting, key=lambda i: (round(points[i].total_usd, 6), points[i].p95_wait_hours,
                                       points[i].pool_gpus))


@dataclass(frozen=True)
class Comparison:
    """What the recommended point gives up and gains against a reference point."""

    name: str
    reference: PointFigures
    saved_usd: float
    saved_pct: float | None
    added_p95_wait_hours: float
    added_mean_wait_hours: float

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "reference": self.reference.to_dict(),
                "saved_usd": self.saved_usd, "saved_pct": self.saved_pct,
                "added_p95_wait_hours": self.added_p95_wait_hours,
                "added_mean_wait_hours": self.added_mean_wait_hours}


def compare(name: str, chosen: PointFigures, reference: PointFigures) -> Comparison:
    saved = reference.total_usd - chosen.total_usd
    pct = 100.0 * saved / reference.total_usd if reference.total_usd > 0 else None
    return Comparison(name, reference, saved, pct,
                      chosen.p95_wait_hours - reference.p95_wait_hours,
                      chosen.mean_wait_hours - reference.mean_wait_hours)


@dataclass(frozen=True)
class NoWaitReference:
    """A no-wait commitment to compare with (the purchase mix's), priced as it is bought:
    `pool_usd_per_hour` is what all its GPUs cost per hour (effective: upfront amortised over
    the term), billed every hour of the span like a swept pool. None: at the sweep's pool
    price."""

    name: str
    pool_gpus: int
    pool_usd_per_hour: float | None = None

    def __post_init__(self) -> None:
        if self.pool_gpus < 0:
            raise ValueError(f"pool_gpus: {self.name} has {self.pool_gpus} GPUs (must be >= 0)")
        if self.pool_usd_per_hour is not None and not self.pool_usd_per_hour >= 0:
            raise ValueError(f"pool_usd_per_hour: {self.name} must cost >= 0 USD per hour")

    def prices(self, sweep: CapacityPrices) -> CapacityPrices:
        """The sweep's burst prices with this commitment's own pool price per GPU-hour."""
        if self.pool_usd_per_hour is None or self.pool_gpus == 0:
            return sweep
        return replace(sweep, pool_usd_per_gpu_hour=self.pool_usd_per_hour / self.pool_gpus)


@dataclass(frozen=True)
class CapacityPlan:
    """The swept points, the recommended one, and what it gives up against buying everything
    on demand (pool 0) and against each no-wait commitment (`no_wait_references`, replayed
    with policy none at their own pool price and the sweep's burst prices), plus the queue
    length over time at the recommended point."""

    gpu_type: str
    peak_gpus: int
    points: tuple[PointFigures, ...]
    recommended_index: int
    target_p95_wait_hours: float
    against: tuple[Comparison, ...]
    queue: dict[str, list[float]] = field(default_factory=dict)

    @property
    def recommended(self) -> PointFigures:
        return self.points[self.recommended_index]

    @property
    def is_target_met(self) -> bool:
        return _worst_p95(self.recommended) <= self.target_p95_wait_hours

    def to_dict(self) -> dict[str, Any]:
        return {
            "gpu_type": self.gpu_type, "peak_gpus": self.peak_gpus,
            "target_p95_wait_hours": self.target_p95_wait_hours,
            "points": [p.to_dict() for p in self.points],
            "recommended_index": self.recommended_index,
            "recommended": self.recommended.to_dict(),
            "is_target_met": self.is_target_met,
            "against": [c.to_dict() for c in self.against],
            "queue": self.queue,
        }


def plan_from_points(
    jobs: PoolJobs, points: Sequence[PointFigures], prices: CapacityPrices, *,
    target_p95_wait_hours: float, no_wait_references: Sequence[NoWaitReference],
    is_commitment_allowed: bool = True,
) -> CapacityPlan:
    """Recommend among swept points and compare; replays the references and the recommended
    point once more (its queue over time). Swept points are priced at `prices`; each
    reference at its own pool price (bursts at `prices`, so the comparison is like for
    like on everything but how the pool is bought)."""
    index = recommend_index(points, target_p95_wait_hours,
                            is_commitment_allowed=is_commitment_allowed)
    chosen = points[index]
    against = [compare("all on demand", chosen, _figures(jobs, GridPoint(0, "fifo", "none", 0.0),
                                                        prices))]
    for ref in no_wait_references:
        reference = GridPoint(ref.pool_gpus, chosen.discipline, "none", 0.0)
        against.append(compare(ref.name, chosen, _figures(jobs, reference, ref.prices(prices))))
    point = GridPoint(chosen.pool_gpus, chosen.discipline, chosen.policy, chosen.max_wait_hours)
    queue = queue_length_series(jobs, replay_point(jobs, point))
    return CapacityPlan(jobs.gpu_type, peak_concurrent_gpus(jobs), tuple(points), index,
                        target_p95_wait_hours, tuple(against), queue)


def _figures(jobs: PoolJobs, point: GridPoint, prices: CapacityPrices) -> PointFigures:
    return point_figures(jobs, replay_point(jobs, point), point, prices)


# The longest finite wait limit or target (about 11 years; beyond it, "inf" says no limit).
MAX_HOURS = 100_000.0


def parse_hours_list(text: str, name: str = "max_wait_hours") -> tuple[float, ...]:
    """"1,4,inf" -> (1.0, 4.0, inf); ValueError naming the field otherwise."""
    values = []
    for item in filter(None, (part.strip() for part in str(text).split(","))):
        try:
            value = float(item)
        except ValueError:
            raise ValueError(f"{name}: {item!r} is not a number of hours (or inf)") from None
        if math.isnan(value) or value < 0:
            raise ValueError(f"{name}: {item!r} must be >= 0 hours")
        if MAX_HOURS < value < math.inf:
            raise ValueError(f"{name}: {item!r} must be at most {MAX_HOURS:,.0f} hours (or inf)")
        values.append(value)
    return tuple(values)


def parse_pool_sizes(text: str) -> tuple[int, ...]:
    """"0,8,16" -> (0, 8, 16); ValueError naming the field otherwise."""
    values = []
    for item in filter(None, (part.strip() for part in str(text).split(","))):
        if not item.isdigit() or int(item) > MAX_GPUS_IN_USE:
            raise ValueError(f"pool_gpus: {item!r} is not a whole number of GPUs from 0 to "
                             f"{MAX_GPUS_IN_USE:,}")
        values.append(int(item))
    return tuple(values)


def figures_from_dict(data: dict[str, Any]) -> PointFigures:
    """The PointFigures that `to_dict` gave (parts stored as JSON)."""
    values = dict(data)
    values["max_wait_hours"] = float(values["max_wait_hours"])
    return PointFigures(**values)
