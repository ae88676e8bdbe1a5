"""The sweep grid, its parts and the recommendation rule."""

import math

import numpy as np
import pytest

from planner.capacity.core.frontier import (
    grid_parts,
    parse_hours_list,
    pool_sizes,
    recommend_index,
    sweep_grid,
)
from planner.capacity.core.jobs import PoolJobs
from planner.capacity.core.points import PointFigures


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
