"""Risk-aware sizing: the history gate, growth scenarios, layering, alternatives, payment
options; including the 16-day p3.16xlarge case of issue 11."""

import numpy as np
import pandas as pd
import pytest

from planner.purchase_mix.core.buy import what_to_buy
from planner.purchase_mix.core.commitment import TermRate, solve_commitment
from planner.purchase_mix.core.demand import HourlyDemand
from planner.purchase_mix.core.instance_choice import InstanceCandidate, elsewhere_rate
from planner.purchase_mix.core.offers import CommitmentOption, GpuOffer
from planner.purchase_mix.core.risk import RiskSettings, size_type

# Public p3.16xlarge (8 x V100) us-east-1 rates, USD per instance-hour (approximate).
ON_DEMAND = 24.48
ONE_YEAR = CommitmentOption("reserved_1y", 1.0, 15.91)
THREE_YEAR = CommitmentOption("reserved_3y", 3.0, 9.27)
OPTIONS = (ONE_YEAR, THREE_YEAR)
SETTINGS = RiskSettings()  # -50 %, -25 %, 0, +25 % per year


def falling_instances(days: int, seed: int = 0) -> np.ndarray:
    """About 102 p3.16xlarge on average over 16 days (~$0.96M on demand), falling."""
    hours = np.arange(days * 24)
    rng = np.random.default_rng(seed)
    level = 130.0 - 56.0 * hours / (16 * 24)
    daily = 8.0 * np.sin(2 * np.pi * hours / 24)
    return np.maximum(level + daily + rng.normal(0, 6, len(hours)), 0.0)


def steady_instances(days: int, seed: int = 1) -> np.ndarray:
    hours = np.arange(days * 24)
    rng = np.random.default_rng(seed)
    return np.maximum(40 + 10 * np.sin(2 * np.pi * hours / 168) + rng.normal(0, 4, len(hours)), 0)


def test_the_16_day_p3_16xlarge_case_commits_nothing_and_says_why():
    demand = falling_instances(16)
    assert demand.sum() * ON_DEMAND == pytest.approx(0.96e6, rel=0.03)
    hindsight = solve_commitment(demand, [TermRate(15.91), TermRate(9.27)], ON_DEMAND)
    assert hindsight.levels[1] > 60  # the replay optimum would buy 3-year terms
    sizing = size_type(demand, OPTIONS, alternative_usd_per_hour=ON_DEMAND, settings=SETTINGS)
    assert sizing.layers == ()
    assert "covers 16.0 days" in sizing.reasons[0] and "14.0 more days" in sizing.reasons[0]
    assert all(choice.count == 0 for choice in sizing.choices)
    assert sizing.worst_case_by_scenario_usd["-50%/year"] >= 0
    assert sizing.first_year_worst_case_usd >= 0


def test_a_falling_history_long_enough_gets_no_3_year_term_and_no_negative_worst_case():
    demand = falling_instances(16 * 7)[: 100 * 24]  # the same fall kept up for 100 days
    demand = np.maximum(demand, 5.0)
    sizing = size_type(demand, OPTIONS, alternative_usd_per_hour=ON_DEMAND, settings=SETTINGS)
    assert sizing.trend.is_significant_decline
    assert not sizing.gate.is_3_year_allowed
    assert any("Demand is falling" in reason for reason in sizing.gate.reasons)
    assert all(layer.option.term_years == 1 for layer in sizing.layers)
    assert sizing.worst_case_by_scenario_usd["-50%/year"] >= 0


def test_never_commits_above_another_clouds_on_demand_rate():
    sizing = size_type(steady_instances(120), OPTIONS, alternative_usd_per_hour=6.32,
                       settings=SETTINGS)
    assert sizing.layers == ()
    assert any("$9.270/h" in reason and "$6.320/h" in reason for reason in sizing.reasons)


def test_steady_demand_layers_3_year_under_1_year_with_every_worst_case_positive():
    demand = steady_instances(120)
    sizing = size_type(demand, OPTIONS, alternative_usd_per_hour=ON_DEMAND, settings=SETTINGS)
    terms = [layer.option.term for layer in sizing.layers]
    assert terms[0] == "reserved_3y"
    assert all(value >= 0 for value in sizing.worst_case_by_scenario_usd.values())
    three_year = sizing.layers[0].count
    # Sized for a halving of demand: below the replay optimum on the history itself.
    assert three_year < solve_commitment(demand, [TermRate(9.27)], ON_DEMAND).levels[0]
    choice = next(c for c in sizing.choices if c.term == "reserved_3y")
    assert choice.break_even_utilization_pct == pytest.approx(100 * 9.27 / ON_DEMAND)
    assert choice.utilization_pct is not None and choice.utilization_pct.p50 > 37.9


def test_60_days_allow_1_year_but_not_3_year_terms():
    sizing = size_type(steady_instances(60), OPTIONS, alternative_usd_per_hour=ON_DEMAND,
                       settings=SETTINGS)
    assert [layer.option.term for layer in sizing.layers] == ["reserved_1y"]
    three = next(c for c in sizing.choices if c.term == "reserved_3y")
    assert three.count == 0 and "at least 90 days" in three.reason
    assert "30.0 more days" in three.reason


