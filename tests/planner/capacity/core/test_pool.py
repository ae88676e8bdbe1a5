"""The pool simulator's reference semantics, a hand-computed case, exactness at the ends of
the sweep, and agreement with an independent brute-force replay on random small traces."""

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from planner.capacity.core.jobs import (
    PoolJobs,
    peak_concurrent_gpus,
    pool_jobs_from_frame,
    wait_limits_s,
)
from planner.capacity.core.points import GridPoint, nearest_rank, point_figures
from planner.capacity.core.pool import simulate_pool
from planner.capacity.core.prices import CapacityPrices
from tests.planner.capacity.core.brute_force import brute_force

H = 3600.0
PRICES = CapacityPrices(pool_usd_per_gpu_hour=1.0, on_demand_usd_per_gpu_hour=3.0,
                        spot_usd_per_gpu_hour=None)


def _jobs(rows: list[tuple[float, float, int]], interruptible: list[bool] | None = None
          ) -> PoolJobs:
    submit, duration, gpus = (np.array(col) for col in zip(*rows, strict=True))
    flags = np.array(interruptible if interruptible else [False] * len(rows))
    return PoolJobs("A100", submit * H, duration * H, gpus.astype(np.int64), flags)


def _run(jobs: PoolJobs, pool: int, discipline: str, policy: str, hours: float):
    limits = wait_limits_s(jobs, policy, hours)
    outcome = simulate_pool(jobs, pool_gpus=pool, discipline=discipline, wait_limits_s=limits)
    return outcome, point_figures(jobs, outcome, GridPoint(pool, discipline, policy, hours),
                                  PRICES)


# Six jobs on 4 GPUs, each may wait 2 h (submit h, duration h, GPUs):
SIX = [(0, 3, 2), (0, 1, 2), (0.5, 2, 3), (0.5, 1, 1), (1, 1, 5), (2, 1, 1)]


def test_six_jobs_fifo_by_hand():
    # t=1: the 2-GPU job ends, but the 3-GPU head blocks the 1-GPU job behind it; the 5-GPU
    # job is larger than the pool and bursts on arrival. t=2.5: the head and the job behind
    # it reach their limit together; the head bursts first (queue order), then starting is
    # retried: the 1-GPU jobs start instead of bursting.
    outcome, figures = _run(_jobs(SIX), 4, "fifo", "constant", 2.0)
    assert outcome.is_burst.tolist() == [False, False, True, False, True, False]
    assert (outcome.begin_s / H).tolist() == [0, 0, 2.5, 2.5, 1, 2.5]
    assert figures.jobs_burst == 2
    assert figures.pool_gpu_hours == pytest.approx(6 + 2 + 1 + 1)
    assert figures.burst_gpu_hours == pytest.approx(3 * 2 + 5 * 1)
    assert figures.span_hours == pytest.approx(4.5)  # the burst 3-GPU job ends at 4.5 h
    assert figures.utilization == pytest.approx(10 / (4 * 4.5))
    assert figures.mean_wait_hours == pytest.approx((2 + 2 + 0.5) / 6)
    assert (figures.p50_wait_hours, figures.p95_wait_hours) == (0, 2)
    assert figures.total_usd == pytest.approx(4 * 4.5 * 1.0 + 11 * 3.0)


def test_six_jobs_backfill_by_hand():
    # EASY: at t=1 the head's reservation is t=3 (when the 3-hour job ends) with 1 GPU to
    # spare; the 1-GPU, 1-hour job ends by then and starts at once, as does the last job at t=2.
    outcome, _ = _run(_jobs(SIX), 4, "backfill", "constant", 2.0)
    assert outcome.is_burst.tolist() == [False, False, True, False, True, False]
    assert (outcome.begin_s / H).tolist() == [0, 0, 2.5, 1, 1, 2]


def test_completions_free_gpus_before_arrivals_at_the_same_instant():
    outcome, figures = _run(_jobs([(0, 1, 4), (1, 1, 4)]), 4, "fifo", "none", 0.0)
    assert not outcome.is_burst.any() and figures.max_wait_seen_hours == 0


def test_no_waiting_bursts_whatever_does_not_start_at_once():
    outcome, figures = _run(_jobs([(0, 2, 3), (1, 1, 2), (1, 1, 1)]), 4, "fifo", "none", 0.0)
    assert outcome.is_burst.tolist() == [False, True, False]
    assert figures.mean_wait_hours == 0


def test_a_job_larger_than_the_pool_bursts_on_arrival_and_blocks_nobody():
    outcome, _ = _run(_jobs([(0, 5, 9), (0, 1, 1)]), 4, "fifo", "constant", math.inf)
    assert outcome.is_burst.tolist() == [True, False]
    assert (outcome.begin_s / H).tolist() == [0, 0]


