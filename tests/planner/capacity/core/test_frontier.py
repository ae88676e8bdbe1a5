"""The sweep grid, its parts and the recommendation rule."""

import math

import numpy as np
import pytest

from planner.capacity.core.frontier import (
    NoWaitReference,
    grid_parts,
    parse_hours_list,
    plan_from_points,
    pool_sizes,
    recommend_index,
    sweep_grid,
    sweep_points,
)
from planner.capacity.core.jobs import PoolJobs
from planner.capacity.core.points import PointFigures
from planner.capacity.core.prices import CapacityPrices


def _point(pool: int, total: float, p95: float) -> PointFigures:
    return PointFigures(pool, "fifo", "constant", 2.0, 0, 0, 0, 0, 10, 0, 0, 0, p95, p95, p95,
                        0, None, 1, 0, 0, 0, 0, total)


def test_the_cheapest_point_meeting_the_target_is_recommended():
    points = [_point(0, 100, 0), _point(8, 60, 1.5), _point(16, 50, 3.0), _point(24, 65, 1.0)]
    assert recommend_index(points, 2.0) == 1  # 16 GPUs is cheaper but waits too long
    assert recommend_index(points, 3.0) == 2
    tie = [_point(8, 60, 1.5), _point(24, 60, 1.0)]
    assert recommend_index(tie, 2.0) == 1  # equal cost: the shorter P95 wait


def test_without_a_point_meeting_the_target_the_shortest_wait_is_recommended():
    assert recommend_index([_point(8, 60, 5.0), _point(16, 70, 4.0)], 2.0) == 1


def test_pool_sizes_reach_the_peak_and_hold_the_no_wait_commitments():
    jobs = PoolJobs("x", np.array([0.0, 0.0, 10.0]), np.array([100.0, 50.0, 5.0]),
                    np.array([40, 60, 3]), np.zeros(3, dtype=bool))
    sizes = pool_sizes(jobs, 30, include=(37, 41))
    assert sizes[0] == 0 and sizes[-1] == 103 and {37, 41} <= set(sizes)
    assert len(sizes) <= 30 and list(sizes) == sorted(sizes)


def test_grid_orders_curves_and_gives_none_no_limit():
    grid = sweep_grid([8, 0], ["fifo"], ["none", "constant"], [1.0, math.inf])
    assert [(g.policy, g.max_wait_hours, g.pool_gpus) for g in grid] == [
        ("none", 0.0, 0), ("none", 0.0, 8), ("constant", 1.0, 0), ("constant", 1.0, 8),
        ("constant", math.inf, 0), ("constant", math.inf, 8)]


def test_grid_parts_cover_every_point_once():
    parts = grid_parts(90, 7)
    assert parts[0][0] == 0 and parts[-1][1] == 90
    assert all(a[1] == b[0] for a, b in zip(parts, parts[1:], strict=False))
    assert grid_parts(3, 16) == [(0, 1), (1, 2), (2, 3)]


def test_hours_lists_take_inf_and_refuse_the_rest():
    assert parse_hours_list("1, 4,inf") == (1.0, 4.0, math.inf)
    with pytest.raises(ValueError, match="max_wait_hours"):
        parse_hours_list("1,soon")
    with pytest.raises(ValueError, match="max_wait_hours"):
        parse_hours_list("nan")


def test_a_no_wait_reference_is_priced_as_it_is_bought_and_bursts_like_the_sweep():
    # Two 4-GPU jobs one after the other (0-2 h, 2-4 h) and one 8-GPU job (0-1 h).
    jobs = PoolJobs("x", np.array([0.0, 0.0, 7200.0]), np.array([7200.0, 3600.0, 7200.0]),
                    np.array([4, 8, 4]), np.zeros(3, dtype=bool))
    prices = CapacityPrices(pool_usd_per_gpu_hour=1.0, on_demand_usd_per_gpu_hour=3.0)
    points = sweep_points(jobs, sweep_grid([0, 4], ["fifo"], ["none"], []), prices)
    plan = plan_from_points(jobs, points, prices, target_p95_wait_hours=2, no_wait_references=(
        NoWaitReference("bought", 4, pool_usd_per_hour=6.0), NoWaitReference("swept", 4)))
    bought, swept = plan.against[1].reference, plan.against[2].reference
    assert swept.pool_usd == pytest.approx(4 * 4 * 1.0)  # 4 GPUs x 4 h at the sweep's price
    assert bought.pool_usd == pytest.approx(6.0 * 4)  # its own $6/hour for the 4 h span
    assert bought.burst_usd == swept.burst_usd == pytest.approx(8 * 1 * 3.0)
    assert bought.total_usd == pytest.approx(24 + 24)


def test_the_recommendation_meets_the_target_in_every_job_size_class():
    """Many small jobs hide a few large ones that wait: the cheaper pool's P95 over all jobs
    meets 2 h, but jobs of 8+ GPUs wait 6.7 h at P95; the dearer pool keeps every class
    under 2 h and is the one recommended."""
    from dataclasses import replace

    cheap = replace(_point(200, 100, 0.9), worst_class_p95_wait_hours=6.7)
    dear = replace(_point(216, 107, 0.5), worst_class_p95_wait_hours=1.8)
    assert recommend_index([cheap, dear], 2.0) == 1


def test_waits_by_class_weigh_by_gpu_hours_and_cover_every_class():
    from planner.capacity.core.points import GridPoint, point_figures, replay_point

    # a 1-GPU job and a 64-GPU job on a 64-GPU pool: the small one runs, the big one waits
    # for it (1 h), then a 4-GPU job arrives and waits behind the big one under FIFO.
    jobs = PoolJobs("x", np.array([0.0, 1.0, 2.0]), np.array([3600.0, 7200.0, 60.0]),
                    np.array([1, 64, 4]), np.zeros(3, dtype=bool))
    point = GridPoint(64, "fifo", "constant", math.inf)
    figures = point_figures(jobs, replay_point(jobs, point), point, CapacityPrices(1.0, 3.0))
    by_class = figures.waits_by_class
    assert set(by_class) == {"1 GPU", "2-7 GPUs", "64+ GPUs"}
    assert by_class["1 GPU"]["p95_wait_hours"] == 0
    big = by_class["64+ GPUs"]
    assert big["p95_wait_hours"] == big["max_wait_hours"] == pytest.approx((3600 - 1) / 3600)
    assert big["gpu_hour_weighted_mean_wait_hours"] == pytest.approx((3600 - 1) / 3600)
    assert figures.worst_class_p95_wait_hours == max(
        c["p95_wait_hours"] for c in by_class.values())
    assert figures.to_dict()["waits_by_class"] == by_class


def test_the_no_wait_hourly_demand_is_one_pass_per_history():
    """The gate, the pool's savings and what it would cost read one array (a pass over a
    million jobs takes about 0.3 s), which nobody can change under the others."""
    from planner.capacity.core.jobs import hourly_gpus

    jobs = PoolJobs("x", np.array([0.0, 1800.0]), np.array([3600.0, 3600.0]),
                    np.array([2, 4]), np.zeros(2, dtype=bool))
    hourly = hourly_gpus(jobs)
    assert hourly_gpus(jobs) is hourly
    assert list(hourly) == [4.0, 2.0]  # 2 + 4 x half an hour, then 4 x half an hour
    with pytest.raises(ValueError, match="read-only"):
        hourly[0] = 0.0
