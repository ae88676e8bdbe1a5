"""Demand analysis: utilization statistics, job durations, interruptible share, teams, trend.

Duration fit: log-normal by maximum likelihood on job durations in hours (mu, sigma of
ln hours), quality = Kolmogorov-Smirnov statistic against the fitted CDF (scipy.special).
Trend: least-squares line through daily mean demand (average concurrent GPUs per UTC day);
projection continues the line, or compounds a user growth rate per year from the fitted
level on the last day.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
import pandas as pd
from scipy.special import ndtr

from planner.core.serialize import json_safe
from planner.purchase_mix.core.demand import HourlyDemand, split_hourly_demand
from planner.purchase_mix.core.upload.jobs import JobHistory, UsageHistory

TOTAL = "total"


@dataclass(frozen=True)
class DemandStats:
    """Hourly average concurrent GPUs: mean, P50, P90, peak, peak/mean; GPU-hours."""

    mean_gpus: float
    p50_gpus: float
    p90_gpus: float
    peak_gpus: float
    peak_to_mean: float | None
    gpu_hours: float


@dataclass(frozen=True)
class DurationFit:
    n_jobs: int
    mu_log_hours: float
    sigma_log_hours: float
    ks_statistic: float
    median_hours: float
    p90_hours: float
    mean_hours: float


@dataclass(frozen=True)
class DemandTrend:
    slope_gpus_per_day: float
    intercept_gpus: float  # fitted level on the first day
    level_gpus: float  # fitted level on the last day
    fitted_growth_per_year: float | None  # slope * 365 / mean daily demand
    growth_per_year: float | None  # compounding rate used; None = the fitted line continues
    daily_gpus: pd.Series  # observed daily mean, indexed by UTC day
    projected_daily_gpus: pd.Series


@dataclass(frozen=True)
class DemandAnalysis:
    demand: HourlyDemand
    stats: Mapping[str, DemandStats]  # per GPU type and "total"
    durations: DurationFit | None  # None for usage histories or < 2 positive durations
    interruptible_share: float  # fraction of GPU-hours
    gpu_hours_by_team: Mapping[str, float]  # "(none)" for jobs without a team
    trend: DemandTrend

    def to_dict(self) -> dict[str, Any]:
        result: dict[str, Any] = json_safe(self)
        return result


def demand_stats(gpus: np.ndarray) -> DemandStats:
    mean = float(gpus.mean())
    peak = float(gpus.max())
    return DemandStats(
        mean,
        float(np.percentile(gpus, 50)),
        float(np.percentile(gpus, 90)),
        peak,
        peak / mean if mean > 0 else None,
        float(gpus.sum()),
    )


KS_BLOCK = 1 << 20  # values per block of the Kolmogorov-Smirnov sweep: bounds its temporaries


def fit_lognormal_hours(duration_hours: np.ndarray) -> DurationFit | None:
    """Log-normal fit of the positive durations (hours). Works in place on its own copies:
    at 10M jobs the sorted durations, their logs and the fitted CDF are the only full-length
    arrays held at once."""
    positive = duration_hours[duration_hours > 0]
    positive.sort()
    if len(positive) < 2:
        return None
    logs = np.log(positive)
    mu, sigma = float(logs.mean()), float(logs.std())
    n = len(positive)
    if sigma > 0:
        cdf = logs - mu
        cdf /= sigma
        ndtr(cdf, out=cdf)
    else:
        cdf = (logs >= mu).astype(float)
    del logs
    ks = _ks_statistic(cdf)
    del cdf
    return DurationFit(
        n,
        mu,
        sigma,
        ks,
        float(np.median(positive)),
        float(np.percentile(positive, 90)),
        float(positive.mean()),
    )


def _ks_statistic(cdf: np.ndarray) -> float:
    """max(i/n - cdf[i-1], cdf[i] - i/n) over the sorted sample's fitted CDF, block by block
    (the same floats as the whole-array expression, without three arrays of n floats)."""
    n = len(cdf)
    above, below = [], []
    for low in range(0, n, KS_BLOCK):
        part = cdf[low:low + KS_BLOCK]
        above.append((np.arange(low + 1, low + len(part) + 1) / n - part).max())
        below.append((part - np.arange(low, low + len(part)) / n).max())
    return max(float(np.max(above)), float(np.max(below)))


def _team_gpu_hours(jobs: pd.DataFrame) -> dict[str, float]:
    gpu_seconds = jobs["end_epoch_s"].to_numpy() - jobs["start_epoch_s"].to_numpy()
    gpu_seconds *= jobs["gpu_count"].to_numpy()  # in place: one int64 array, not three
    gpu_hours = pd.Series(gpu_seconds / 3600.0, index=jobs.index)
    del gpu_seconds
    # Group on the category codes (no string column per job): "(none)" for jobs without a team.
    totals = gpu_hours.groupby(jobs["team"], observed=True, dropna=False).sum()
    totals = totals.sort_values(ascending=False)
    return {"(none)" if pd.isna(cast(Any, name)) else str(name): float(value)
            for name, value in totals.items()}


def fit_trend(
    total_gpus: pd.Series, *, growth_per_year: float | None, horizon_days: int
) -> DemandTrend:
    daily = total_gpus.groupby(cast(pd.DatetimeIndex, total_gpus.index).floor("D")).mean()
    days = np.arange(len(daily), dtype=np.float64)
    slope, intercept = (
        np.polyfit(days, daily.to_numpy(), 1) if len(daily) >= 2 else (0.0, float(daily.iloc[0]))
    )
    mean_level = float(daily.mean())
    fitted_growth = float(slope) * 365.0 / mean_level if mean_level > 0 else None
    level = max(float(intercept + slope * days[-1]), 0.0)
    ahead = np.arange(1, horizon_days + 1, dtype=np.float64)
    future = pd.date_range(daily.index[-1] + pd.Timedelta(days=1), periods=horizon_days, freq="D")
    if growth_per_year is None:
        values = np.maximum(level + float(slope) * ahead, 0.0)
    elif growth_per_year <= -1.0:
        raise ValueError("growth per year must be > -100 %")
    else:
        values = level * (1.0 + growth_per_year) ** (ahead / 365.0)
    projected = pd.Series(values, index=future)
    return DemandTrend(
        float(slope), float(intercept), level, fitted_growth, growth_per_year, daily, projected
    )


def duration_hours(jobs: pd.DataFrame) -> np.ndarray:
    """Each job's duration in hours (float64), holding one int64 copy at a time."""
    seconds = jobs["end_epoch_s"].to_numpy() - jobs["start_epoch_s"].to_numpy()
    hours: np.ndarray = seconds / 3600.0
    return hours


