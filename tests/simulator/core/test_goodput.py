"""Goodput: whole-run time = steady-state time / goodput."""

from __future__ import annotations

import numpy as np
import pytest

from simulator.core import GoodputAssumptions, goodput_fraction
from simulator.core.goodput import LLAMA3_FAILURES_PER_GPU_HOUR, NO_FAILURES

DAY_SECONDS = 86400.0


def test_llama3_default_is_419_interruptions_in_54_days_on_16k_gpus():
    interruptions = LLAMA3_FAILURES_PER_GPU_HOUR * 54 * 24 * 16384
    assert round(interruptions, 6) == 419


def test_llama3_scale_gives_about_ninety_percent():
    fraction = goodput_fraction(16384, 54 * DAY_SECONDS, GoodputAssumptions())
    assert 0.88 <= float(fraction) <= 0.92


def test_no_failures_no_overhead_is_one():
    assert float(goodput_fraction(1024, 30 * DAY_SECONDS, NO_FAILURES)) == 1.0


def test_goodput_falls_with_cluster_size_and_failure_rate():
    sizes = goodput_fraction(np.array([8, 512, 16384]), 30 * DAY_SECONDS, GoodputAssumptions())
    assert np.all(np.diff(sizes) < 0)
    flaky = GoodputAssumptions(failures_per_gpu_hour=10 * LLAMA3_FAILURES_PER_GPU_HOUR)
    assert goodput_fraction(4096, DAY_SECONDS, flaky) < goodput_fraction(
        4096, DAY_SECONDS, GoodputAssumptions())


def test_short_runs_write_no_checkpoint():
    only_checkpoints = GoodputAssumptions(1e-6, 0.0, 3600.0, 0.0)
    assert float(goodput_fraction(8, 60.0, only_checkpoints)) == pytest.approx(1.0, abs=1e-6)


@pytest.mark.parametrize("field", ["failures_per_gpu_hour", "restart_seconds",
                                   "checkpoint_write_seconds", "eval_overhead_fraction",
                                   "production_overhead_fraction"])
def test_negative_assumptions_raise(field):
    with pytest.raises(ValueError):
        GoodputAssumptions(**{field: -1.0})


def test_production_overhead_divides_the_whole_run():
    plain = GoodputAssumptions()
    heavy = GoodputAssumptions(production_overhead_fraction=0.3)
    ratio = goodput_fraction(512, 30 * DAY_SECONDS, plain) / goodput_fraction(
        512, 30 * DAY_SECONDS, heavy)
    assert float(ratio) == pytest.approx(1.0 + 0.3 * float(goodput_fraction(
        512, 30 * DAY_SECONDS, plain)), rel=1e-9)


def test_the_checkpoint_interval_is_young_daly_of_the_spot_model():
    from planner.core.spot import young_interval_hours
    from simulator.core.goodput import checkpoint_interval_seconds

    rate = np.array([1.0 / 3600.0])  # one failure per hour
    assert checkpoint_interval_seconds(30.0, rate)[0] == pytest.approx(
        float(young_interval_hours(30.0 / 3600.0, 1.0)) * 3600.0)


def test_whole_run_goodput_keeps_the_base_and_sets_the_overhead():
    from simulator.core.goodput import whole_run_goodput

    base = GoodputAssumptions(restart_seconds=900.0)
    whole = whole_run_goodput(0.2, base)
    assert whole.restart_seconds == 900.0 and whole.production_overhead_fraction == 0.2
