import numpy as np
import pytest

from planner.plans.core.costs import OptionRates, min_billed_hours, storage_rates


def _rates(rng, n):
    per_hour, after = storage_rates(500.0, rng.uniform(0, 0.2, n), 2.0)
    floors = min_billed_hours(rng.choice([0.0, 8760.0, 26280.0], n), 0.97)
    return OptionRates(usd_per_hour=rng.uniform(1, 50, n), nodes=rng.integers(1, 9, n) * 1.0,
                       min_billed_hours=floors, storage_usd_per_hour=per_hour,
                       storage_fixed_usd=after, egress_usd=rng.uniform(0, 100, n))


def test_storage_rates_by_hand():
    per_hour, after = storage_rates(100.0, np.array([0.023]), 1.5)
    assert per_hour[0] * 730 == pytest.approx(2.3) and after[0] == pytest.approx(3.45)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_hours_at_budget_inverts_total_cost(seed):
    rng = np.random.default_rng(seed)
    rates = _rates(rng, 500)
    budget = 20_000.0
    hours = rates.hours_at_budget(budget)
    inside = (hours >= 0) & np.isfinite(hours)
    finite_hours = np.where(inside, hours, 0.0)
    assert np.allclose(rates.total_usd(finite_hours)[inside], budget)
    # just past the threshold the budget is exceeded; negative = over even at zero hours
    assert (rates.total_usd(finite_hours + 1e-6)[inside] > budget).all()
    assert (rates.total_usd(np.zeros(500))[hours < 0] > budget).all()
    assert inside.any() and (hours < 0).any()