def test_all_upfront_pays_at_purchase_and_breaks_even_later():
    upfront = CommitmentOption("reserved_1y", 1.0, 14.5, payment_option="all_upfront",
                               upfront_usd=14.5 * 8760, recurring_usd_per_hour=0.0)
    sizing = size_type(steady_instances(120), (ONE_YEAR, upfront),
                       alternative_usd_per_hour=ON_DEMAND, settings=SETTINGS)
    paid = next(c for c in sizing.choices if c.payment_option == "all_upfront")
    assert paid.payment_words == "all upfront" and paid.count > 0
    assert paid.upfront_usd == pytest.approx(paid.count * 14.5 * 8760)
    assert paid.monthly_usd == 0 and paid.break_even_month is not None and paid.break_even_month > 1
    assert sizing.layers[0].option is upfront  # the cheaper effective rate is bought


def test_retired_hardware_is_not_committed_for_three_years():
    demand = steady_instances(120)
    kept = size_type(demand, OPTIONS, alternative_usd_per_hour=ON_DEMAND, settings=SETTINGS)
    retired = size_type(demand, OPTIONS, alternative_usd_per_hour=ON_DEMAND, settings=SETTINGS,
                        service_years_left=1.0)
    count = {layer.option.term: layer.count for layer in retired.layers}
    assert count.get("reserved_3y", 0) < kept.layers[0].count


def _demand(values: np.ndarray, name: str) -> HourlyDemand:
    index = pd.date_range("2025-01-01", periods=len(values), freq="h", tz="UTC", name="hour")
    return HourlyDemand.from_total(pd.DataFrame({name: values * 8}, index=index))


def test_a_place_that_sells_no_commitment_says_so():
    offer = GpuOffer("V100", "lambda", "us-west-1", "gpu_8x_v100", 8, 4.4)
    buy = what_to_buy(_demand(steady_instances(120), "V100"), [offer], settings=SETTINGS)
    assert buy.lines == ()
    assert buy.types[0].sizing.reasons[0] == (
        "This provider and region sell no commitment for this instance type."
    )


def test_what_to_buy_lines_name_the_instance_term_payment_and_count():
    offer = GpuOffer("V100", "aws", "us-east-1", "p3.16xlarge", 8, ON_DEMAND, OPTIONS)
    buy = what_to_buy(_demand(steady_instances(120), "V100"), [offer], settings=SETTINGS)
    words = [(line.term_words, line.payment_words) for line in buy.lines]
    assert words[0] == ("3-year reservation", "no upfront")
    line = buy.lines[0]
    assert line.instance_type == "p3.16xlarge" and line.gpus == 8 * line.count
    assert line.usd_per_hour == pytest.approx(line.count * 9.27)
    kind = buy.types[0]
    assert kind.committed_share_pct + kind.on_demand_share_pct + kind.spot_share_pct == (
        pytest.approx(100)
    )
    assert buy.first_year_worst_case_usd >= 0


def _one_type(days: int, offer: GpuOffer, **options: object) -> object:
    index = pd.date_range("2024-01-01", periods=days * 24, freq="h", tz="UTC", name="hour")
    firm = pd.DataFrame({"V100": steady_instances(days) * 8}, index=index)
    return what_to_buy(HourlyDemand(firm, firm * 0, {}), [offer], settings=SETTINGS,
                       **options)  # type: ignore[arg-type]


def test_like_with_like_baseline_and_a_cheaper_equivalent_elsewhere_only_as_a_line():
    offer = GpuOffer("V100", "aws", "us-east-1", "p3.16xlarge", 8, ON_DEMAND, OPTIONS,
                     elsewhere_usd_per_hour=12.0, elsewhere="Lambda us-south-1 (gpu_8x_v100)")
    buy = _one_type(120, offer)
    (item,) = buy.types
    assert item.alternative.usd_per_hour == ON_DEMAND  # the same place and instance
    assert item.elsewhere is not None and item.elsewhere.words.startswith(
        "the same number of V100 GPUs (8) cost $12.00/h on-demand at Lambda us-south-1")
    assert buy.lines and all(0 < line.break_even_utilization_pct <= 100 for line in buy.lines)
    # places are named as every page names providers: 'AWS us-east-1', not 'aws us-east-1'
    assert item.alternative.words == "on-demand p3.16xlarge in AWS us-east-1"
    line = buy.lines[0]
    assert line.words == f"{line.count} x p3.16xlarge (8 GPUs each, {line.count * 8} GPUs)"
    assert line.savings_usd is not None and line.savings_usd.p10 <= line.savings_usd.p90
    # The replayed purchase holds exactly the lines' instances.
    assert buy.replay is not None
    assert sum(buy.replay.plans[0].decision.levels) == sum(x.count for x in buy.lines)
    # Measured against on-demand elsewhere (asked for), the 1-year term never pays off.
    cheaper = _one_type(120, offer, is_elsewhere_allowed=True)
    one_year = next(c for c in cheaper.types[0].sizing.choices if c.term == "reserved_1y")
    assert one_year.break_even_utilization_pct > 100 and one_year.count == 0
    assert one_year.reason.startswith("Never pays off at this price")
    assert all(line.term != "reserved_1y" for line in cheaper.lines)


def test_a_cheaper_machine_elsewhere_names_its_provider_in_words():
    chosen = InstanceCandidate(1, 24.0, 8, "aws", "us-east-1", "p3.16xlarge", "V100 SXM2-16GB")
    other = InstanceCandidate(2, 12.0, 8, "lambda", "us-south-1", "gpu_8x_v100",
                              "V100 SXM2-16GB")
    found = elsewhere_rate(chosen, other)
    assert found is not None and found.words.startswith("Lambda us-south-1 (gpu_8x_v100: ")
