"""Which instance type to buy a GPU type on, and its cheaper equivalent elsewhere.

Candidates are current on-demand prices (USD per instance-hour). Big demand (P90 of hourly
average concurrent GPUs at or above BIG_DEMAND_GPUS) is bought on 8-GPU nodes, small demand
on nodes no larger than it needs, when such nodes exist.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from planner.core.formatting import label

BIG_DEMAND_GPUS = 8.0


@dataclass(frozen=True)
class InstanceCandidate:
    """One current on-demand price: `key` identifies it to the caller (a price id)."""

    key: int
    usd_per_hour: float
    gpus_per_instance: int
    provider: str = ""
    region: str = ""
    instance_type: str = ""
    gpu_words: str = ""  # "A100 SXM4-40GB"

    @property
    def usd_per_gpu_hour(self) -> float:
        return self.usd_per_hour / self.gpus_per_instance


def fits_demand(gpus_per_instance: int, p90_gpus: float) -> bool:
    """8-GPU nodes for big demand; nodes no larger than the demand needs for small demand."""
    if p90_gpus >= BIG_DEMAND_GPUS:
        return gpus_per_instance >= BIG_DEMAND_GPUS
    return gpus_per_instance <= max(1, math.ceil(p90_gpus))


def choose_on_demand(
    candidates: Sequence[InstanceCandidate], p90_gpus: float
) -> InstanceCandidate | None:
    """Cheapest on-demand USD/GPU-hour among the nodes that fit the demand (all nodes when
    none fits); ties go to fewer GPUs per node, then the lower key."""
    preferred = [c for c in candidates if fits_demand(c.gpus_per_instance, p90_gpus)]
    rows = preferred or list(candidates)
    return min(rows, key=lambda c: (c.usd_per_gpu_hour, c.gpus_per_instance, c.key), default=None)


@dataclass(frozen=True)
class ElsewhereRate:
    """The cheapest on-demand equivalent outside the chosen place, per instance of the
    chosen size (its USD/GPU-hour times the chosen node's GPUs), in words."""

    usd_per_hour: float
    words: str


def elsewhere_rate(chosen: InstanceCandidate, other: InstanceCandidate | None
                   ) -> ElsewhereRate | None:
    """None when there is no other place or it is the chosen price itself. The words state the
    other machine's GPU variant (SXM or PCIe) and GPUs per machine, beside the chosen one's."""
    if other is None or other.key == chosen.key:
        return None
    each = "1 GPU" if other.gpus_per_instance == 1 else f"{other.gpus_per_instance} GPUs"
    return ElsewhereRate(
        other.usd_per_gpu_hour * chosen.gpus_per_instance,
        f"{label(other.provider)} {other.region} ({other.instance_type}: {each} per machine, "
        f"{other.gpu_words or 'same GPU'}; you buy {chosen.gpu_words or 'the GPU'} with "
        f"{chosen.gpus_per_instance} per machine)",
    )
