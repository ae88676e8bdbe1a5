import json

import numpy as np
import pandas as pd
import pytest

from planner.purchase_mix.core.backtest import backtest, lookback_sensitivity
from planner.purchase_mix.core.demand import HourlyDemand
from planner.purchase_mix.core.offers import CommitmentOption, GpuOffer

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
    sensitivity = lookback_sensitivity(philly_demand, OFFERS)
    assert [item.days for item in sensitivity.results] == [7, 30, 60, 90]
    assert [item.is_partial for item in sensitivity.results] == [False, True, True, True]
    json.dumps(sensitivity.to_dict(), allow_nan=False)


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
