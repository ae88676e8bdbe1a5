"""Spot for real jobs: overhead per job size; jobs too large or too long stay off spot."""

import pandas as pd
import pytest

from planner.core.spot import DEFAULT_CHECKPOINT_POLICY
from planner.purchase_mix.core.demand import split_hourly_demand
from planner.purchase_mix.core.offers import GpuOffer
from planner.purchase_mix.core.spot_jobs import spot_plan_for
from planner.purchase_mix.core.upload.jobs import JobHistory

HOUR = 3600
OFFER = GpuOffer("A100", "aws", "us-east-1", "p4d.24xlarge", 8, 32.77, (), 12.0, 3.0e-3)


def _jobs(rows):
    frame = pd.DataFrame(rows, columns=["start_epoch_s", "end_epoch_s", "gpu_count", "gpu_type",
                                        "is_interruptible"])
    return JobHistory.from_frame(frame)


def test_large_or_long_interruptible_jobs_are_firm_demand():
    history = _jobs([
        (0, 10 * HOUR, 8, "A100", True),  # spot
        (0, 10 * HOUR, 64, "A100", True),  # 8 nodes: too large
        (0, 200 * HOUR, 8, "A100", True),  # 200 h: too long
        (0, 10 * HOUR, 8, "A100", False),  # firm
    ])
    demand = split_hourly_demand(history)
    assert demand.interruptible_gpus["A100"].sum() == pytest.approx(80)
    assert demand.firm_gpus["A100"].sum() == pytest.approx(640 + 1600 + 80)
    assert demand.off_spot_gpu_hours == {"A100": pytest.approx(640 + 1600)}
    assert demand.interruptible_gpu_hours_by_job_gpus == {"A100": {8: pytest.approx(80)}}


def test_multi_node_jobs_pay_more_interruption_overhead():
    one = spot_plan_for(OFFER, None, DEFAULT_CHECKPOINT_POLICY, {8: 100.0})
    four = spot_plan_for(OFFER, None, DEFAULT_CHECKPOINT_POLICY, {32: 100.0})
    mixed = spot_plan_for(OFFER, None, DEFAULT_CHECKPOINT_POLICY, {8: 100.0, 32: 100.0})
    assert four.instances_per_job == 4 and one.instances_per_job == 1
    assert four.overhead_fraction > 1.9 * one.overhead_fraction
    assert mixed.overhead_fraction == pytest.approx(
        (one.overhead_fraction + four.overhead_fraction) / 2
    )
    assert mixed.effective_usd_per_hour == pytest.approx(12.0 * (1 + mixed.overhead_fraction))
