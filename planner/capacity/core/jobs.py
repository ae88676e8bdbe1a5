"""The jobs one pool serves, and how long each may wait for it (the waiting policies).

Times are float64 seconds since the Unix epoch. A job arrives when it was submitted: the
history's submit column (Slurm's Submit, or a mapped `submit`) when it has one, else its start
(the purchase mix's no-wait reading: a job was asked for when it started). It holds its GPUs
for its run, end minus start, whatever it waited in the cluster it came from.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import pandas as pd

POLICIES: tuple[str, ...] = ("none", "constant", "size_aware")
# Job-size classes by GPUs: (name, fewest, most); each point's waits are told per class.
JOB_CLASSES: tuple[tuple[str, int, float], ...] = (
    ("1 GPU", 1, 1), ("2-7 GPUs", 2, 7), ("8-63 GPUs", 8, 63), ("64+ GPUs", 64, math.inf))
DISCIPLINES: tuple[str, ...] = ("fifo", "backfill")


@dataclass(frozen=True)
class PoolJobs:
    """GPU jobs of one type in submit order (ties keep the history's order).

    submit_s          float64 seconds since epoch
    duration_s        float64 seconds, >= 0
    gpus              int64, >= 1 (jobs with 0 GPUs are left out)
    is_interruptible  bool, may run on spot when it bursts
    """

    gpu_type: str
    submit_s: np.ndarray
    duration_s: np.ndarray
    gpus: np.ndarray
    is_interruptible: np.ndarray

    def __post_init__(self) -> None:
        n = len(self.submit_s)
        for name in ("duration_s", "gpus", "is_interruptible"):
            if len(getattr(self, name)) != n:
                raise ValueError(f"{name}: {len(getattr(self, name))} values for {n} jobs")
        if n and bool((self.gpus < 1).any()):
            raise ValueError("gpus: every job needs at least 1 GPU")
        if n and bool((self.duration_s < 0).any()):
            raise ValueError("duration_s: a job has a negative duration")
        if n and bool((np.diff(self.submit_s) < 0).any()):
            raise ValueError("submit_s: jobs must be in submit order")

    @property
    def n_jobs(self) -> int:
        return len(self.submit_s)

    @property
    def gpu_seconds(self) -> np.ndarray:
        return np.asarray(self.gpus * self.duration_s, dtype=np.float64)

    @cached_property
    def size_classes(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Jobs grouped by size class once per history (the sweep's every point reuses it):
        (job order by class, where each class starts in it, GPU-seconds in that order)."""
        bounds = np.array([fewest for _, fewest, _ in JOB_CLASSES[1:]])
        index = np.searchsorted(bounds, self.gpus, side="right")  # the class of each job
        order = np.argsort(index, kind="stable")
        starts = np.searchsorted(index[order], np.arange(len(JOB_CLASSES) + 1))
        return order, starts, self.gpu_seconds[order]

    @cached_property
    def no_wait_hourly_gpus(self) -> np.ndarray:
        """hourly_gpus(self), once per history (a pass over every job: the history gate, the
        pool's savings and what it would cost all read it); read-only."""
        hourly = _hourly_gpus(self)
        hourly.flags.writeable = False
        return hourly


def pool_jobs_from_frame(jobs: pd.DataFrame, gpu_type: str) -> PoolJobs:
    """The jobs of `gpu_type` from a JobHistory frame (start/end epoch seconds, gpu_count,
    gpu_type, is_interruptible, optional submit_epoch_s); ValueError when the type has no GPU
    job."""
    rows = jobs[(jobs["gpu_type"].astype(str) == gpu_type) & (jobs["gpu_count"] > 0)]
    if rows.empty:
        raise ValueError(f"gpu_type: no job with GPUs of type {gpu_type!r}")
    start = rows["start_epoch_s"].to_numpy(dtype=np.float64)
    arrival = "submit_epoch_s" if "submit_epoch_s" in rows.columns else "start_epoch_s"
    submit = rows[arrival].to_numpy(dtype=np.float64)
    order = np.argsort(submit, kind="stable")
    duration = (rows["end_epoch_s"].to_numpy(dtype=np.float64) - start)[order]
    return PoolJobs(
        gpu_type=gpu_type,
        submit_s=submit[order],
        duration_s=duration,
        gpus=rows["gpu_count"].to_numpy(dtype=np.int64)[order],
        is_interruptible=rows["is_interruptible"].to_numpy(dtype=bool)[order],
    )


def wait_limits_s(jobs: PoolJobs, policy: str, max_wait_hours: float) -> np.ndarray:
    """Seconds each job may wait for the pool before it bursts (float64, inf = forever).

    none:       0 (a job bursts unless it starts the instant it arrives)
    constant:   T hours for every job
    size_aware: T x (job GPU-hours / mean GPU-hours of these jobs): the limit grows in
                proportion to the job's size (GPUs x duration), Starburst's waiting budget,
                scaled so the mean limit is T, the same total budget as `constant` with T.
    """
    if policy not in POLICIES:
        raise ValueError(f"policy: {policy!r} is not one of {', '.join(POLICIES)}")
    if policy == "none":
        return np.zeros(jobs.n_jobs)
    if not max_wait_hours >= 0:  # also refuses NaN
        raise ValueError(f"max_wait_hours: {max_wait_hours} is not a number of hours >= 0")
    limit_s = max_wait_hours * 3600.0
    if policy == "constant" or math.isinf(limit_s):
        return np.full(jobs.n_jobs, limit_s)
    size = jobs.gpu_seconds
    mean = float(size.mean()) if jobs.n_jobs else 0.0
    if mean <= 0:
        return np.full(jobs.n_jobs, limit_s)
    return limit_s * size / mean


def peak_concurrent_gpus(jobs: PoolJobs) -> int:
    """Most GPUs in use at once if every job starts when submitted; a job ending at t and one
    starting at t do not overlap (completions come first, as in the simulator)."""
    if jobs.n_jobs == 0:
        return 0
    times = np.concatenate([jobs.submit_s + jobs.duration_s, jobs.submit_s])
    deltas = np.concatenate([-jobs.gpus, jobs.gpus])
    # Ends (flag 0) sort before starts (flag 1) at the same instant; a zero-length job holds
    # its GPUs through the instant it starts (flag 2), as in the simulator.
    is_instant = jobs.duration_s == 0
    flags = np.concatenate([np.where(is_instant, 2.0, 0.0), np.ones(jobs.n_jobs)])
    order = np.lexsort((flags, times))
    return int(np.cumsum(deltas[order]).max())


def hourly_gpus(jobs: PoolJobs) -> np.ndarray:
    """Average GPUs in use in each whole hour from the first submit, if every job starts when
    submitted (the no-wait demand a commitment is judged on, as the purchase mix's);
    computed once per history, read-only."""
    return jobs.no_wait_hourly_gpus


def _hourly_gpus(jobs: PoolJobs) -> np.ndarray:
    if jobs.n_jobs == 0:
        return np.zeros(0)
    origin = float(jobs.submit_s[0])
    start = jobs.submit_s - origin
    end = start + jobs.duration_s
    n_hours = max(1, math.ceil(float(end.max()) / 3600.0))
    edges = np.arange(n_hours + 1, dtype=np.float64) * 3600.0
    # GPU-seconds used before t = sum_j g_j * clip(t - s_j, 0, d_j), a piecewise-linear curve
    # whose slope rises by g at each start and falls by g at each end.
    times = np.concatenate([start, end])
    slope = np.concatenate([jobs.gpus, -jobs.gpus]).astype(np.float64)
    order = np.argsort(times, kind="stable")
    times, slope = times[order], slope[order]
    cum_slope = np.concatenate([[0.0], np.cumsum(slope)])
    cum_moment = np.concatenate([[0.0], np.cumsum(slope * times)])
    seen = np.searchsorted(times, edges, side="right")
    used = edges * cum_slope[seen] - cum_moment[seen]
    return np.asarray(np.diff(used) / 3600.0, dtype=np.float64)
