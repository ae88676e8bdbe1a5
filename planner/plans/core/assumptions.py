"""What a plan assumes (PlanAssumptions) and what the user allows (PlanConstraints)."""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field

from planner.core.providers import (
    DEFAULT_EGRESS_USD_PER_GB,
    DEFAULT_SPOT_HAZARD_BY_GPU,
    DEFAULT_SPOT_HAZARD_PER_INSTANCE_HOUR,
    DEFAULT_STORAGE_USD_PER_GB_MONTH,
)
from planner.core.purchase_options import PURCHASE_OPTION_CODES


@dataclass(frozen=True)
class PlanAssumptions:
    """Every assumption of the plan; units in the names. Defaults and their origins in
    planner.core.cloud.

    Storage: (dataset_gb + checkpoints_kept × checkpoint_gb) is billed while the run lasts and
    for `storage_months` after it. Egress: `egress_gb` leaves the provider once (the trained
    model, logs). Checkpoint write hours = checkpoint_gb / min(checkpoint_write_gbytes_per_s
    × nodes, checkpoint_max_aggregate_gbytes_per_s) / 3600 (each node writes its shard; the
    storage service caps the aggregate; 20 GB/s is an assumption, not a published limit).
    `restart_overhead_hours` (re-acquire capacity, reload) is billed. Commitment rows pay
    max(run hours, term hours × (1 − commitment_reuse_fraction)): 0 = this run alone pays
    the whole term; 0.75 = other work uses three quarters of the term after this run.
    Monte Carlo: `monte_carlo_samples` per spot run at most, `max_total_samples` over all
    runs (time budget), `seed` for numpy's default_rng.
    """

    dataset_gb: float = 0.0
    checkpoint_gb: float = 0.0
    checkpoints_kept: int = 2  # latest plus the one being written
    storage_months: float = 1.0  # retention after the run
    egress_gb: float = 0.0
    storage_usd_per_gb_month: Mapping[str, float] = field(
        default_factory=lambda: dict(DEFAULT_STORAGE_USD_PER_GB_MONTH))
    egress_usd_per_gb: Mapping[str, float] = field(
        default_factory=lambda: dict(DEFAULT_EGRESS_USD_PER_GB))
    spot_hazard_per_instance_hour: Mapping[str, float] = field(
        default_factory=lambda: dict(DEFAULT_SPOT_HAZARD_PER_INSTANCE_HOUR))
    spot_hazard_per_instance_hour_by_gpu: Mapping[str, Mapping[str, float]] = field(
        default_factory=lambda: {k: dict(v) for k, v in DEFAULT_SPOT_HAZARD_BY_GPU.items()})
    checkpoint_write_gbytes_per_s: float = 2.0  # per node
    checkpoint_max_aggregate_gbytes_per_s: float = 20.0
    restart_overhead_hours: float = 0.25
    commitment_reuse_fraction: float = 0.0
    monte_carlo_samples: int = 2000
    max_total_samples: int = 1_000_000
    seed: int = 0

    def __post_init__(self) -> None:
        amounts = (self.dataset_gb, self.checkpoint_gb, self.checkpoints_kept,
                   self.storage_months, self.egress_gb, self.restart_overhead_hours)
        if not all(math.isfinite(v) and v >= 0 for v in amounts):
            raise ValueError("sizes, months and restart hours must be finite and >= 0")
        if not (self.checkpoint_write_gbytes_per_s > 0
                and self.checkpoint_max_aggregate_gbytes_per_s > 0):
            raise ValueError("checkpoint write bandwidths must be > 0")
        if not 0.0 <= self.commitment_reuse_fraction <= 1.0:
            raise ValueError("commitment_reuse_fraction must be in [0, 1]")
        if self.monte_carlo_samples < 1 or self.max_total_samples < 1:
            raise ValueError("monte_carlo_samples and max_total_samples must be >= 1")
        nested = [dict(v) for v in self.spot_hazard_per_instance_hour_by_gpu.values()]
        for rates in (self.storage_usd_per_gb_month, self.egress_usd_per_gb,
                      self.spot_hazard_per_instance_hour, *nested):
            if not all(math.isfinite(v) and v >= 0 for v in rates.values()):
                raise ValueError("per-provider rates and hazards must be finite and >= 0")


@dataclass(frozen=True)
class PlanConstraints:
    """Deadline (hours), budget (USD), CO2e (kg) and allowed sets; None = no limit. GPUs
    match exactly or by model prefix ("H100" matches "H100 SXM5-80GB")."""

    deadline_hours: float | None = None
    budget_usd: float | None = None
    providers: Collection[str] | None = None
    regions: Collection[str] | None = None
    gpus: Collection[str] | None = None
    purchase_options: Collection[str] | None = None
    # Options longer than this (hours) are "impractical" when no deadline is set.
    horizon_hours: float | None = 365.0 * 24.0
    allow_estimated_prices: bool = False
    allow_unlikely_capacity: bool = False
    # A card says "meets the deadline" only at or below this chance of missing it (0-1).
    miss_threshold: float = 0.10
    # Region codes preferred, first first: among equal prices the earlier region ranks first.
    preferred_regions: tuple[str, ...] = ()
    # Options whose expected CO2e (kg) is above this, or unknown, are left out.
    max_co2e_kg: float | None = None

    def __post_init__(self) -> None:
        if not 0.0 <= self.miss_threshold <= 1.0:
            raise ValueError("miss_threshold must be between 0 and 1")
        for name in ("deadline_hours", "budget_usd", "horizon_hours", "max_co2e_kg"):
            value = getattr(self, name)
            if value is not None and not (math.isfinite(value) and value > 0):
                raise ValueError(f"{name} must be > 0")
        for name in ("providers", "regions", "gpus", "purchase_options"):
            if isinstance(getattr(self, name), str):
                raise ValueError(f"{name} must be a collection of names, not one string")
        unknown = set(self.purchase_options or ()) - set(PURCHASE_OPTION_CODES)
        if unknown:
            raise ValueError(f"unknown purchase options: {sorted(unknown)}")
