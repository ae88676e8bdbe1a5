import json

import numpy as np
import pandas as pd
import pytest

from planner.purchase_mix.core.analysis import (
    analyze_demand,
    fit_lognormal_hours,
    project_hourly_demand,
)
from planner.purchase_mix.core.upload.jobs import JobHistory


def test_lognormal_fit_recovers_parameters():
    hours = np.random.default_rng(0).lognormal(0.5, 1.1, 20000)
    fit = fit_lognormal_hours(hours)
    assert fit is not None
    assert fit.mu_log_hours == pytest.approx(0.5, abs=0.03)
    assert fit.sigma_log_hours == pytest.approx(1.1, abs=0.03)
    assert fit.ks_statistic < 0.02


def test_lognormal_fit_in_blocks_is_the_whole_array_fit(monkeypatch):
    """The block-by-block KS sweep (memory at 10M jobs) gives the whole-array figures."""
    from scipy.special import ndtr

    from planner.purchase_mix.core import analysis

    hours = np.random.default_rng(1).lognormal(0.2, 1.3, 10_001)
    hours[::7] = 0.0  # zero durations are left out of the fit
    given = hours.copy()
    monkeypatch.setattr(analysis, "KS_BLOCK", 1000)
    fit = fit_lognormal_hours(hours)
    positive = np.sort(hours[hours > 0])
    logs = np.log(positive)
    mu, sigma, n = logs.mean(), logs.std(), len(positive)
    cdf = ndtr((logs - mu) / sigma)
    ks = max(float((np.arange(1, n + 1) / n - cdf).max()), float((cdf - np.arange(n) / n).max()))
    assert fit is not None and fit.n_jobs == n
    assert (fit.mu_log_hours, fit.sigma_log_hours, fit.ks_statistic) == (mu, sigma, ks)
    assert (fit.median_hours, fit.mean_hours) == (np.median(positive), positive.mean())
    assert np.array_equal(hours, given)  # sorted in place on its own copy only


def _history(n_days: int, growth: float) -> JobHistory:
    rows = []
    for day in range(n_days):
        gpus = int(10 + growth * day)
        rows.append((day * 86400, (day + 1) * 86400, gpus, "A", day % 2 == 0, f"t{day % 3}"))
    frame = pd.DataFrame(
        rows,
        columns=[
            "start_epoch_s",
            "end_epoch_s",
            "gpu_count",
            "gpu_type",
            "is_interruptible",
            "team",
        ],
    )
    return JobHistory.from_frame(frame)


def test_analysis_statistics_trend_and_teams():
    analysis = analyze_demand(_history(30, 1.0), horizon_days=10)
    assert analysis.trend.slope_gpus_per_day == pytest.approx(1.0, abs=0.01)
    assert analysis.trend.projected_daily_gpus.iloc[0] == pytest.approx(40.0, abs=0.2)
    assert analysis.stats["total"].peak_gpus == 39
    assert 0.45 < analysis.interruptible_share < 0.5
    assert sum(analysis.gpu_hours_by_team.values()) == pytest.approx(
        analysis.stats["total"].gpu_hours
    )
    json.dumps(analysis.to_dict(), allow_nan=False)


def test_growth_rate_compounds_and_projection_tiles_last_week():
    analysis = analyze_demand(_history(14, 0.0), growth_per_year=1.0, horizon_days=365)
    assert analysis.trend.projected_daily_gpus.iloc[-1] == pytest.approx(20.0, rel=1e-3)
    projected = project_hourly_demand(analysis.demand, growth_per_year=0.0, horizon_days=14)
    assert projected.n_hours == 14 * 24
    assert projected.total_gpus.to_numpy().mean() == pytest.approx(10.0)
