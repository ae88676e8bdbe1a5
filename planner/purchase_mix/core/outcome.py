"""Replayed cost and the metrics clouds report (coverage, utilization, savings)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from planner.core.serialize import json_safe


@dataclass(frozen=True)
class ReplayOutcome:
    """Cost of a purchase mix replayed over hourly demand. GPU-hours and USD over the window.

    coverage_pct = committed GPU-hours used / demand GPU-hours; utilization_pct = committed
    GPU-hours used / committed GPU-hours bought (None without a commitment); effective rate = cost /
    demand GPU-hours; savings are against running all demand on demand.
    """

    demand_gpu_hours: float
    interruptible_gpu_hours: float
    committed_gpu_hours: float
    committed_gpu_hours_used: float
    on_demand_gpu_hours: float
    spot_gpu_hours: float
    commitment_cost_usd: float
    on_demand_cost_usd: float
    spot_cost_usd: float
    all_on_demand_cost_usd: float
    cost_usd: float = 0.0
    savings_usd: float = 0.0
    savings_pct: float | None = None
    coverage_pct: float | None = None
    utilization_pct: float | None = None
    effective_usd_per_gpu_hour: float | None = None

    def to_dict(self) -> dict[str, Any]:
        result: dict[str, Any] = json_safe(self)
        return result


ADDITIVE_FIELDS = (
    "demand_gpu_hours",
    "interruptible_gpu_hours",
    "committed_gpu_hours",
    "committed_gpu_hours_used",
    "on_demand_gpu_hours",
    "spot_gpu_hours",
    "commitment_cost_usd",
    "on_demand_cost_usd",
    "spot_cost_usd",
    "all_on_demand_cost_usd",
)


def _pct(numerator: float, denominator: float) -> float | None:
    return 100.0 * numerator / denominator if denominator > 0 else None


def make_outcome(**additive: float) -> ReplayOutcome:
    """Build an outcome from its additive parts, deriving cost, savings and ratios."""
    cost = (
        additive["commitment_cost_usd"] + additive["on_demand_cost_usd"] + additive["spot_cost_usd"]
    )
    savings = additive["all_on_demand_cost_usd"] - cost
    return ReplayOutcome(
        **{name: float(additive[name]) for name in ADDITIVE_FIELDS},
        cost_usd=float(cost),
        savings_usd=float(savings),
        savings_pct=_pct(savings, additive["all_on_demand_cost_usd"]),
        coverage_pct=_pct(additive["committed_gpu_hours_used"], additive["demand_gpu_hours"]),
        utilization_pct=_pct(additive["committed_gpu_hours_used"], additive["committed_gpu_hours"]),
        effective_usd_per_gpu_hour=(
            cost / additive["demand_gpu_hours"] if additive["demand_gpu_hours"] > 0 else None
        ),
    )


def sum_outcomes(outcomes: list[ReplayOutcome]) -> ReplayOutcome:
    totals = {name: 0.0 for name in ADDITIVE_FIELDS}
    for outcome in outcomes:
        for name in ADDITIVE_FIELDS:
            totals[name] += getattr(outcome, name)
    return make_outcome(**totals)
