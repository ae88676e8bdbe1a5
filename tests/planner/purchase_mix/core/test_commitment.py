import itertools

import numpy as np
import pytest

from planner.purchase_mix.core.commitment import (
    TermRate,
    on_demand_excess,
    replay_cost_usd,
    solve_commitment,
)

ON_DEMAND_USD_PER_HOUR = 10.0


def _brute_force_single(demand: np.ndarray, rate: float) -> float:
    levels = range(int(np.ceil(demand.max())) + 2)
    return min(
        len(demand) * c * rate + ON_DEMAND_USD_PER_HOUR * np.maximum(demand - c, 0).sum()
        for c in levels
    )


def _brute_force_stack(demand: np.ndarray, terms: list[TermRate]) -> float:
    top = int(np.ceil(demand.max())) + 1
    ranges = [
        range((term.max_instances if term.max_instances is not None else top) + 1) for term in terms
    ]
    best = np.inf
    for levels in itertools.product(*ranges):
        committed = sum(c * t.usd_per_hour for c, t in zip(levels, terms, strict=True))
        cost = (
            len(demand) * committed
            + ON_DEMAND_USD_PER_HOUR * np.maximum(demand - sum(levels), 0).sum()
        )
        best = min(best, cost)
    return float(best)


def _edge_cases() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(11)
    hours = np.arange(24 * 21)
    return {
        "flat": np.full(500, 7.0),
        "spiky": np.where(rng.random(500) < 0.05, 40.0, 2.0),
        "almost_idle": np.where(rng.random(500) < 0.02, 3.0, 0.0),
        "growing": hours / 40.0 + rng.random(len(hours)),
        "diurnal": 10 + 8 * np.sin(hours * 2 * np.pi / 24) + rng.random(len(hours)),
        "zero": np.zeros(48),
    }


def _series(name: str, philly_demand, helios_demand) -> np.ndarray:
    if name == "philly":
        return philly_demand.total_gpus["P100"].to_numpy() / 4.0
    if name == "helios":
        return helios_demand.total_gpus["V100"].to_numpy() / 8.0
    return _edge_cases()[name]


SERIES = ["philly", "helios", *_edge_cases()]


@pytest.mark.parametrize("name", SERIES)
@pytest.mark.parametrize("rate", [2.0, 4.5, 6.5, 9.9])
def test_single_term_matches_brute_force(name, rate, philly_demand, helios_demand):
    demand = _series(name, philly_demand, helios_demand)
    solution = solve_commitment(demand, [TermRate(rate)], ON_DEMAND_USD_PER_HOUR)
    assert solution.cost_usd == pytest.approx(_brute_force_single(demand, rate), rel=1e-12)
    assert solution.cost_usd == pytest.approx(
        replay_cost_usd(demand, solution.levels, [TermRate(rate)], ON_DEMAND_USD_PER_HOUR)
    )


@pytest.mark.parametrize("name", SERIES)
@pytest.mark.parametrize("cap_3y", [None, 0, 3, 20])
def test_stacked_terms_match_brute_force_over_pairs(name, cap_3y, philly_demand, helios_demand):
    demand = _series(name, philly_demand, helios_demand)
    if demand.max() > 60:
        demand = demand / 4.0  # keep the pair enumeration small
    terms = [TermRate(6.2), TermRate(4.2, max_instances=cap_3y)]
    solution = solve_commitment(demand, terms, ON_DEMAND_USD_PER_HOUR)
    assert solution.cost_usd == pytest.approx(_brute_force_stack(demand, terms), rel=1e-12)
    assert solution.cost_usd == pytest.approx(
        replay_cost_usd(demand, solution.levels, terms, ON_DEMAND_USD_PER_HOUR)
    )


def test_uncapped_stack_puts_everything_in_the_cheapest_term():
    demand = np.random.default_rng(3).uniform(5, 15, 300)
    solution = solve_commitment(demand, [TermRate(6.2), TermRate(4.2)], ON_DEMAND_USD_PER_HOUR)
    assert solution.levels[0] == 0
    assert solution.levels[1] > 0


def test_optimum_is_the_discount_quantile():
    demand = np.random.default_rng(5).uniform(0, 100, 2000)
    rate = 4.0
    level = solve_commitment(demand, [TermRate(rate)], ON_DEMAND_USD_PER_HOUR).levels[0]
    # Committing one more instance pays only while demand exceeds it in > rate/p of hours.
    assert (demand > level - 1).mean() >= rate / ON_DEMAND_USD_PER_HOUR
    assert (demand > level).mean() <= rate / ON_DEMAND_USD_PER_HOUR


@pytest.mark.parametrize(
    ("demand", "levels", "expected"),
    [([0.0, 1.0, 2.5, 4.0], [0.0, 1.0, 3.0], [7.5, 4.5, 1.0]), ([2.0], [2.0, 5.0], [0.0, 0.0])],
)
def test_on_demand_excess_table(demand, levels, expected):
    result = on_demand_excess(np.array(demand), np.array(levels))
    np.testing.assert_allclose(result, expected)


def test_bad_rates_raise():
    with pytest.raises(ValueError):
        solve_commitment(np.ones(3), [TermRate(0.0)], 1.0)
    with pytest.raises(ValueError):
        solve_commitment(np.ones(3), [], 0.0)


def test_a_peak_too_high_to_size_is_refused_before_its_arrays_are_allocated() -> None:
    # 125 million levels x 12 terms was 11 GiB: the worker died instead of failing the run
    demand = np.array([8.0, 125_000_000.0, 8.0])
    terms = [TermRate(1.0 + i / 10) for i in range(12)]
    with pytest.raises(ValueError, match=r"would need 14.0 GiB of memory \(15 x 125,000,001 "
                                         r"values\); at most 1.0 GiB per step: check the GPU"):
        solve_commitment(demand, terms, ON_DEMAND_USD_PER_HOUR)
