import json

import numpy as np
import pandas as pd
import pytest

from planner.core.spot import CheckpointPolicy, expected_overhead, plan_spot
from planner.purchase_mix.core.commitment import TermRate, solve_commitment
from planner.purchase_mix.core.demand import HourlyDemand
from planner.purchase_mix.core.hindsight import hindsight_replay
from planner.purchase_mix.core.offers import CommitmentOption, GpuOffer
from planner.purchase_mix.core.savings_plan import SavingsPlanOffer


def _offer(gpu_type="A100", spot=3.0, hazard=3e-4, cap_3y=None):
    return GpuOffer(
        gpu_type,
        "aws",
        "us-east-1",
        "p4d.24xlarge",
        8,
        32.0,
        (CommitmentOption("1y", 1, 20.0), CommitmentOption("3y", 3, 13.0, cap_3y)),
        spot_usd_per_hour=spot,
        spot_interruptions_per_hour=hazard,
    )


def _demand(firm, interruptible, gpu_type="A100"):
    index = pd.date_range("2024-01-01", periods=len(firm), freq="h", tz="UTC", name="hour")
    return HourlyDemand(
        pd.DataFrame({gpu_type: firm}, index=index),
        pd.DataFrame({gpu_type: interruptible}, index=index),
        {gpu_type: 8.0},
    )


def test_almost_idle_gets_no_commitment():
    firm = np.zeros(24 * 30)
    firm[::100] = 8.0
    recommendation = hindsight_replay(_demand(firm, np.zeros_like(firm)), [_offer()])
    assert recommendation.hourly_commitment_usd == 0
    assert recommendation.plans[0].decision.levels == (0, 0)


def test_only_interruptible_demand_goes_to_spot():
    rng = np.random.default_rng(2)
    firm, interruptible = rng.uniform(30, 50, 24 * 14), rng.uniform(0, 16, 24 * 14)
    plan = hindsight_replay(_demand(firm, interruptible), [_offer()]).plans[0]
    assert plan.decision.is_spot
    assert plan.expected.spot_gpu_hours == pytest.approx(interruptible.sum())
    levels = solve_commitment(firm / 8, [TermRate(20.0), TermRate(13.0)], 32.0).levels
    assert plan.decision.levels == levels


def test_expensive_spot_is_not_chosen():
    firm = np.full(48, 16.0)
    demand = _demand(firm, np.full(48, 8.0))
    plan = hindsight_replay(demand, [_offer(spot=31.0, hazard=0.05)]).plans[0]
    assert plan.spot is not None and plan.spot.effective_usd_per_hour > 32.0
    assert not plan.decision.is_spot and plan.expected.spot_gpu_hours == 0


def test_young_overhead_matches_the_worked_example():
    interval_hours, overhead = expected_overhead(1 / (8 * 3e-4), CheckpointPolicy(0.05, 0.5))
    assert interval_hours == pytest.approx(6.455, abs=1e-3)
    assert overhead == pytest.approx(0.0167, abs=2e-4)
    plan = plan_spot(
        spot_usd_per_hour=1.0,
        interruptions_per_hour=0.0,
        on_demand_usd_per_hour=2.0,
        instances_per_job=4,
        policy=CheckpointPolicy(),
    )
    assert plan.overhead_fraction == 0 and plan.is_chosen


def test_metrics_add_up_and_serialize():
    rng = np.random.default_rng(4)
    firm = 40 + 20 * np.sin(np.arange(24 * 21) / 24 * 2 * np.pi) + rng.random(24 * 21)
    recommendation = hindsight_replay(
        _demand(firm, rng.uniform(0, 8, len(firm))),
        [_offer(cap_3y=2)],
        savings_plans=[SavingsPlanOffer("1y", 1, {"A100": 21.0})],
    )
    plan = recommendation.plans[0]
    assert plan.decision.levels[1] == 2 and plan.decision.levels[0] > 0  # 3y base, 1y layer
    total = recommendation.total
    assert total.cost_usd == pytest.approx(
        total.commitment_cost_usd + total.on_demand_cost_usd + total.spot_cost_usd
    )
    assert total.demand_gpu_hours == pytest.approx(
        total.committed_gpu_hours_used + total.on_demand_gpu_hours + total.spot_gpu_hours
    )
    assert 0 < total.utilization_pct <= 100 and 0 < total.coverage_pct <= 100
    assert recommendation.p10_week_total.savings_usd < total.savings_usd
    assert plan.commitments[1].total_commitment_usd == pytest.approx(2 * 13.0 * 8760 * 3)
    payload = json.loads(json.dumps(recommendation.to_dict(), allow_nan=False))
    assert len(payload["demand"]["firm_gpus"]["hours"]) == len(firm)
    assert payload["savings_plans"][0]["commitment_usd_per_hour"] > 0


def test_unpriced_types_are_listed_and_duplicate_offers_raise():
    demand = _demand(np.ones(24), np.zeros(24), gpu_type="L4")
    assert hindsight_replay(demand, [_offer()]).unpriced_gpu_types == ("L4",)
    with pytest.raises(ValueError):
        hindsight_replay(demand, [_offer(), _offer()])
