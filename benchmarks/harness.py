"""Timing helpers shared by the benchmark scripts: percentiles over repeated calls."""

import socket
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Timing:
    label: str
    runs: int
    p50_ms: float
    p95_ms: float
    max_ms: float

    def line(self) -> str:
        return (
            f"{self.label:<58} n={self.runs:<4} p50 {self.p50_ms:8.1f} ms   "
            f"p95 {self.p95_ms:8.1f} ms   max {self.max_ms:8.1f} ms"
        )


def percentile(values: list[float], pct: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(pct / 100 * (len(ordered) - 1))))
    return ordered[index]


def time_calls(label: str, call: Callable[[], object], runs: int, warmup: int = 2) -> Timing:
    for _ in range(warmup):
        call()
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        call()
        samples.append((time.perf_counter() - start) * 1000)
    return Timing(label, runs, percentile(samples, 50), percentile(samples, 95), max(samples))


def median(values: list[float]) -> float:
    return statistics.median(values)


def free_port() -> int:
    """A TCP port on loopback that nothing listens on (for a benchmark's own server)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])
