"""The one buying rule: no commitment is ever bought below 30 days of history (by the purchase
mix, its hindsight reference or a capacity pool), no 3-year term below 90 days; whole
instances; full-term money; one line format."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from planner.purchase_mix.core.buy import what_to_buy
from planner.purchase_mix.core.buying_rule import (
    LINE_FIELDS,
    buy_line,
    line_sentence,
    price_pool,
    whole_instances,
)
from planner.purchase_mix.core.demand import HourlyDemand
from planner.purchase_mix.core.hindsight import hindsight_replay
from planner.purchase_mix.core.offers import CommitmentOption, GpuOffer
from planner.purchase_mix.core.risk import RiskSettings, Spread

ON_DEMAND = 24.48  # p3.16xlarge-like, USD per instance-hour (8 GPUs)
OPTIONS = (
    CommitmentOption("reserved_1y", 1.0, 15.91),
    CommitmentOption("reserved_3y", 3.0, 9.27, payment_option="all_upfront",
                     upfront_usd=9.27 * 3 * 8760, recurring_usd_per_hour=0.0),
)
OFFER = GpuOffer("V100", "aws", "us-east-1", "p3.16xlarge", 8, ON_DEMAND, OPTIONS)
FAST = RiskSettings(n_paths=16)


def steady_gpus(hours: int, seed: int = 1) -> np.ndarray:
    """Steady demand of about 320 GPUs (40 instances), never below 200: any long enough
    history commits."""
    t = np.arange(hours)
    rng = np.random.default_rng(seed)
    return 8 * np.maximum(40 + 6 * np.sin(2 * np.pi * t / 168) + rng.normal(0, 2, hours), 25)


def _demand(gpus: np.ndarray) -> HourlyDemand:
    index = pd.date_range("2025-01-01", periods=len(gpus), freq="h", tz="UTC", name="hour")
    return HourlyDemand.from_total(pd.DataFrame({"V100": gpus}, index=index))


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(hours=st.integers(min_value=1, max_value=30 * 24 - 1))
def test_no_commitment_is_ever_bought_below_30_days(hours: int) -> None:
    gpus = steady_gpus(hours)
    buy = what_to_buy(_demand(gpus), [OFFER], settings=FAST)
    assert buy.lines == () and buy.upfront_usd == 0
    reasons = buy.types[0].sizing.reasons
    assert any("a commitment needs at least 30 days" in r for r in reasons)
    hindsight = hindsight_replay(_demand(gpus), [OFFER], is_gated=True)
    assert hindsight.plans[0].decision.levels == (0, 0)
    for pool in (8, 160, 320):
        bought = price_pool(OFFER, "cheapest", pool, gpus / 8,
                            alternative_usd_per_hour=ON_DEMAND, settings=FAST)
        assert bought.lines == () and "30 days" in bought.reasons[0]


@pytest.mark.parametrize(("days", "terms"), [
    (30, {"reserved_1y"}), (89, {"reserved_1y"}), (120, {"reserved_3y"})])
def test_the_gates_open_at_30_days_and_3_years_at_90(days: int, terms: set[str]) -> None:
    gpus = steady_gpus(days * 24)
    buy = what_to_buy(_demand(gpus), [OFFER], settings=FAST)
    assert buy.lines and {line.term for line in buy.lines} <= terms | {"reserved_1y"}
    assert terms <= {line.term for line in buy.lines}
    hindsight = hindsight_replay(_demand(gpus), [OFFER], is_gated=True)
    one_year, three_year = hindsight.plans[0].decision.levels
    assert one_year + three_year > 0 and (three_year == 0) == (days < 90)
    pool = price_pool(OFFER, "cheapest", 320, gpus / 8, alternative_usd_per_hour=ON_DEMAND,
                      settings=FAST)
    assert [line.term for line in pool.lines] == (["reserved_3y"] if days >= 90
                                                  else ["reserved_1y"])


def test_a_line_carries_whole_instances_and_full_term_money() -> None:
    three_year = OPTIONS[1]
    line = buy_line(OFFER, three_year, 18, alternative_usd_per_hour=ON_DEMAND,
                    savings_usd=Spread(-10.0, 5.0, 9.0), first_year_savings_usd=Spread(1, 2, 3))
    assert (line.count, line.gpus) == (18, 144)
    assert line.upfront_usd == pytest.approx(18 * 9.27 * 3 * 8760)
    # all upfront: the whole term is the upfront; no upfront: the rate x every hour of it
    assert line.full_term_cost_usd == pytest.approx(line.upfront_usd)
    no_upfront = buy_line(OFFER, OPTIONS[0], 2, alternative_usd_per_hour=ON_DEMAND,
                          savings_usd=None, first_year_savings_usd=None)
    assert no_upfront.full_term_cost_usd == pytest.approx(2 * 15.91 * 8760)
    assert line.break_even_utilization_pct == pytest.approx(100 * 9.27 / ON_DEMAND)
    assert line.sentence.startswith("18 x p3.16xlarge (8 GPUs each, 144 GPUs) in AWS us-east-1")
    assert "-$10 / $5 / $9 over the term" in line.sentence
    assert "break-even at 38% utilisation" in line.sentence
    assert set(LINE_FIELDS) <= set(line.__dataclass_fields__)


def test_a_size_that_is_not_whole_instances_is_refused_never_rounded() -> None:
    assert whole_instances(144, 8, "p3dn.24xlarge") == 18
    with pytest.raises(ValueError, match="^pool_gpus: 141 GPUs .* choose 136 or 144"):
        whole_instances(141, 8, "p3dn.24xlarge")
    with pytest.raises(ValueError, match="pool_gpus"):
        price_pool(OFFER, "cheapest", 141, steady_gpus(200 * 24) / 8,
                   alternative_usd_per_hour=ON_DEMAND, settings=FAST)


def test_each_line_says_what_its_fields_say() -> None:
    """The sentence is built once from the finished line: its break-even is the term
    choice's, and nothing changes the line after its sentence."""
    buy = what_to_buy(_demand(steady_gpus(120 * 24)), [OFFER], settings=FAST)
    choices = {(c.term, c.payment_option): c for c in buy.types[0].sizing.choices}
    assert buy.lines
    for line in buy.lines:
        assert line.sentence == line_sentence(line)
        choice = choices[(line.term, line.payment_option)]
        assert line.break_even_utilization_pct == choice.break_even_utilization_pct
        assert f"break-even at {choice.break_even_utilization_pct:.0f}%" in line.sentence
