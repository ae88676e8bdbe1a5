import math

import numpy as np
import pytest

from planner.plans.core.spot_risk import (
    SpotRuns,
    erfc,
    lognormal_exceed_probability,
    lognormal_from_p10_p90,
    poisson_counts,
    sample_exceed_probability,
    sorted_quantile,
    sorted_run_samples,
    sum_of_uniforms,
)


def test_erfc_matches_the_standard_library():
    x = np.concatenate([np.linspace(-6, 6, 241), [-np.inf, np.inf]])
    exact = np.array([math.erfc(v) for v in x])
    assert np.allclose(erfc(x), exact, rtol=2e-7, atol=1e-12)


@pytest.mark.parametrize(("p10", "p90"), [(80.0, 125.0), (10.0, 10.0), (1.0, 50.0)])
def test_lognormal_fit_reproduces_p10_and_p90(p10, p90):
    mu, sigma = lognormal_from_p10_p90(np.array([p10]), np.array([p90]))
    below = lognormal_exceed_probability(mu, sigma, np.array([p10, p90, 0.0, np.inf]))
    if p10 == p90:
        assert below.tolist() == [0.0, 0.0, 1.0, 0.0]
    else:
        assert below == pytest.approx([0.9, 0.1, 1.0, 0.0], abs=1e-6)


@pytest.mark.parametrize("k", [0, 1, 2, 3, 4, 10, 50])
def test_sum_of_uniforms_has_irwin_hall_moments(k):
    rng = np.random.default_rng(3)
    draws = sum_of_uniforms(rng, np.full(200_000, k))
    assert draws.mean() == pytest.approx(k / 2, abs=0.01)
    assert draws.var() == pytest.approx(k / 12, abs=0.01 * max(k, 1))
    assert draws.min() >= 0 and draws.max() <= k


@pytest.mark.parametrize("mean, normal", [(0.3, False), (7.0, False), (150.0, True),
                                           (5000.0, True)])
def test_interruption_counts_have_the_poisson_mean_and_variance(mean, normal):
    """Exact Poisson for few interruptions, its normal approximation for many: either way a
    whole number >= 0 with mean and variance equal to the expected count."""
    rng = np.random.default_rng(11)
    counts = poisson_counts(rng, np.full((2, 100_000), mean), np.array([normal, normal]))
    assert counts.min() >= 0 and np.array_equal(counts, np.rint(counts))
    assert counts.mean() == pytest.approx(mean, rel=0.01, abs=0.01)
    assert counts.var() == pytest.approx(mean, rel=0.03)


def test_sample_exceed_probability_matches_direct_count():
    rng = np.random.default_rng(5)
    samples = np.sort(rng.gamma(3.0, 40.0, (30, 57)), axis=1)
    runs = rng.integers(0, 30, 400)
    thresholds = np.concatenate([rng.uniform(-10, 400, 398), [np.inf, -np.inf]])
    direct = (samples[runs] > thresholds[:, None]).mean(axis=1)
    assert np.allclose(sample_exceed_probability(samples, runs, thresholds), direct)


def test_sorted_quantile_matches_numpy():
    rng = np.random.default_rng(1)
    samples = np.sort(rng.normal(size=(7, 201)), axis=1)
    for q in (0.1, 0.5, 0.9):
        assert np.allclose(sorted_quantile(samples, q), np.quantile(samples, q, axis=1))


def test_monte_carlo_mean_matches_the_analytic_expectation():
    runs = SpotRuns(
        work_hours=np.array([400.0, 1000.0]), log_mu=np.log([400.0, 1000.0]),
        log_sigma=np.zeros(2), checkpoint_hours=np.array([0.05, 0.2]),
        job_hazard_per_hour=np.array([0.01, 0.002]), restart_hours=0.5)
    samples = runs.sample_hours(np.random.default_rng(0), 40_000)
    assert samples.mean(axis=1) == pytest.approx(runs.expected_hours(), rel=2e-3)


def _runs(hazard: float) -> SpotRuns:
    return SpotRuns(
        work_hours=np.array([400.0, 1000.0]), log_mu=np.log([400.0, 1000.0]),
        log_sigma=np.array([0.1, 0.2]), checkpoint_hours=np.array([0.05, 0.2]),
        job_hazard_per_hour=np.array([hazard, 0.002]), restart_hours=0.5)


def test_replanning_the_same_runs_reuses_their_draws_and_other_runs_get_their_own():
    """A plan re-run under another deadline or budget reads the same sorted draws (so each
    spot option keeps its P50/P90 time); another hazard or seed draws anew."""
    first = sorted_run_samples(_runs(0.01), 500, seed=0)
    assert sorted_run_samples(_runs(0.01), 500, seed=0) is first
    assert not first.flags.writeable
    assert np.all(np.diff(first, axis=1) >= 0)
    expected = np.sort(_runs(0.01).sample_hours(np.random.default_rng(0), 500), axis=1)
    assert np.allclose(first, expected, rtol=1e-6)
    other_hazard = sorted_run_samples(_runs(0.05), 500, seed=0)
    other_seed = sorted_run_samples(_runs(0.01), 500, seed=1)
    assert other_hazard is not first and other_seed is not first
    assert other_hazard[0].mean() > first[0].mean()
    assert not np.array_equal(other_seed, first)
