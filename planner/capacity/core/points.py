"""One point of the frontier: a pool size, a discipline and a waiting policy, replayed, with
its GPU-hours, waits, utilisation and dollars."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from planner.capacity.core.jobs import JOB_CLASSES, PoolJobs, wait_limits_s
from planner.capacity.core.pool import PoolOutcome, simulate_pool
from planner.capacity.core.prices import CapacityPrices


@dataclass(frozen=True)
class GridPoint:
    """What one simulation replays. `max_wait_hours` is 0 for policy none (inf allowed)."""

    pool_gpus: int
    discipline: str
    policy: str
    max_wait_hours: float


@dataclass(frozen=True)
class PointFigures:
    """A point's figures. Waits count every GPU job (pool: submit to start; burst: submit to
    burst), in hours; percentiles are nearest-rank. Utilisation is pool GPU-hours / (N x the
    span from the first submit to the last end), None for N = 0. The pool is billed for N x
    that span; burst GPU-hours at on-demand or spot. `mean_jct_increase_pct` is the mean wait
    over the mean duration (job completion time with waiting against without)."""

    pool_gpus: int
    discipline: str
    policy: str
    max_wait_hours: float
    pool_gpu_hours: float
    burst_gpu_hours: float
    burst_on_demand_gpu_hours: float
    burst_spot_gpu_hours: float
    jobs: int
    jobs_burst: int
    mean_wait_hours: float
    p50_wait_hours: float
    p95_wait_hours: float
    p99_wait_hours: float
    max_wait_seen_hours: float
    mean_jct_increase_pct: float
    utilization: float | None
    span_hours: float
    pool_usd: float
    burst_on_demand_usd: float
    burst_spot_usd: float
    burst_usd: float
    total_usd: float
    # Per job-size class (JOB_CLASSES): jobs, P95, P99 and max wait and the GPU-hour weighted
    # mean wait, in hours; the worst class's P95 is what the recommendation holds to target.
    waits_by_class: dict[str, dict[str, float]] = field(default_factory=dict)
    worst_class_p95_wait_hours: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe: an infinite max_wait_hours becomes the string "inf"."""
        data = asdict(self)
        if math.isinf(self.max_wait_hours):
            data["max_wait_hours"] = "inf"
        return data


def nearest_rank(sorted_values: np.ndarray, pct: float) -> float:
    """The nearest-rank percentile of ascending values: the ceil(pct/100 x n)-th value."""
    n = len(sorted_values)
    if n == 0:
        return 0.0
    rank = max(1, math.ceil(pct / 100.0 * n))
    return float(sorted_values[rank - 1])


def _wait_percentiles(wait_s: np.ndarray) -> tuple[float, float, float]:
    n = len(wait_s)
    ranks = [max(1, math.ceil(p / 100.0 * n)) - 1 for p in (50, 95, 99)]
    found = np.partition(wait_s, ranks)
    p50, p95, p99 = (float(found[r]) / 3600.0 for r in ranks)
    return p50, p95, p99


def point_figures(
    jobs: PoolJobs, outcome: PoolOutcome, point: GridPoint, prices: CapacityPrices
) -> PointFigures:
    """The figures and dollars of one replayed point."""
    wait_s = outcome.begin_s - jobs.submit_s
    gpu_hours = jobs.gpu_seconds / 3600.0
    burst = outcome.is_burst
    is_spot = burst & jobs.is_interruptible if prices.spot_usd_per_gpu_hour else burst & False
    pool_gpu_hours = float(gpu_hours[~burst].sum())
    spot_gpu_hours = float(gpu_hours[is_spot].sum())
    burst_gpu_hours = float(gpu_hours[burst].sum())
    span_hours = float((outcome.begin_s + jobs.duration_s).max() - jobs.submit_s[0]) / 3600.0
    n = point.pool_gpus
    utilization = pool_gpu_hours / (n * span_hours) if n and span_hours > 0 else None
    pool_usd = n * span_hours * prices.pool_usd_per_gpu_hour
    on_demand_usd = (burst_gpu_hours - spot_gpu_hours) * prices.on_demand_usd_per_gpu_hour
    spot_usd = spot_gpu_hours * (prices.spot_usd_per_gpu_hour or 0.0)
    p50, p95, p99 = _wait_percentiles(wait_s)
    by_class = waits_by_class(jobs, wait_s)
    mean_duration_s = float(jobs.duration_s.mean())
    return PointFigures(
        pool_gpus=n, discipline=point.discipline, policy=point.policy,
        max_wait_hours=point.max_wait_hours,
        pool_gpu_hours=pool_gpu_hours, burst_gpu_hours=burst_gpu_hours,
        burst_on_demand_gpu_hours=burst_gpu_hours - spot_gpu_hours,
        burst_spot_gpu_hours=spot_gpu_hours, jobs=jobs.n_jobs, jobs_burst=int(burst.sum()),
        mean_wait_hours=float(wait_s.mean()) / 3600.0, p50_wait_hours=p50,
        p95_wait_hours=p95, p99_wait_hours=p99, max_wait_seen_hours=float(wait_s.max()) / 3600,
        mean_jct_increase_pct=100.0 * float(wait_s.mean()) / mean_duration_s
        if mean_duration_s > 0 else 0.0,
        utilization=utilization, span_hours=span_hours, pool_usd=pool_usd,
        burst_on_demand_usd=on_demand_usd, burst_spot_usd=spot_usd,
        burst_usd=on_demand_usd + spot_usd, total_usd=pool_usd + on_demand_usd + spot_usd,
        waits_by_class=by_class,
        worst_class_p95_wait_hours=max((c["p95_wait_hours"] for c in by_class.values()),
                                       default=0.0),
    )


