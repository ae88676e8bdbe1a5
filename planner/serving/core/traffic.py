"""A serving plan's traffic over the day: a constant rate, a stated daily profile, or the
profile derived from an uploaded request log (planner.serving.core.request_log).

Every shape ends as 24 hourly Poisson rates (requests/s, hour 0 = 00:00-01:00 UTC for a log;
the user's own clock for a stated profile) whose largest is the peak the fleet is sized for.
A stated profile is a forecast, not a measured history: it carries no hourly history, so the
buying rule's history gate sees zero days of it. Units: requests/s, hours, tokens.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from planner.core import cloud

# Hourly slots of a daily profile (the one hours-per-day fact, as a count).
HOURS_PER_DAY = int(cloud.HOURS_PER_DAY)
# 24 numbers of at most ~30 characters each, with separators: a longer text is refused before
# it is split.
MAX_PROFILE_CHARS = 24 * 32
MAX_PROFILE_WEIGHT = 1.0e9
SOURCES = ("constant", "daily_profile", "request_log")


@dataclass(frozen=True)
class DailyTraffic:
    """24 hourly rates (requests/s), where they came from, and what a log showed.

    `history_rate_per_s` is the measured rate of every hour of a request log, oldest first
    (empty for a constant rate or a stated profile: a forecast, not a history)."""

    hourly_rate_per_s: tuple[float, ...]
    source: str
    history_rate_per_s: tuple[float, ...] = ()
    rows: int = 0
    start: str = ""
    end: str = ""
    prompt_tokens_mean: float = math.nan
    prompt_tokens_p99: float = math.nan
    output_tokens_mean: float = math.nan
    output_tokens_p99: float = math.nan

    def __post_init__(self) -> None:
        if len(self.hourly_rate_per_s) != HOURS_PER_DAY:
            raise ValueError(f"a daily profile has {HOURS_PER_DAY} hourly rates, got "
                             f"{len(self.hourly_rate_per_s)}")
        if not all(math.isfinite(r) and r >= 0 for r in self.hourly_rate_per_s):
            raise ValueError("hourly rates must be finite and >= 0 requests/s")
        if not max(self.hourly_rate_per_s) > 0:
            raise ValueError("at least one hour must have requests")
        if self.source not in SOURCES:
            raise ValueError(f"unknown traffic source {self.source!r}")

    @property
    def peak_rate_per_s(self) -> float:
        return max(self.hourly_rate_per_s)

    @property
    def trough_rate_per_s(self) -> float:
        return min(self.hourly_rate_per_s)

    @property
    def history_days(self) -> float:
        """Days of measured history (0 for a stated profile or a constant rate)."""
        return len(self.history_rate_per_s) / HOURS_PER_DAY


def constant_traffic(rate_per_s: float) -> DailyTraffic:
    """The same Poisson rate every hour."""
    return DailyTraffic((float(rate_per_s),) * HOURS_PER_DAY, "constant")


def parse_daily_profile(text: str) -> tuple[float, ...]:
    """24 comma-separated relative weights (or rates), hour 0 first -> weights scaled so the
    largest is 1. ValueError in words on anything else (count, a non-number, a negative, all
    zero)."""
    if len(text) > MAX_PROFILE_CHARS:
        raise ValueError(f"expected {HOURS_PER_DAY} comma-separated numbers in at most "
                         f"{MAX_PROFILE_CHARS} characters, got {len(text):,}")
    parts = [p.strip() for p in text.replace(";", ",").split(",")]
    if parts and parts[-1] == "":  # a trailing comma
        parts.pop()
    if len(parts) != HOURS_PER_DAY:
        raise ValueError(f"expected {HOURS_PER_DAY} comma-separated numbers (hour 0 to 23), "
                         f"got {len(parts)}")
    weights = []
    for hour, part in enumerate(parts):
        try:
            value = float(part)
        except ValueError:
            raise ValueError(f"hour {hour}: expected a number, got {part!r}") from None
        if not (math.isfinite(value) and 0 <= value <= MAX_PROFILE_WEIGHT):
            raise ValueError(f"hour {hour}: must be between 0 and {MAX_PROFILE_WEIGHT:g}")
        weights.append(value)
    top = max(weights)
    if top <= 0:
        raise ValueError("every hour is 0: at least one hour needs requests")
    return tuple(w / top for w in weights)


def profile_traffic(peak_rate_per_s: float, weights: tuple[float, ...]) -> DailyTraffic:
    """The stated profile: the peak rate times each hour's weight (largest weight 1)."""
    return DailyTraffic(tuple(peak_rate_per_s * w for w in weights), "daily_profile")


def needed_replicas(rate_per_s: float, goodput_per_replica_per_s: float) -> int:
    """Replicas that carry `rate_per_s` within the targets; at least one at every hour (a
    replica started on the first request would miss any TTFT target by its start time)."""
    if goodput_per_replica_per_s <= 0:
        raise ValueError("goodput must be above 0 requests/s per replica")
    return max(1, math.ceil(rate_per_s / goodput_per_replica_per_s - 1e-9))


def hourly_instances(rates_per_s: tuple[float, ...], goodput_per_replica_per_s: float,
                     replicas_per_instance: int,
                     instances_per_replica: int = 1) -> tuple[int, ...]:
    """Whole instances needed at each rate: replicas packed `replicas_per_instance` to an
    instance, or each spanning `instances_per_replica` instances (pipeline stages)."""
    if replicas_per_instance > 1 and instances_per_replica > 1:
        raise ValueError("a replica either shares an instance or spans several, not both")
    return tuple(math.ceil(needed_replicas(r, goodput_per_replica_per_s)
                           / replicas_per_instance) * instances_per_replica
                 for r in rates_per_s)
