import numpy as np
import pandas as pd
import pytest

from planner.purchase_mix.core.savings_plan import savings_plan_cost_usd, solve_savings_plan

ON_DEMAND = {"A": 10.0, "B": 4.0, "C": 2.0}
PLAN = {"A": 6.0, "B": 3.0, "C": 1.9}


def _breakpoint_optimum(demand: pd.DataFrame) -> float:
    """Exact brute force: cost(b) is convex piecewise linear with kinks where an hour's
    greedy fill (deepest discount first) completes a type; evaluate every kink and 0."""
    order = sorted(demand.columns, key=lambda name: -ON_DEMAND[name] / PLAN[name])
    spend = np.cumsum([demand[name].to_numpy() * PLAN[name] for name in order], axis=0)
    candidates = np.unique(np.concatenate([[0.0], spend.ravel()]))
    return min(savings_plan_cost_usd(demand, b, ON_DEMAND, PLAN)[0] for b in candidates)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_lp_matches_brute_force(seed):
    rng = np.random.default_rng(seed)
    demand = pd.DataFrame({name: rng.integers(0, 6, 48) * rng.random(48) for name in ON_DEMAND})
    solution = solve_savings_plan(demand, ON_DEMAND, PLAN)
    assert solution.cost_usd == pytest.approx(_breakpoint_optimum(demand), rel=1e-7)
    replayed, _ = savings_plan_cost_usd(demand, solution.commitment_usd_per_hour, ON_DEMAND, PLAN)
    assert replayed == pytest.approx(solution.cost_usd, rel=1e-7)


def test_grid_check_on_a_small_case():
    demand = pd.DataFrame({"A": [2.0, 2.0, 0.0, 1.0], "B": [0.0, 3.0, 3.0, 1.0]})
    solution = solve_savings_plan(demand, {"A": 10.0, "B": 4.0}, {"A": 6.0, "B": 3.0})
    grid = np.linspace(0, 25, 2501)
    costs = [
        savings_plan_cost_usd(demand, b, {"A": 10.0, "B": 4.0}, {"A": 6.0, "B": 3.0})[0]
        for b in grid
    ]
    assert solution.cost_usd <= min(costs) + 1e-9
    assert solution.cost_usd == pytest.approx(min(costs), abs=1e-6)


def test_missing_rate_raises():
    with pytest.raises(ValueError):
        solve_savings_plan(pd.DataFrame({"A": [1.0]}), {"A": 1.0}, {})