def waits_by_class(jobs: PoolJobs, wait_s: np.ndarray) -> dict[str, dict[str, float]]:
    """Waits per job-size class that has jobs: `jobs`, nearest-rank `p95_wait_hours` and
    `p99_wait_hours`, `max_wait_hours` and `gpu_hour_weighted_mean_wait_hours` (each job's
    wait weighted by its GPU-hours: the share of the work that waits)."""
    order, starts, weights = jobs.size_classes
    waits = wait_s[order]
    found: dict[str, dict[str, float]] = {}
    for k, (name, _, _) in enumerate(JOB_CLASSES):
        low, high = int(starts[k]), int(starts[k + 1])
        if high <= low:
            continue
        part, weight = waits[low:high], weights[low:high]
        total = float(weight.sum())
        mean = float(np.einsum("i,i->", part, weight)) / total if total > 0 \
            else float(part.mean())
        _, p95, p99 = _wait_percentiles(part)
        found[name] = {"jobs": float(high - low), "p95_wait_hours": p95, "p99_wait_hours": p99,
                       "max_wait_hours": float(part.max()) / 3600.0,
                       "gpu_hour_weighted_mean_wait_hours": mean / 3600.0}
    return found


def replay_point(jobs: PoolJobs, point: GridPoint) -> PoolOutcome:
    """Simulate one grid point."""
    limits = wait_limits_s(jobs, point.policy, point.max_wait_hours)
    return simulate_pool(jobs, pool_gpus=point.pool_gpus, discipline=point.discipline,
                         wait_limits_s=limits)


def queue_length_series(
    jobs: PoolJobs, outcome: PoolOutcome, *, max_points: int = 2000
) -> dict[str, list[float]]:
    """Jobs and GPUs waiting over time (step function sampled at most `max_points` times,
    each sample the most seen in its bin): {"hours": since the first submit, "jobs", "gpus"}."""
    waited = outcome.begin_s > jobs.submit_s
    start, stop = jobs.submit_s[waited], outcome.begin_s[waited]
    origin = float(jobs.submit_s[0])
    end = float((outcome.begin_s + jobs.duration_s).max())
    edges = np.linspace(origin, max(end, origin + 1.0), max_points + 1)
    if not waited.any():
        zeros = [0.0] * max_points
        return {"hours": list((edges[:-1] - origin) / 3600.0), "jobs": zeros, "gpus": zeros}
    times = np.concatenate([start, stop])
    order = np.lexsort((np.concatenate([np.ones(len(start)), np.zeros(len(stop))]), times))
    count = np.cumsum(np.concatenate([np.ones(len(start)), -np.ones(len(stop))])[order])
    gpus = jobs.gpus[waited].astype(np.float64)
    held = np.cumsum(np.concatenate([gpus, -gpus])[order])
    sorted_times = times[order]
    bins = np.clip(np.searchsorted(edges, sorted_times, side="right") - 1, 0, max_points - 1)
    jobs_max = np.zeros(max_points)
    gpus_max = np.zeros(max_points)
    np.maximum.at(jobs_max, bins, count)
    np.maximum.at(gpus_max, bins, held)
    # A bin with no event keeps the level the previous event left.
    level_jobs = _carry(jobs_max, bins, count)
    level_gpus = _carry(gpus_max, bins, held)
    return {"hours": [float(h) for h in (edges[:-1] - origin) / 3600.0],
            "jobs": [float(v) for v in level_jobs], "gpus": [float(v) for v in level_gpus]}


def _carry(peaks: np.ndarray, bins: np.ndarray, levels: np.ndarray) -> np.ndarray:
    last_in_bin = np.full(len(peaks), np.nan)
    last_in_bin[bins] = levels  # the last assignment per bin wins: the bin's closing level
    closing = np.concatenate([[0.0], last_in_bin[:-1]])
    carried = _forward_fill(closing)
    return np.asarray(np.maximum(peaks, carried), dtype=np.float64)


def _forward_fill(values: np.ndarray) -> np.ndarray:
    mask = np.isnan(values)
    index = np.where(~mask, np.arange(len(values)), 0)
    np.maximum.accumulate(index, out=index)
    filled = values[index]
    return np.asarray(np.nan_to_num(filled), dtype=np.float64)
