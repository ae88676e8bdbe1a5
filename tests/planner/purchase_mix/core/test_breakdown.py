import numpy as np
import pandas as pd
import pytest

from planner.purchase_mix.core.breakdown import (
    commitment_cost_curve,
    duration_histogram,
    hourly_mix,
    savings_steps,
)
from planner.purchase_mix.core.demand import HourlyDemand
from planner.purchase_mix.core.hindsight import hindsight_replay
from planner.purchase_mix.core.offers import CommitmentOption, GpuOffer


def _recommendation(firm, spare, spot_usd_per_hour=None):
    hours = pd.date_range("2024-01-01", periods=len(firm), freq="h", tz="UTC", name="hour")
    demand = HourlyDemand(
        pd.DataFrame({"A100": firm}, index=hours), pd.DataFrame({"A100": spare}, index=hours),
        {"A100": 1.0},
    )
    offer = GpuOffer("A100", "aws", "r", "p4d", 1, 10.0,
                     (CommitmentOption("reserved_1y", 1.0, 6.0),), spot_usd_per_hour, 0.0)
    return hindsight_replay(demand, [offer])


def test_duration_histogram_counts_and_fit_add_up():
    rng = np.random.default_rng(3)
    hours = rng.lognormal(0.5, 1.0, 20_000)
    histogram = duration_histogram(hours, mu_log_hours=0.5, sigma_log_hours=1.0, n_bins=30)
    assert len(histogram.edges_hours) == 31
    assert sum(histogram.counts) == 20_000
    assert sum(histogram.fitted_counts) == pytest.approx(20_000, rel=0.01)
    assert np.abs(np.array(histogram.counts) - histogram.fitted_counts).max() < 0.02 * 20_000


def test_duration_histogram_rejects_no_positive_durations():
    with pytest.raises(ValueError):
        duration_histogram(np.zeros(3), mu_log_hours=0.0, sigma_log_hours=1.0)


def test_hourly_mix_table():
    # Demand 2, 4, 4, 4: committing 4 instances at 60 % of on-demand wins (used 3 of 4 hours fully).
    rec = _recommendation([2.0, 4.0, 4.0, 4.0], [1.0, 1.0, 1.0, 1.0], spot_usd_per_hour=2.0)
    mix = hourly_mix(rec)
    assert sum(rec.plans[0].decision.levels) == 4
    assert mix["committed_gpus"].tolist() == [2.0, 4.0, 4.0, 4.0]
    assert mix["on_demand_gpus"].tolist() == [0.0, 0.0, 0.0, 0.0]
    assert mix["spot_gpus"].tolist() == [1.0, 1.0, 1.0, 1.0]


def test_savings_steps_add_up_and_split_spot():
    rec = _recommendation([2.0, 4.0, 4.0, 4.0], [1.0, 1.0, 1.0, 1.0], spot_usd_per_hour=2.0)
    steps = savings_steps(rec)
    assert steps.all_on_demand_cost_usd == pytest.approx(180.0)  # 18 GPU-h at $10
    assert steps.spot_savings_usd == pytest.approx(4 * (10.0 - 2.0))
    assert steps.commitment_savings_usd == pytest.approx(14 * 10.0 - 4 * 4 * 6.0)
    total = steps.all_on_demand_cost_usd - steps.commitment_savings_usd - steps.spot_savings_usd
    assert total == pytest.approx(steps.cost_usd)


def test_cost_curve_minimum_is_the_recommended_level():
    rec = _recommendation([1.0, 5.0, 5.0, 3.0, 0.0, 5.0], [0.0] * 6)
    curve = commitment_cost_curve(rec.plans[0], rec.demand)
    assert curve is not None
    assert curve.levels_instances == (0, 1, 2, 3, 4, 5)
    assert curve.cost_usd[0] == pytest.approx(19 * 10.0)
    assert curve.best_level_instances == sum(rec.plans[0].decision.levels)
