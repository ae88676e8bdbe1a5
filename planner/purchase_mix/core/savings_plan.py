"""Dollar-per-hour savings plan across GPU types, solved as a linear program (scipy HiGHS).

A plan of b USD/h is spent every hour. In hour h, covered usage u_{h,t} (instance-hours of
type t) costs the plan rate s_t out of b; the rest runs on demand at p_t:
    minimize  H*b + sum_{h,t} p_t * (x_{h,t} - u_{h,t})
    s.t.      sum_t s_t * u_{h,t} <= b  (each hour),  0 <= u_{h,t} <= x_{h,t},  b >= 0.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import sparse
from scipy.optimize import linprog


@dataclass(frozen=True)
class SavingsPlanOffer:
    """A savings plan term and its rate per instance-hour for each eligible GPU type."""

    term: str
    term_years: float
    usd_per_hour_by_gpu_type: Mapping[str, float]

    def __post_init__(self) -> None:
        if self.term_years <= 0:
            raise ValueError("term_years must be > 0")
        if any(rate <= 0 for rate in self.usd_per_hour_by_gpu_type.values()):
            raise ValueError("savings plan rates must be > 0")


@dataclass(frozen=True)
class SavingsPlanSolution:
    commitment_usd_per_hour: float
    cost_usd: float  # plan + uncovered on-demand, over the hours given
    covered_instance_hours: Mapping[str, float]


def _check_inputs(
    demand: pd.DataFrame, on_demand: Mapping[str, float], plan: Mapping[str, float]
) -> None:
    missing = [name for name in demand.columns if name not in on_demand or name not in plan]
    if missing:
        raise ValueError(f"no on-demand or plan rate for {missing}")
    if len(demand) == 0:
        raise ValueError("no demand hours")
    if (demand.to_numpy() < 0).any():
        raise ValueError("demand must be >= 0")


def solve_savings_plan(
    demand_instances: pd.DataFrame,
    on_demand_usd_per_hour: Mapping[str, float],
    plan_usd_per_hour: Mapping[str, float],
) -> SavingsPlanSolution:
    """Optimal plan commitment for demand (hours x GPU types, in instances)."""
    _check_inputs(demand_instances, on_demand_usd_per_hour, plan_usd_per_hour)
    names = [str(name) for name in demand_instances.columns]
    demand = demand_instances.to_numpy(dtype=np.float64)
    n_hours, n_types = demand.shape
    on_demand = np.array([on_demand_usd_per_hour[name] for name in names])
    plan = np.array([plan_usd_per_hour[name] for name in names])
    objective = np.concatenate([[float(n_hours)], -np.tile(on_demand, n_hours)])
    rows = np.repeat(np.arange(n_hours), n_types + 1)
    cols = np.column_stack(
        [
            np.zeros(n_hours, dtype=np.int64),
            1 + np.arange(n_hours * n_types).reshape(n_hours, n_types),
        ]
    ).ravel()
    values = np.tile(np.concatenate([[-1.0], plan]), n_hours)
    constraints = sparse.csr_matrix((values, (rows, cols)), shape=(n_hours, 1 + n_hours * n_types))
    bounds = np.column_stack(
        [np.zeros(1 + demand.size), np.concatenate([[np.inf], demand.ravel()])]
    )
    result = linprog(
        objective, A_ub=constraints, b_ub=np.zeros(n_hours), bounds=bounds, method="highs"
    )
    if result.status != 0:
        raise ValueError(f"savings plan LP failed: {result.message}")
    covered = result.x[1:].reshape(n_hours, n_types)
    cost = float(result.fun + (demand * on_demand).sum())
    return SavingsPlanSolution(
        float(result.x[0]), cost, {name: float(covered[:, i].sum()) for i, name in enumerate(names)}
    )


def savings_plan_cost_usd(
    demand_instances: pd.DataFrame,
    commitment_usd_per_hour: float,
    on_demand_usd_per_hour: Mapping[str, float],
    plan_usd_per_hour: Mapping[str, float],
) -> tuple[float, np.ndarray]:
    """Replay a fixed plan: each hour covers types with the deepest discount first.

    Returns (cost USD, covered instance-hours array hours x types).
    """
    _check_inputs(demand_instances, on_demand_usd_per_hour, plan_usd_per_hour)
    names = [str(name) for name in demand_instances.columns]
    demand = demand_instances.to_numpy(dtype=np.float64)
    on_demand = np.array([on_demand_usd_per_hour[name] for name in names])
    plan = np.array([plan_usd_per_hour[name] for name in names])
    budget = np.full(len(demand), float(commitment_usd_per_hour))
    covered = np.zeros_like(demand)
    for column in np.argsort(-(on_demand / plan), kind="stable"):
        if on_demand[column] <= plan[column]:
            continue
        covered[:, column] = np.minimum(demand[:, column], budget / plan[column])
        budget -= covered[:, column] * plan[column]
    uncovered_usd = ((demand - covered) * on_demand).sum()
    return float(len(demand) * commitment_usd_per_hour + uncovered_usd), covered
