"""The honest backtest on the two fixture traces: every strategy costed on the test part."""

import numpy as np
import pandas as pd
import pytest

from planner.purchase_mix.core.backtest_terms import backtest_terms
from planner.purchase_mix.core.demand import HourlyDemand
from planner.purchase_mix.core.offers import CommitmentOption, GpuOffer
from planner.purchase_mix.core.risk import RiskSettings

TERMS = (CommitmentOption("reserved_1y", 1.0, 15.91), CommitmentOption("reserved_3y", 3.0, 9.27))
NAMES = ["all_on_demand", "recommendation", "minimum_30d", "p20", "p50", "hindsight"]


def _offer(name: str) -> GpuOffer:
    return GpuOffer(name, "aws", "us-east-1", "p3.16xlarge", 8, 24.48, TERMS, 7.34, 2.6e-4)


@pytest.mark.parametrize(("fixture", "gpu_type"), [("philly_demand", "P100"),
                                                    ("helios_demand", "V100")])
def test_backtest_on_the_fixture_traces(request, fixture, gpu_type):
    demand = request.getfixturevalue(fixture)
    result = backtest_terms(demand, [_offer(gpu_type)], settings=RiskSettings())
    rows = {row.name: row for row in result.strategies}
    assert list(rows) == NAMES
    assert result.train_hours + result.test_hours == demand.n_hours
    assert rows["hindsight"].regret_usd == 0
    assert all(row.regret_usd >= -1e-6 for row in rows.values())
    assert all(row.whole_term_regret_usd >= -1e-6 for row in rows.values())
    # Under 30 days of history the recommendation buys nothing; charging the whole term makes
    # any commitment on a short test part cost more than it saves.
    assert sum(rows["recommendation"].instances_by_term.values()) == 0
    p50 = rows["p50"]
    if sum(p50.instances_by_term.values()):
        assert p50.whole_term_cost_usd > rows["recommendation"].whole_term_cost_usd


def test_a_year_of_steady_demand_the_recommendation_beats_on_demand():
    hours = np.arange(200 * 24)
    values = 8 * (30 + 8 * np.sin(2 * np.pi * hours / 168))
    index = pd.date_range("2025-01-01", periods=len(hours), freq="h", tz="UTC", name="hour")
    demand = HourlyDemand.from_total(pd.DataFrame({"V100": values}, index=index))
    result = backtest_terms(demand, [_offer("V100")], settings=RiskSettings())
    rows = {row.name: row for row in result.strategies}
    assert sum(rows["recommendation"].instances_by_term.values()) > 0
    assert rows["recommendation"].test_cost_usd < rows["all_on_demand"].test_cost_usd


def test_too_short_to_split():
    index = pd.date_range("2025-01-01", periods=30, freq="h", tz="UTC", name="hour")
    demand = HourlyDemand.from_total(pd.DataFrame({"V100": np.ones(30)}, index=index))
    with pytest.raises(ValueError, match="too short"):
        backtest_terms(demand, [_offer("V100")], settings=RiskSettings())
