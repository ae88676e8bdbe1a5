"""Hourly GPU demand from job or usage histories.

Definition: the demand of an hour is the average number of concurrent GPUs in that UTC hour,
i.e. GPU-seconds inside [hour, hour + 1h) / 3600. A job running part of an hour contributes
its fractional GPU-hours to that hour. Frames are indexed by `hour` (tz-aware UTC
DatetimeIndex, contiguous, hourly) with one float64 column per GPU type.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import cast

import numpy as np
import pandas as pd

from planner.core.cloud import SPOT_MAX_JOB_GPUS, SPOT_MAX_JOB_HOURS
from planner.core.limits import check_array_bytes
from planner.purchase_mix.core.upload.jobs import JobHistory, UsageHistory

SECONDS_PER_HOUR = 3600
# Ten years and a day of hours: the parser refuses longer histories, and the grid is checked
# before it is allocated so a bad date cannot build a grid of millions of hours.
MAX_GRID_HOURS = 10 * 8766 + 24
MAX_GRID_CELLS = 24_000_000  # (GPU types x 2) x hours, about 190 MB per float64 array


@dataclass(frozen=True)
class HourlyDemand:
    """Hourly average concurrent GPUs split into firm and interruptible demand.

    Both frames share the same hourly index and GPU-type columns. `interruptible_job_gpus`
    is the GPU-hour-weighted mean GPU count of interruptible jobs per type (sizes spot jobs).
    """

    firm_gpus: pd.DataFrame
    interruptible_gpus: pd.DataFrame
    interruptible_job_gpus: Mapping[str, float] = field(default_factory=dict)
    # GPU type -> {GPUs per job: GPU-hours} of the interruptible jobs that may run on spot;
    # interruption overhead is computed per job size (multi-node jobs are hit more often).
    interruptible_gpu_hours_by_job_gpus: Mapping[str, Mapping[int, float]] = field(
        default_factory=dict
    )
    # GPU type -> GPU-hours of interruptible jobs kept off spot (too large or too long).
    off_spot_gpu_hours: Mapping[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.firm_gpus.index.equals(self.interruptible_gpus.index):
            raise ValueError("firm and interruptible demand need the same hourly index")
        if list(self.firm_gpus.columns) != list(self.interruptible_gpus.columns):
            raise ValueError("firm and interruptible demand need the same GPU types")

    @classmethod
    def from_total(cls, total_gpus: pd.DataFrame) -> HourlyDemand:
        """All demand firm (usage series, or a caller-built frame)."""
        return cls(firm_gpus=total_gpus, interruptible_gpus=total_gpus * 0.0)

    @property
    def total_gpus(self) -> pd.DataFrame:
        return self.firm_gpus + self.interruptible_gpus

    @property
    def gpu_types(self) -> tuple[str, ...]:
        return tuple(str(name) for name in self.firm_gpus.columns)

    @property
    def n_hours(self) -> int:
        return len(self.firm_gpus)

    def window(self, first: int, stop: int) -> HourlyDemand:
        """Hours [first, stop) by position."""
        return HourlyDemand(
            firm_gpus=self.firm_gpus.iloc[first:stop],
            interruptible_gpus=self.interruptible_gpus.iloc[first:stop],
            interruptible_job_gpus=self.interruptible_job_gpus,
            interruptible_gpu_hours_by_job_gpus=self.interruptible_gpu_hours_by_job_gpus,
            off_spot_gpu_hours=self.off_spot_gpu_hours,
        )

    def last_days(self, days: int) -> HourlyDemand:
        return self.window(max(self.n_hours - days * 24, 0), self.n_hours)


BUCKET_SLICE_JOBS = 1_000_000  # jobs per pass: bounds the temporaries at 10M jobs


def bucket_gpu_seconds(
    start_s: np.ndarray, end_s: np.ndarray, gpus: np.ndarray, group: np.ndarray, n_groups: int
) -> tuple[int, np.ndarray]:
    """GPU-seconds per (group, hour) for intervals [start_s, end_s) holding `gpus` each.

    `gpus` and `group` may be any numeric dtype (int32 GPU counts, int8 codes): each slice is
    widened to float64 and int64 as it is used, so no full-length copy is made.
    Returns (first epoch hour, array of shape (n_groups, n_hours)). O(N + n_groups * n_hours):
    the partial first and last hour of each interval go through bincount, the whole hours in
    between through a difference array and a cumulative sum. Jobs are taken
    BUCKET_SLICE_JOBS at a time so temporaries stay small; the grid is checked first.
    """
    first_hour = int(start_s.min() // SECONDS_PER_HOUR)
    n_hours = int(-(-end_s.max() // SECONDS_PER_HOUR)) - first_hour
    n_hours = max(n_hours, 1)
    check_grid_size(n_hours, n_groups)
    width = n_hours + 1
    # partial, steps, their cumulative sum and the total: four grids at once
    check_array_bytes((n_groups, width), f"the hourly demand grid ({n_groups} series over "
                      f"{n_hours:,} hours)", "upload fewer GPU types or a shorter period",
                      copies=4)
    partial = np.zeros(n_groups * width)
    steps = np.zeros(n_groups * width)
    for low in range(0, len(start_s), BUCKET_SLICE_JOBS):
        part = slice(low, low + BUCKET_SLICE_JOBS)
        # GPU counts and groups may come narrow (int32, int8): widened a slice at a time
        _bucket_slice(start_s[part], end_s[part], np.asarray(gpus[part], dtype=np.float64),
                      np.asarray(group[part], dtype=np.int64), first_hour, width, partial, steps)
    full = np.cumsum(steps.reshape(n_groups, width), axis=1) * SECONDS_PER_HOUR
    total = partial.reshape(n_groups, width) + full
    return first_hour, total[:, :n_hours]


def _bucket_slice(
    start_s: np.ndarray,
    end_s: np.ndarray,
    gpus: np.ndarray,
    group: np.ndarray,
    first_hour: int,
    width: int,
    partial: np.ndarray,
    steps: np.ndarray,
) -> None:
    """Add one slice of jobs to the partial-hour sums and the whole-hour difference array."""
    size = len(partial)
    head_idx = start_s // SECONDS_PER_HOUR - first_hour
    tail_idx = end_s // SECONDS_PER_HOUR - first_hour
    head_end_s = np.minimum(end_s, (head_idx + first_hour + 1) * SECONDS_PER_HOUR)
    spans = tail_idx > head_idx
    g = group[spans] * width
    partial += np.bincount(group * width + head_idx, weights=gpus * (head_end_s - start_s),
                           minlength=size)
    partial += np.bincount(
        g + tail_idx[spans],
        weights=gpus[spans] * (end_s[spans] - (tail_idx[spans] + first_hour) * SECONDS_PER_HOUR),
        minlength=size,
    )
    steps += np.bincount(g + head_idx[spans] + 1, weights=gpus[spans], minlength=size)
    steps -= np.bincount(g + tail_idx[spans], weights=gpus[spans], minlength=size)


def check_grid_size(n_hours: int, n_groups: int) -> None:
    """Raise ValueError before allocating a demand grid over MAX_GRID_HOURS or MAX_GRID_CELLS."""
    if n_hours > MAX_GRID_HOURS:
        raise ValueError(
            f"the history spans {n_hours:,} hours; at most {MAX_GRID_HOURS:,} (ten years)"
        )
    if n_hours * max(n_groups, 1) > MAX_GRID_CELLS:
        raise ValueError(
            f"{n_groups // 2 or 1} GPU types over {n_hours:,} hours is more than "
            f"{MAX_GRID_CELLS:,} hourly cells; upload fewer GPU types or a shorter period"
        )


def _hour_index(first_hour: int, n_hours: int) -> pd.DatetimeIndex:
    seconds = (first_hour + np.arange(n_hours, dtype=np.int64)) * SECONDS_PER_HOUR
    index = pd.DatetimeIndex(seconds.astype("datetime64[s]")).tz_localize("UTC")
    return index.rename("hour")


def _frame(first_hour: int, values: np.ndarray, gpu_types: tuple[str, ...]) -> pd.DataFrame:
    columns = pd.Index(list(gpu_types), name="gpu_type", dtype="str")
    return pd.DataFrame(
        values.T / SECONDS_PER_HOUR, index=_hour_index(first_hour, values.shape[1]), columns=columns
    )


def _job_split(history: JobHistory) -> HourlyDemand:
    jobs = history.jobs
    types = history.gpu_types
    is_spot_able = spot_eligible(jobs)
    # int32, not int64: 40 MB instead of 80 MB per 10M jobs (bucket_gpu_seconds widens slices)
    group = jobs["gpu_type"].cat.codes.to_numpy().astype(np.int32)
    group *= 2
    group += is_spot_able
    first_hour, seconds = bucket_gpu_seconds(
        jobs["start_epoch_s"].to_numpy(), jobs["end_epoch_s"].to_numpy(),
        jobs["gpu_count"].to_numpy(), group, 2 * len(types))
    del group
    needed = ["start_epoch_s", "end_epoch_s", "gpu_count", "gpu_type", "is_interruptible"]
    eligible = jobs.loc[is_spot_able, needed]
    return HourlyDemand(
        firm_gpus=_frame(first_hour, seconds[0::2], types),
        interruptible_gpus=_frame(first_hour, seconds[1::2], types),
        interruptible_job_gpus=_interruptible_job_gpus(eligible, types),
        interruptible_gpu_hours_by_job_gpus=_by_job_gpus(eligible),
        off_spot_gpu_hours=_gpu_hours_by_type(
            jobs.loc[jobs["is_interruptible"].to_numpy() & ~is_spot_able, needed]
        ),
    )


def spot_eligible(jobs: pd.DataFrame) -> np.ndarray:
    """Interruptible jobs small and short enough for spot (planner.core.cloud limits)."""
    seconds = jobs["end_epoch_s"].to_numpy() - jobs["start_epoch_s"].to_numpy()
    hours = seconds / SECONDS_PER_HOUR
    del seconds
    return np.asarray(
        jobs["is_interruptible"].to_numpy()
        & (jobs["gpu_count"].to_numpy() <= SPOT_MAX_JOB_GPUS)
        & (hours <= SPOT_MAX_JOB_HOURS),
        dtype=bool,
    )


def _gpu_hours(jobs: pd.DataFrame) -> pd.Series:
    seconds = jobs["end_epoch_s"] - jobs["start_epoch_s"]
    return jobs["gpu_count"].astype(np.float64) * seconds / SECONDS_PER_HOUR


def _gpu_hours_by_type(jobs: pd.DataFrame) -> dict[str, float]:
    totals = _gpu_hours(jobs).groupby(jobs["gpu_type"], observed=True).sum()
    return {str(name): float(value) for name, value in totals.items() if value > 0}


def _by_job_gpus(jobs: pd.DataFrame) -> dict[str, dict[int, float]]:
    totals = _gpu_hours(jobs).groupby([jobs["gpu_type"], jobs["gpu_count"]], observed=True).sum()
    found: dict[str, dict[int, float]] = {}
    for key, value in totals.items():
        name, count = cast(tuple[object, int], key)
        if value > 0:
            found.setdefault(str(name), {})[int(count)] = float(value)
    return found


def _interruptible_job_gpus(jobs: pd.DataFrame, types: tuple[str, ...]) -> dict[str, float]:
    chosen = jobs[jobs["is_interruptible"]]
    gpu_hours = chosen["gpu_count"] * (chosen["end_epoch_s"] - chosen["start_epoch_s"])
    weighted = (gpu_hours * chosen["gpu_count"]).groupby(chosen["gpu_type"], observed=False).sum()
    totals = gpu_hours.groupby(chosen["gpu_type"], observed=False).sum()
    return {
        str(name): float(weighted[name] / totals[name])
        for name in types
        if name in totals.index and totals[name] > 0
    }


def _usage_split(history: UsageHistory) -> HourlyDemand:
    samples = history.samples.sort_values(["gpu_type", "timestamp_epoch_s"], kind="stable")
    types = history.gpu_types
    codes = samples["gpu_type"].cat.codes.to_numpy().astype(np.int64)
    start_s = samples["timestamp_epoch_s"].to_numpy()
    end_s = _usage_ends(start_s, codes)
    gpus = samples["gpus_in_use"].to_numpy().astype(np.float64)
    first_hour, seconds = bucket_gpu_seconds(start_s, end_s, gpus, codes, len(types))
    return HourlyDemand.from_total(_frame(first_hour, seconds, types))


def _usage_ends(start_s: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """Each sample lasts until the next one of its type; the last for the type's median step."""
    end_s = np.empty_like(start_s)
    end_s[:-1] = start_s[1:]
    is_last = np.append(codes[1:] != codes[:-1], True)
    steps = pd.Series(end_s[~is_last] - start_s[~is_last]).groupby(codes[~is_last]).median()
    last_step = pd.Series(codes[is_last]).map(steps).fillna(SECONDS_PER_HOUR).to_numpy()
    end_s[is_last] = start_s[is_last] + last_step.astype(np.int64)
    return end_s


def split_hourly_demand(history: JobHistory | UsageHistory) -> HourlyDemand:
    """Hourly average concurrent GPUs per type, split into firm and interruptible."""
    if isinstance(history, JobHistory):
        return _job_split(history)
    return _usage_split(history)


def hourly_demand(history: JobHistory | UsageHistory) -> pd.DataFrame:
    """Hourly average concurrent GPUs per GPU type (firm + interruptible); see module doc."""
    return split_hourly_demand(history).total_gpus
