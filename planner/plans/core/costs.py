"""Cost parts of one training run per option row (vectorized over rows).

For run hours T (wall clock, all nodes busy) an option costs
    total(T) = usd_per_hour * nodes * billed(T) + storage_usd_per_hour * T + fixed_usd
    billed(T) = T                                   on demand, spot
              = max(T, term_hours * (1 - reuse))    reserved / committed / savings plan
    storage_usd_per_hour = stored_gb * usd_per_gb_month / 730   (storage while the run lasts)
    fixed_usd = stored_gb * usd_per_gb_month * retention_months + egress_gb * usd_per_gb
The commitment rule: a single run pays the whole term at the committed rate unless a share
`reuse` of the term is used by other work afterwards. total(T) is non-decreasing in T, so the
P90 cost is total(P90 time) and P(cost > budget) = P(T > hours_at_budget).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import cast

import numpy as np
import pandas as pd

from planner.core.cloud import HOURS_PER_MONTH
from planner.core.purchase_options import PURCHASE_TERM_HOURS
from planner.plans.core.assumptions import PlanAssumptions


@dataclass(frozen=True)
class OptionRates:
    """Per-row cost coefficients (arrays of equal length; USD, hours, instances)."""

    usd_per_hour: np.ndarray  # per instance-hour
    nodes: np.ndarray  # instances billed
    min_billed_hours: np.ndarray  # term_hours * (1 - reuse); 0 for on demand and spot
    storage_usd_per_hour: np.ndarray  # storage billed while the run lasts
    storage_fixed_usd: np.ndarray  # storage billed after the run (retention)
    egress_usd: np.ndarray

    def compute_usd(self, run_hours: np.ndarray) -> np.ndarray:
        """Instance-hours billed × rate × nodes, with the commitment floor."""
        billed = np.maximum(run_hours, self.min_billed_hours)
        return np.asarray(billed * self.usd_per_hour * self.nodes, dtype=np.float64)

    def storage_usd(self, run_hours: np.ndarray) -> np.ndarray:
        return np.asarray(
            self.storage_usd_per_hour * run_hours + self.storage_fixed_usd, dtype=np.float64
        )

    def total_usd(self, run_hours: np.ndarray) -> np.ndarray:
        return cast(
            np.ndarray,
            self.compute_usd(run_hours) + self.storage_usd(run_hours) + self.egress_usd,
        )

    def hours_at_budget(self, budget_usd: float) -> np.ndarray:
        """Largest run hours whose total stays within `budget_usd` (inf if never exceeded,
        negative if even a zero-length run is over budget)."""
        instance_usd_per_hour = self.usd_per_hour * self.nodes
        fixed = self.storage_fixed_usd + self.egress_usd
        floor_usd = instance_usd_per_hour * self.min_billed_hours
        slope_above = instance_usd_per_hour + self.storage_usd_per_hour
        with np.errstate(divide="ignore", invalid="ignore"):
            above = np.where(
                slope_above > 0, (budget_usd - fixed) / slope_above, np.inf
            )
            below = np.where(
                self.storage_usd_per_hour > 0,
                (budget_usd - fixed - floor_usd) / self.storage_usd_per_hour,
                np.where(budget_usd >= fixed + floor_usd, np.inf, -1.0),
            )
        at_floor_usd = floor_usd + self.storage_usd_per_hour * self.min_billed_hours + fixed
        return np.asarray(
            np.where(budget_usd >= at_floor_usd, above, np.minimum(below, self.min_billed_hours)),
            dtype=np.float64,
        )


def min_billed_hours(term_hours: np.ndarray, reuse_fraction: float) -> np.ndarray:
    """Commitment floor per row: term hours × (1 − reuse); 0 for on demand and spot."""
    return np.asarray(term_hours, dtype=np.float64) * (1.0 - reuse_fraction)


def storage_rates(
    stored_gb: float, usd_per_gb_month: np.ndarray, retention_months: float
) -> tuple[np.ndarray, np.ndarray]:
    """(USD per run hour, USD after the run) for `stored_gb` kept during and after the run."""
    per_month = stored_gb * np.asarray(usd_per_gb_month, dtype=np.float64)
    return per_month / HOURS_PER_MONTH, per_month * retention_months


def _lookup(values: pd.Series, mapping: Mapping[str, float], what: str) -> np.ndarray:
    """mapping[value] per row (factorized: one dict lookup per distinct value)."""
    codes, uniques = pd.factorize(values)
    missing = sorted(str(v) for v in uniques if v not in mapping)
    if missing:
        raise ValueError(f"assumptions: no {what} for {missing}")
    return np.array([mapping[v] for v in uniques], dtype=np.float64)[codes]


def option_rates(table: pd.DataFrame, assumptions: PlanAssumptions) -> OptionRates:
    stored_gb = assumptions.dataset_gb + assumptions.checkpoints_kept * assumptions.checkpoint_gb
    storage = _lookup(table["provider"], assumptions.storage_usd_per_gb_month,
                      "storage_usd_per_gb_month of providers")
    egress = _lookup(table["provider"], assumptions.egress_usd_per_gb,
                     "egress_usd_per_gb of providers")
    per_hour, after = storage_rates(stored_gb, storage, assumptions.storage_months)
    term_hours = _lookup(table["purchase_option"], PURCHASE_TERM_HOURS, "term of options")
    return OptionRates(
        usd_per_hour=table["usd_per_hour"].to_numpy(dtype=np.float64),
        nodes=table["nodes"].to_numpy(dtype=np.float64),
        min_billed_hours=min_billed_hours(term_hours, assumptions.commitment_reuse_fraction),
        storage_usd_per_hour=per_hour,
        storage_fixed_usd=after,
        egress_usd=assumptions.egress_gb * egress,
    )


def per_million(usd: np.ndarray, per_second: np.ndarray, hours: np.ndarray) -> np.ndarray:
    """USD per million units trained (units = rate × simulated hours); NaN without a rate."""
    millions = per_second * hours * 3600.0 / 1e6
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(millions > 0, usd / millions, np.nan)
