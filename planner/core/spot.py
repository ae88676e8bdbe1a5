"""Spot placement for interruptible jobs: expected checkpoint and rework overhead.

First-order model (Young 1974): a job on N instances with hazard lambda per instance-hour
sees interruptions at rate N*lambda, mean time between them M = 1/(N*lambda). With a
checkpoint write time C the checkpoint interval is tau = sqrt(2*C*M) and the expected
overhead per useful hour is C/tau + (tau/2 + R)/M, R = restart time (re-acquire capacity,
reload). Spot is chosen only if spot rate * (1 + overhead) < on-demand rate.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class CheckpointPolicy:
    """Checkpoint write time and restart time, in hours."""

    checkpoint_write_hours: float = 0.05
    restart_hours: float = 0.5

    def __post_init__(self) -> None:
        if self.checkpoint_write_hours < 0 or self.restart_hours < 0:
            raise ValueError("checkpoint and restart times must be >= 0")


@dataclass(frozen=True)
class SpotPlan:
    spot_usd_per_hour: float
    instances_per_job: float
    mean_hours_between_interruptions: float | None  # None = no interruptions expected
    checkpoint_interval_hours: float | None
    overhead_fraction: float  # extra instance-hours per useful instance-hour
    effective_usd_per_hour: float  # spot rate * (1 + overhead), per useful instance-hour
    is_chosen: bool

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def young_interval_hours(
    checkpoint_hours: float | np.ndarray, mtbf_hours: float | np.ndarray
) -> np.ndarray:
    """Young's (1974) checkpoint interval sqrt(2 * C * M), hours, element-wise."""
    return np.sqrt(2.0 * np.asarray(checkpoint_hours, dtype=np.float64) * mtbf_hours)


def expected_overhead(mtbf_hours: float, policy: CheckpointPolicy) -> tuple[float, float]:
    """(checkpoint interval hours, overhead fraction) for a given mean time between failures."""
    interval_hours = float(young_interval_hours(policy.checkpoint_write_hours, mtbf_hours))
    if interval_hours == 0.0:
        return 0.0, policy.restart_hours / mtbf_hours
    overhead = (
        policy.checkpoint_write_hours / interval_hours
        + (interval_hours / 2.0 + policy.restart_hours) / mtbf_hours
    )
    return interval_hours, overhead


def plan_spot(
    *,
    spot_usd_per_hour: float,
    interruptions_per_hour: float,
    on_demand_usd_per_hour: float,
    instances_per_job: float,
    policy: CheckpointPolicy,
) -> SpotPlan:
    """Expected effective spot cost per useful instance-hour and whether it beats on-demand."""
    if spot_usd_per_hour < 0 or interruptions_per_hour < 0 or instances_per_job <= 0:
        raise ValueError("spot rate and hazard must be >= 0 and job size > 0")
    mtbf_hours: float | None = None
    interval_hours: float | None = None
    overhead = 0.0
    job_hazard_per_hour = interruptions_per_hour * instances_per_job
    if job_hazard_per_hour > 0:
        mtbf_hours = 1.0 / job_hazard_per_hour
        interval_hours, overhead = expected_overhead(mtbf_hours, policy)
    effective = spot_usd_per_hour * (1.0 + overhead)
    return SpotPlan(
        spot_usd_per_hour,
        instances_per_job,
        mtbf_hours,
        interval_hours,
        overhead,
        effective,
        effective < on_demand_usd_per_hour,
    )


DEFAULT_CHECKPOINT_POLICY = CheckpointPolicy()