def analyze_demand(
    history: JobHistory | UsageHistory,
    *,
    growth_per_year: float | None = None,
    horizon_days: int = 365,
) -> DemandAnalysis:
    """Hourly demand and its statistics. growth_per_year None = use the fitted trend's rate."""
    demand = split_hourly_demand(history)
    total = demand.total_gpus
    stats = {str(name): demand_stats(total[name].to_numpy()) for name in total.columns}
    stats[TOTAL] = demand_stats(total.sum(axis=1).to_numpy())
    all_hours = stats[TOTAL].gpu_hours
    declared = float(demand.interruptible_gpus.to_numpy().sum())
    declared += sum(demand.off_spot_gpu_hours.values())  # interruptible, but kept off spot
    share = declared / all_hours if all_hours else 0.0
    durations, teams = None, {}
    if isinstance(history, JobHistory):
        durations = fit_lognormal_hours(duration_hours(history.jobs))
        teams = _team_gpu_hours(history.jobs)
    trend = fit_trend(total.sum(axis=1), growth_per_year=growth_per_year, horizon_days=horizon_days)
    return DemandAnalysis(demand, stats, durations, share, teams, trend)


def project_hourly_demand(
    demand: HourlyDemand, *, growth_per_year: float, horizon_days: int
) -> HourlyDemand:
    """Repeat the last week's hourly profile for `horizon_days`, compounding growth per year."""
    week = demand.last_days(7)
    n_hours = horizon_days * 24
    reps = -(-n_hours // week.n_hours)
    hours_ahead = np.arange(1, n_hours + 1, dtype=np.float64)
    factor = (1.0 + growth_per_year) ** (hours_ahead / (365.0 * 24.0))
    start = demand.firm_gpus.index[-1] + pd.Timedelta(hours=1)
    index = pd.date_range(start, periods=n_hours, freq="h", name="hour")

    def tile(frame: pd.DataFrame) -> pd.DataFrame:
        values = np.tile(frame.to_numpy(), (reps, 1))[:n_hours] * factor[:, None]
        return pd.DataFrame(values, index=index, columns=frame.columns)

    return HourlyDemand(
        tile(week.firm_gpus), tile(week.interruptible_gpus), demand.interruptible_job_gpus
    )
