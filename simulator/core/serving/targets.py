"""Latency targets, goodput (the highest request rate meeting them) and the knee.

Goodput follows DistServe: requests per second whose TTFT and TPOT meet the targets, here at
P99. The knee is the load of greatest power (Kleinrock): requests/s over median end-to-end
latency; past it more load mostly adds latency.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from simulator.core.serving.engine import Replica, ServingCalibration
from simulator.core.serving.queueing import LoadPoint, Traffic, at_rate, offline_tokens_per_s

BISECTION_STEPS = 18  # 2^-18: the rate to 4 parts in a million of saturation
CURVE_POINTS = 24


@dataclass(frozen=True)
class Targets:
    """P99 limits in seconds; math.inf where there is none."""

    ttft_p99_s: float = math.inf
    tpot_p99_s: float = math.inf
    e2e_p99_s: float = math.inf

    def __post_init__(self) -> None:
        if min(self.ttft_p99_s, self.tpot_p99_s, self.e2e_p99_s) <= 0:
            raise ValueError("latency targets must be positive")

    @property
    def is_bounded(self) -> bool:
        return not all(math.isinf(v) for v in (self.ttft_p99_s, self.tpot_p99_s,
                                                self.e2e_p99_s))

    def met_by(self, point: LoadPoint, output_tokens: float) -> bool:
        e2e = point.ttft_p99_s + output_tokens * point.tpot_p99_s
        return (point.is_stable and point.ttft_p99_s <= self.ttft_p99_s
                and point.tpot_p99_s <= self.tpot_p99_s and e2e <= self.e2e_p99_s)


def saturation_rate(replica: Replica, traffic: Traffic, cal: ServingCalibration) -> float:
    """Requests/s a full replica completes (no latency target)."""
    return offline_tokens_per_s(replica, traffic, cal) / traffic.output_tokens


def goodput_rate(replica: Replica, traffic: Traffic, targets: Targets,
                 cal: ServingCalibration) -> float:
    """Highest Poisson rate (requests/s per replica) whose P99 latencies meet `targets`;
    0 when even a trickle misses them. Bisection (latencies rise with load)."""
    high = saturation_rate(replica, traffic, cal)
    if high <= 0:
        return 0.0
    low = 0.0
    if not targets.met_by(at_rate(replica, traffic, high * 1e-3, cal), traffic.output_tokens):
        return 0.0
    for _ in range(BISECTION_STEPS):
        mid = (low + high) / 2.0
        if targets.met_by(at_rate(replica, traffic, mid, cal), traffic.output_tokens):
            low = mid
        else:
            high = mid
    return low


@dataclass(frozen=True)
class LoadCurve:
    """Latency against load for one replica, up to saturation, and its knee."""

    points: tuple[LoadPoint, ...]
    knee_index: int

    @property
    def knee(self) -> LoadPoint:
        return self.points[self.knee_index]


def load_curve(replica: Replica, traffic: Traffic, cal: ServingCalibration,
               n_points: int = CURVE_POINTS) -> LoadCurve:
    """Stable load points from 2 % to 99 % of the saturation rate; ValueError if none."""
    top = saturation_rate(replica, traffic, cal)
    points = []
    for share in [0.02 + (0.99 - 0.02) * i / (n_points - 1) for i in range(n_points)]:
        point = at_rate(replica, traffic, top * share, cal)
        if point.is_stable:
            points.append(point)
    if not points:
        raise ValueError("the replica cannot serve this traffic")
    power = [p.rate_per_s / (p.ttft_p50_s + traffic.output_tokens * p.tpot_p50_s)
             for p in points]
    return LoadCurve(tuple(points), max(range(len(points)), key=power.__getitem__))
