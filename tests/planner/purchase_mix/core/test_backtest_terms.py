"""The honest backtest on the two fixture traces: every strategy costed on the test part."""

import numpy as np
import pandas as pd
import pytest

from planner.purchase_mix.core.backtest_terms import backtest_terms
from planner.purchase_mix.core.demand import HourlyDemand
from planner.purchase_mix.core.offers import CommitmentOption, GpuOffer
from planner.purchase_mix.core.risk import RiskSettings

TERMS = (CommitmentOption("reserved_1y", 1.0, 15.91), CommitmentOption("reserved_3y", 3.0, 9.27))
NAMES = ["all_on_demand", "recommendation", "minimum_30d", "p20", "p50", "hindsight",
         "hindsight_whole_term"]


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
    assert rows["recommendation"].instances_by_term == {}
    p50 = rows["p50"]
    if sum(p50.instances_by_term.values()):
        assert p50.whole_term_cost_usd > rows["recommendation"].whole_term_cost_usd


def _steady_weeks(days: int) -> HourlyDemand:
    """V100 demand around 240 GPUs with a weekly swing, hourly, from 2025-01-01."""
    hours = np.arange(days * 24)
    values = 8 * (30 + 8 * np.sin(2 * np.pi * hours / 168))
    index = pd.date_range("2025-01-01", periods=len(hours), freq="h", tz="UTC", name="hour")
    return HourlyDemand.from_total(pd.DataFrame({"V100": values}, index=index))


def test_a_year_of_steady_demand_the_recommendation_beats_on_demand():
    result = backtest_terms(_steady_weeks(200), [_offer("V100")], settings=RiskSettings())
    rows = {row.name: row for row in result.strategies}
    assert sum(rows["recommendation"].instances_by_term.values()) > 0
    assert rows["recommendation"].test_cost_usd < rows["all_on_demand"].test_cost_usd


def test_too_short_to_split():
    index = pd.date_range("2025-01-01", periods=30, freq="h", tz="UTC", name="hour")
    demand = HourlyDemand.from_total(pd.DataFrame({"V100": np.ones(30)}, index=index))
    with pytest.raises(ValueError, match="too short"):
        backtest_terms(demand, [_offer("V100")], settings=RiskSettings())


def _owed_after_test(row, test_hours: int) -> float:
    """What the row's own purchase still owes after the test part (USD)."""
    rates = {f"p3.16xlarge, {words}": (option.usd_per_hour, option.term_years)
             for option, words in zip(TERMS, ("1-year reservation", "3-year reservation"),
                                      strict=True)}
    return sum(n * rates[key][0] * (rates[key][1] * 8760 - test_hours)
               for key, n in row.instances_by_term.items())


def test_each_row_is_one_purchase_costed_over_two_spans():
    """150 steady days: a 3-year term pays on the 50 test days but not charged in full. The
    hindsight row used to show the test optimum's purchase (4 x 3-year) beside the cost of
    another purchase (nothing) in the whole-term column: $157,821 vs $1,094,662 for the same
    '4 x 3-year reservation' two rows up."""
    result = backtest_terms(_steady_weeks(150), [_offer("V100")], settings=RiskSettings())
    rows = {row.name: row for row in result.strategies}
    test_hours = result.test_hours
    assert rows["hindsight"].instances_by_term == {"p3.16xlarge, 3-year reservation": 33}
    assert rows["hindsight_whole_term"].instances_by_term == {}
    for row in rows.values():
        # The whole-term cost is the test cost plus what this row's purchase still owes.
        assert row.whole_term_cost_usd - row.test_cost_usd == pytest.approx(
            _owed_after_test(row, test_hours))
    # Each span's regret is against its own optimum: never negative, zero at the optimum.
    assert min(r.test_cost_usd for r in rows.values()) == rows["hindsight"].test_cost_usd
    assert min(r.whole_term_cost_usd for r in rows.values()) == pytest.approx(
        rows["hindsight_whole_term"].whole_term_cost_usd)
    assert rows["hindsight_whole_term"].whole_term_regret_usd == 0
    assert all(r.regret_usd >= 0 and r.whole_term_regret_usd >= -1e-6 for r in rows.values())
    # The same purchase has the same costs whichever row it is in.
    by_purchase = {}
    for row in rows.values():
        key = tuple(sorted(row.instances_by_term.items()))
        costs = (round(row.test_cost_usd, 2), round(row.whole_term_cost_usd, 2))
        assert by_purchase.setdefault(key, costs) == costs
