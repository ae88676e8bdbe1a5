import json

import numpy as np
import pandas as pd
import pytest

from planner.purchase_mix.core.backtest import SizingRule, backtest, lookback_sensitivity
from planner.purchase_mix.core.buy import what_to_buy
from planner.purchase_mix.core.demand import HourlyDemand
from planner.purchase_mix.core.offers import CommitmentOption, GpuOffer
from planner.purchase_mix.core.risk import RiskSettings

OFFERS = [
    GpuOffer(
        "P100",
        "aws",
        "us-east-1",
        "p3.8xlarge",
        4,
        12.24,
        (CommitmentOption("1y", 1, 7.8), CommitmentOption("3y", 3, 5.0, 10)),
        spot_usd_per_hour=3.7,
        spot_interruptions_per_hour=3e-4,
    )
]


def test_backtest_hindsight_is_best(philly_demand):
    result = backtest(philly_demand, OFFERS)
    by_name = {item.name: item for item in result.strategies}
    assert set(by_name) == {"all_on_demand", "fit_on_train", "lookback_30d", "hindsight"}
    assert by_name["hindsight"].regret_usd == 0
    assert all(item.regret_usd >= -1e-6 for item in result.strategies)
    assert result.train_hours + result.test_hours == philly_demand.n_hours
    json.dumps(result.to_dict(), allow_nan=False)


def test_lookback_windows(philly_demand):
    buy = what_to_buy(philly_demand, OFFERS, settings=RiskSettings())
    sensitivity = lookback_sensitivity(philly_demand, OFFERS, rule=SizingRule(RiskSettings()),
                                       recommended=buy, sized_on_days=None)
    assert [item.days for item in sensitivity.results] == [7, 30, 60, 90, None]
    assert [item.is_partial for item in sensitivity.results] == [False, True, True, True, False]
    json.dumps(sensitivity.to_dict(), allow_nan=False)


def _steady(days: int) -> HourlyDemand:
    hours = np.arange(days * 24)
    values = 4 * (30 + 8 * np.sin(2 * np.pi * hours / 168))
    index = pd.date_range("2025-01-01", periods=len(hours), freq="h", tz="UTC", name="hour")
    return HourlyDemand.from_total(pd.DataFrame({"P100": values}, index=index))


def test_lookback_rows_are_sized_like_what_to_buy_and_one_is_it():
    """The windows used to be sized at the exact hindsight optimum, so every window showed the
    optimum's rate and savings while what to buy (risk-sized) showed another: now each window
    is sized by the recommendation's rule and its own window's row is the recommendation."""
    demand = _steady(150)
    buy = what_to_buy(demand, OFFERS, settings=RiskSettings())
    rows = lookback_sensitivity(demand, OFFERS, rule=SizingRule(RiskSettings()),
                                recommended=buy, sized_on_days=None).results
    (mine,) = [row for row in rows if row.is_recommendation]
    assert mine.days is None and buy.replay is not None
    assert mine.hourly_commitment_usd == pytest.approx(buy.usd_per_hour)
    assert mine.full_history.savings_usd == pytest.approx(buy.replay.total.savings_usd)
    by_days = {row.days: row for row in rows}
    # Under 30 days of data nothing is committed, as for what to buy.
    assert by_days[7].hourly_commitment_usd == 0
    assert by_days[7].words.startswith("nothing committed")
    assert by_days[90].words.startswith(f"{buy.lines[0].count} x p3.8xlarge")
    # A look-back that what to buy was sized on is marked, not sized twice.
    sized_on_60 = what_to_buy(demand.last_days(60), OFFERS, settings=RiskSettings())
    rows = lookback_sensitivity(demand, OFFERS, rule=SizingRule(RiskSettings()),
                                recommended=sized_on_60, sized_on_days=60).results
    assert [row.days for row in rows if row.is_recommendation] == [60]
    assert len(rows) == 4


def test_growing_demand_backtest_beats_all_on_demand():
    hours = np.arange(24 * 60)
    firm = pd.DataFrame(
        {"P100": 20 + hours / 24.0},
        index=pd.date_range("2024-01-01", periods=len(hours), freq="h", tz="UTC"),
    )
    result = backtest(HourlyDemand.from_total(firm), OFFERS)
    by_name = {item.name: item.test.cost_usd for item in result.strategies}
    assert by_name["fit_on_train"] < by_name["all_on_demand"]
    with pytest.raises(ValueError):
        backtest(HourlyDemand.from_total(firm), OFFERS, train_fraction=1.5)