def test_jobs_without_gpus_are_ignored():
    frame = pd.DataFrame({"start_epoch_s": [0, 10, 20], "end_epoch_s": [100, 50, 30],
                          "gpu_count": [1, 0, 2], "gpu_type": ["A100"] * 3,
                          "is_interruptible": [False, True, False]})
    jobs = pool_jobs_from_frame(frame, "A100")
    assert jobs.gpus.tolist() == [1, 2] and jobs.duration_s.tolist() == [100, 10]


def test_size_aware_limits_grow_with_gpu_hours_and_average_the_constant_limit():
    jobs = _jobs([(0, 1, 1), (0, 2, 4), (0, 1, 3)])  # 1, 8 and 3 GPU-hours, mean 4
    limits = wait_limits_s(jobs, "size_aware", 2.0) / H
    assert limits.tolist() == [0.5, 4.0, 1.5]
    assert limits.mean() == pytest.approx(2.0)


def test_no_pool_is_all_on_demand():
    jobs = _jobs(SIX, interruptible=[True, False, False, True, False, False])
    spot = CapacityPrices(1.0, 3.0, spot_usd_per_gpu_hour=1.2)
    limits = wait_limits_s(jobs, "constant", 2.0)
    outcome = simulate_pool(jobs, pool_gpus=0, discipline="fifo", wait_limits_s=limits)
    figures = point_figures(jobs, outcome, GridPoint(0, "fifo", "constant", 2.0), spot)
    gpu_hours = jobs.gpu_seconds / H
    assert outcome.is_burst.all() and figures.max_wait_seen_hours == 0
    assert figures.total_usd == pytest.approx(gpu_hours[jobs.is_interruptible].sum() * 1.2
                                              + gpu_hours[~jobs.is_interruptible].sum() * 3.0)
    assert figures.pool_usd == 0 and figures.utilization is None


@pytest.mark.parametrize("discipline", ["fifo", "backfill"])
def test_a_pool_at_peak_with_no_waiting_bursts_nothing(discipline):
    rng = np.random.default_rng(7)
    n = 400
    jobs = PoolJobs("A100", np.sort(rng.integers(0, 200, n) * 600.0),
                    rng.integers(0, 30, n) * 600.0, rng.integers(1, 9, n).astype(np.int64),
                    np.zeros(n, dtype=bool))
    peak = peak_concurrent_gpus(jobs)
    outcome, figures = _run(jobs, peak, discipline, "none", 0.0)
    assert figures.jobs_burst == 0 and figures.burst_usd == 0
    below, _ = _run(jobs, peak - 1, discipline, "none", 0.0)
    assert below.is_burst.any()


def test_nearest_rank_percentile():
    values = np.array([1.0, 2, 3, 4, 5, 6, 7, 8, 9, 10])
    assert nearest_rank(values, 95) == 10 and nearest_rank(values, 50) == 5
    assert nearest_rank(values, 10) == 1


def test_bad_input_raises_value_error_naming_the_field():
    jobs = _jobs(SIX)
    with pytest.raises(ValueError, match="discipline"):
        simulate_pool(jobs, pool_gpus=4, discipline="lifo", wait_limits_s=np.zeros(6))
    with pytest.raises(ValueError, match="policy"):
        wait_limits_s(jobs, "random", 1.0)
    with pytest.raises(ValueError, match="pool_gpus"):
        simulate_pool(jobs, pool_gpus=-1, discipline="fifo", wait_limits_s=np.zeros(6))


_JOB = st.tuples(st.integers(0, 40), st.integers(0, 12), st.integers(1, 6),
                 st.integers(0, 12))


@settings(max_examples=300, deadline=None)
@given(rows=st.lists(_JOB, min_size=1, max_size=30), pool=st.integers(0, 10),
       discipline=st.sampled_from(["fifo", "backfill"]),
       is_inf=st.booleans())
def test_matches_the_brute_force_replay(rows, pool, discipline, is_inf):
    rows = sorted(rows, key=lambda row: row[0])
    submit = [float(r[0]) for r in rows]
    duration = [float(r[1]) for r in rows]
    gpus = [r[2] for r in rows]
    limits = [math.inf if is_inf and r[3] > 8 else float(r[3]) for r in rows]
    jobs = PoolJobs("x", np.array(submit), np.array(duration), np.array(gpus, dtype=np.int64),
                    np.zeros(len(rows), dtype=bool))
    outcome = simulate_pool(jobs, pool_gpus=pool, discipline=discipline,
                            wait_limits_s=np.array(limits))
    burst, begin = brute_force(submit, duration, gpus, limits, pool, discipline)
    assert outcome.is_burst.tolist() == burst
    assert outcome.begin_s.tolist() == begin
