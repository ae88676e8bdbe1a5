"""Run time of a training job: the simulator's uncertainty band and spot interruptions.

Work hours W (time to train with no interruption) are lognormal, fitted to the simulator's
P10 and P90 (mu = mean of the two logs, sigma = half their distance / z90).
On spot, a job on N instances with hazard lambda per instance-hour sees interruptions at rate
N*lambda (MTBF M = 1/(N*lambda)). It checkpoints every tau = sqrt(2*C*M) hours of work (Young
1974, the rule of planner.core.spot.expected_overhead; capped at W so a short job writes at
least one checkpoint), C = checkpoint write hours. Then
    T_base = W * (1 + C/tau)                       (work plus checkpoint writes)
    K ~ Poisson(N*lambda * T_base)                 (interruptions)
    T = T_base + K*R + tau * sum_{i<=K} U_i        (restart R each, rework U ~ U(0, 1) of tau)
    E[T] = E[W] * (1 + C/tau) * (1 + N*lambda*(R + tau/2)),
the first-order overhead C/tau + (tau/2 + R)/M of spot.expected_overhead plus its cross term.
Zero hazard means no checkpoints and T = W exactly.
Sampling: a run expecting NORMAL_POISSON_MEAN or more interruptions draws K from the
Poisson's normal approximation (skewness 1/sqrt(mean) <= 0.1, beside a lognormal W whose
spread is tens of %); the rework sum is exact up to EXACT_REWORK_TERMS uniforms and a
moment-matched normal above. The sorted samples depend on the runs, the sample count and the
seed, never on the deadline or budget: a process keeps the last SAMPLE_SETS_KEPT of them, so
re-planning one workload under other limits reuses its draws.
"""

from __future__ import annotations

import hashlib
import math
import threading
from collections import OrderedDict
from dataclasses import dataclass

import numpy as np
import pandas as pd

from planner.core.purchase_options import SPOT
from planner.core.spot import young_interval_hours
from planner.plans.core.assumptions import PlanAssumptions, PlanConstraints
from planner.plans.core.costs import OptionRates

Z90 = 1.2815515655446004  # standard normal 90th percentile
EXACT_REWORK_TERMS = 3  # sum of up to 3 uniforms drawn exactly; more: moment-matched normal
NORMAL_POISSON_MEAN = 100.0  # runs expecting this many interruptions or more: normal counts


def lognormal_from_p10_p90(p10_hours: np.ndarray, p90_hours: np.ndarray) -> tuple[np.ndarray,
                                                                                   np.ndarray]:
    """(mu, sigma) of the lognormal whose 10th and 90th percentiles are the given hours."""
    log10, log90 = np.log(p10_hours), np.log(p90_hours)
    return (log10 + log90) / 2.0, (log90 - log10) / (2.0 * Z90)


def lognormal_exceed_probability(
    mu: np.ndarray, sigma: np.ndarray, threshold_hours: np.ndarray
) -> np.ndarray:
    """P(W > threshold) for lognormal W; thresholds may be <= 0 (probability 1) or inf (0)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        log_t = np.log(np.maximum(threshold_hours, 0.0))
        z = np.where(sigma > 0, (log_t - mu) / (sigma * math.sqrt(2.0)), np.inf)
    # a point mass (P10 = P90) exceeds only thresholds clearly below it (float round trip)
    z = np.where(sigma > 0, z, np.where(mu > log_t + 1e-12, -np.inf, np.inf))
    return np.asarray(0.5 * erfc(z), dtype=np.float64)


def erfc(x: np.ndarray) -> np.ndarray:
    """Complementary error function, fractional error < 1.2e-7 (Numerical Recipes erfcc)."""
    z = np.abs(x)
    t = 1.0 / (1.0 + 0.5 * z)
    poly = -1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418 + t * (
        -0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (
            -0.82215223 + t * 0.17087277))))))))
    with np.errstate(invalid="ignore"):
        value = t * np.exp(-z * z + poly)
    value = np.where(np.isinf(z), 0.0, value)
    return np.asarray(np.where(x >= 0, value, 2.0 - value), dtype=np.float64)


def checkpoint_interval_hours(
    checkpoint_hours: np.ndarray, job_hazard_per_hour: np.ndarray, work_hours: np.ndarray
) -> np.ndarray:
    """Young's interval sqrt(2*C/(N*lambda)) capped at the work; inf with no hazard."""
    with np.errstate(divide="ignore"):
        young = young_interval_hours(checkpoint_hours, 1.0 / job_hazard_per_hour)
    return np.where(job_hazard_per_hour > 0, np.minimum(young, work_hours), np.inf)


@dataclass(frozen=True)
class SpotRuns:
    """One entry per distinct (configuration, hazard); arrays of equal length, hours."""

    work_hours: np.ndarray  # the simulator's point estimate, taken as E[W]
    log_mu: np.ndarray
    log_sigma: np.ndarray
    checkpoint_hours: np.ndarray  # C, one checkpoint write
    job_hazard_per_hour: np.ndarray  # N * lambda
    restart_hours: float  # R, re-acquire capacity and reload

    def interval_hours(self) -> np.ndarray:
        return checkpoint_interval_hours(
            self.checkpoint_hours, self.job_hazard_per_hour, self.work_hours
        )

    def checkpoint_factor(self) -> np.ndarray:
        """1 + C/tau; 1 when nothing is checkpointed (no hazard or free checkpoints)."""
        tau = self.interval_hours()
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(tau > 0, self.checkpoint_hours / tau, 0.0)
        return np.asarray(1.0 + np.where(np.isfinite(tau), ratio, 0.0), dtype=np.float64)

    def rework_interval_hours(self) -> np.ndarray:
        """tau where interruptions happen, 0 otherwise (so 0 * inf never appears)."""
        tau = self.interval_hours()
        return np.where(np.isfinite(tau), tau, 0.0)

    def expected_hours(self) -> np.ndarray:
        """E[T] = E[W] (1 + C/tau) (1 + N lambda (R + tau/2))."""
        per_interruption = self.restart_hours + self.rework_interval_hours() / 2.0
        return np.asarray(
            self.work_hours
            * self.checkpoint_factor()
            * (1.0 + self.job_hazard_per_hour * per_interruption),
            dtype=np.float64,
        )

    def sample_hours(self, rng: np.random.Generator, n_samples: int) -> np.ndarray:
        """Monte Carlo run hours, shape (runs, n_samples)."""
        shape = (len(self.work_hours), n_samples)
        work = np.exp(self.log_mu[:, None] + self.log_sigma[:, None] * rng.standard_normal(shape))
        base = work * self.checkpoint_factor()[:, None]
        expected = self.job_hazard_per_hour * self.work_hours * self.checkpoint_factor()
        counts = poisson_counts(rng, base * self.job_hazard_per_hour[:, None],
                                expected >= NORMAL_POISSON_MEAN)
        rework = self.rework_interval_hours()[:, None] * sum_of_uniforms(rng, counts)
        return np.asarray(base + counts * self.restart_hours + rework, dtype=np.float64)


def poisson_counts(rng: np.random.Generator, means: np.ndarray,
                   normal_rows: np.ndarray) -> np.ndarray:
    """Poisson counts of the given means (runs, samples); rows flagged in `normal_rows` take
    the normal approximation round(mean + sqrt(mean) Z), floored at 0."""
    counts = np.empty(means.shape, dtype=np.float64)
    exact = ~normal_rows
    if exact.any():
        counts[exact] = rng.poisson(means[exact])
    if normal_rows.any():
        large = means[normal_rows]
        counts[normal_rows] = np.maximum(
            np.rint(large + np.sqrt(large) * rng.standard_normal(large.shape)), 0.0)
    return counts


def sum_of_uniforms(rng: np.random.Generator, counts: np.ndarray) -> np.ndarray:
    """Sum of `counts` U(0, 1) draws per element: exact up to EXACT_REWORK_TERMS, above that
    a normal with the same mean k/2 and variance k/12, clipped to [0, k]."""
    k = np.asarray(counts, dtype=np.float64)
    total = k / 2.0 + np.sqrt(k / 12.0) * rng.standard_normal(k.shape)
    np.clip(total, 0.0, k, out=total)
    flat_k, flat_total = k.reshape(-1), total.reshape(-1)
    few = np.flatnonzero((flat_k > 0) & (flat_k <= EXACT_REWORK_TERMS))
    if few.size:
        uniforms = rng.random((EXACT_REWORK_TERMS, few.size))
        terms = np.arange(EXACT_REWORK_TERMS)[:, None] < flat_k[few]
        flat_total[few] = (uniforms * terms).sum(axis=0)
    return total


def sorted_quantile(sorted_samples: np.ndarray, q: float) -> np.ndarray:
    """Linear-interpolated quantile of each row of an already sorted (runs, samples) array."""
    position = q * (sorted_samples.shape[1] - 1)
    low = int(math.floor(position))
    high = min(low + 1, sorted_samples.shape[1] - 1)
    weight = position - low
    return np.asarray(
        sorted_samples[:, low] * (1.0 - weight) + sorted_samples[:, high] * weight,
        dtype=np.float64,
    )


def sample_exceed_probability(
    sorted_samples: np.ndarray, run_index: np.ndarray, threshold_hours: np.ndarray
) -> np.ndarray:
    """P(T > threshold) per option row from its run's sorted samples (one searchsorted call:
    each run's samples are shifted into their own disjoint band of the number line)."""
    n_runs, n_samples = sorted_samples.shape
    top = float(sorted_samples[:, -1].max())
    span = top + 2.0
    flat = (sorted_samples + span * np.arange(n_runs)[:, None]).ravel()
    thresholds = np.clip(threshold_hours, -0.5, top + 1.0)
    below = np.searchsorted(flat, run_index * span + thresholds, side="right")
    return np.asarray(1.0 - (below - run_index * n_samples) / n_samples, dtype=np.float64)


MIN_SAMPLES_PER_RUN = 200


@dataclass(frozen=True)
class RunTimes:
    """Per option row, hours (and probabilities)."""

    expected_hours: np.ndarray
    p10_hours: np.ndarray
    p50_hours: np.ndarray
    p90_hours: np.ndarray
    deadline_miss_probability: np.ndarray
    budget_overrun_probability: np.ndarray
    miss_probability: np.ndarray  # P(misses the deadline or overruns the budget)
    checkpoint_interval_hours: np.ndarray  # NaN where nothing is checkpointed for spot
    expected_interruptions: np.ndarray


def _hazard_for(provider: str, gpu: str, assumptions: PlanAssumptions) -> float:
    by_gpu = assumptions.spot_hazard_per_instance_hour_by_gpu.get(provider, {})
    name = gpu.lower()
    for key, hazard in by_gpu.items():
        if name == key.lower() or name.startswith(key.lower() + " "):
            return float(hazard)
    if provider not in assumptions.spot_hazard_per_instance_hour:
        raise ValueError(f"assumptions: no spot hazard for provider {provider!r}")
    return float(assumptions.spot_hazard_per_instance_hour[provider])


def spot_hazards(table: pd.DataFrame, assumptions: PlanAssumptions) -> np.ndarray:
    """Hazard per instance-hour of every spot row (0 for other rows)."""
    spot = (table["purchase_option"] == SPOT).to_numpy()
    hazards = np.zeros(len(table), dtype=np.float64)
    if not spot.any():
        return hazards
    pairs = table.loc[spot, ["provider", "gpu"]].astype(str)
    codes, uniques = pd.MultiIndex.from_frame(pairs).factorize()
    lookup = np.array([_hazard_for(p, g, assumptions) for p, g in uniques], dtype=np.float64)
    hazards[spot] = lookup[codes]
    return hazards


def _samples_per_run(n_runs: int, assumptions: PlanAssumptions) -> int:
    """Fewer samples per run when there are many runs, never below MIN_SAMPLES_PER_RUN
    (unless monte_carlo_samples asks for fewer)."""
    share = assumptions.max_total_samples // max(n_runs, 1)
    return int(min(assumptions.monte_carlo_samples, max(MIN_SAMPLES_PER_RUN, share)))


def _checkpoint_hours(nodes: np.ndarray, assumptions: PlanAssumptions) -> np.ndarray:
    bandwidth = np.minimum(assumptions.checkpoint_write_gbytes_per_s * nodes,
                           assumptions.checkpoint_max_aggregate_gbytes_per_s)
    return np.asarray(assumptions.checkpoint_gb / bandwidth / 3600.0, dtype=np.float64)


def _thresholds(n_rows: int, rates: OptionRates,
                constraints: PlanConstraints) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Run hours beyond which a row misses the deadline, the budget, either."""
    deadline = np.full(n_rows, constraints.deadline_hours or np.inf)
    budget = (np.full(n_rows, np.inf) if constraints.budget_usd is None
              else rates.hours_at_budget(constraints.budget_usd))
    return deadline, budget, np.minimum(deadline, budget)


def run_times(table: pd.DataFrame, cfg_rows: np.ndarray, rates: OptionRates,
               assumptions: PlanAssumptions, constraints: PlanConstraints) -> tuple[RunTimes, int]:
    """Analytic lognormal times for every row, then Monte Carlo for spot rows with hazard."""
    point = table["time_to_train_hours"].to_numpy(dtype=np.float64)
    p10 = table["time_to_train_p10_hours"].to_numpy(dtype=np.float64)
    p90 = table["time_to_train_p90_hours"].to_numpy(dtype=np.float64)
    mu, sigma = lognormal_from_p10_p90(p10, p90)
    thresholds = _thresholds(len(table), rates, constraints)
    columns = {
        "expected_hours": point.copy(), "p10_hours": p10.copy(), "p50_hours": np.exp(mu),
        "p90_hours": p90.copy(),
        "deadline_miss_probability": lognormal_exceed_probability(mu, sigma, thresholds[0]),
        "budget_overrun_probability": lognormal_exceed_probability(mu, sigma, thresholds[1]),
        "miss_probability": lognormal_exceed_probability(mu, sigma, thresholds[2]),
        "checkpoint_interval_hours": np.full(len(table), np.nan),
        "expected_interruptions": np.zeros(len(table)),
    }
    hazards = spot_hazards(table, assumptions)
    spot = np.flatnonzero(hazards > 0)
    n_samples = 0
    if spot.size:
        runs, codes = _spot_runs(table, cfg_rows, spot, hazards, mu, sigma, assumptions)
        n_samples = _samples_per_run(len(runs.work_hours), assumptions)
        samples = sorted_run_samples(runs, n_samples, assumptions.seed)
        _fill_spot(columns, spot, codes, runs, samples, thresholds)
    return RunTimes(**columns), n_samples


SINGLE_PRECISION_MAX_HOURS = 1e30  # sorted in float32 below this (its top is ~3.4e38)


def _sorted_samples(samples: np.ndarray) -> np.ndarray:
    """Each run's samples sorted: in single precision (7 significant digits, far finer than
    the Monte Carlo error; twice as fast as double) unless a sample is out of its range."""
    if float(np.max(samples)) < SINGLE_PRECISION_MAX_HOURS:
        return np.sort(samples.astype(np.float32), axis=1).astype(np.float64)
    return np.sort(samples, axis=1)


SAMPLE_SETS_KEPT = 2  # sorted sample sets kept per process (5 MB for 312 runs x 2,000)
_sample_sets: OrderedDict[bytes, np.ndarray] = OrderedDict()
_sample_sets_lock = threading.Lock()


def sorted_run_samples(runs: SpotRuns, n_samples: int, seed: int) -> np.ndarray:
    """Each run's Monte Carlo hours, sorted (runs, n_samples), read-only: drawn with `seed`,
    or the same draws kept from an earlier call with the same runs, count and seed."""
    digest = hashlib.blake2b(repr((n_samples, seed, runs.restart_hours)).encode())
    for values in (runs.work_hours, runs.log_mu, runs.log_sigma, runs.checkpoint_hours,
                   runs.job_hazard_per_hour):
        digest.update(np.ascontiguousarray(values, dtype=np.float64).tobytes())
    key = digest.digest()
    with _sample_sets_lock:
        kept = _sample_sets.get(key)
        if kept is not None:
            _sample_sets.move_to_end(key)
            return kept
    samples = _sorted_samples(runs.sample_hours(np.random.default_rng(seed), n_samples))
    samples.setflags(write=False)
    with _sample_sets_lock:
        _sample_sets[key] = samples
        while len(_sample_sets) > SAMPLE_SETS_KEPT:
            _sample_sets.popitem(last=False)
    return samples


def _spot_runs(table: pd.DataFrame, cfg_rows: np.ndarray, spot: np.ndarray,
               hazards: np.ndarray, mu: np.ndarray, sigma: np.ndarray,
               assumptions: PlanAssumptions) -> tuple[SpotRuns, np.ndarray]:
    """Distinct (configuration, hazard) runs of the spot rows and each row's run index."""
    codes, _ = pd.MultiIndex.from_arrays([cfg_rows[spot], hazards[spot]]).factorize()
    codes = np.asarray(codes)
    first = np.empty(int(codes.max()) + 1, dtype=np.int64)
    first[codes[::-1]] = spot[::-1]
    nodes = table["nodes"].to_numpy(dtype=np.float64)[first]
    runs = SpotRuns(
        work_hours=table["time_to_train_hours"].to_numpy(dtype=np.float64)[first],
        log_mu=mu[first],
        log_sigma=sigma[first],
        checkpoint_hours=_checkpoint_hours(nodes, assumptions),
        job_hazard_per_hour=hazards[first] * nodes,
        restart_hours=assumptions.restart_overhead_hours,
    )
    return runs, codes


def _fill_spot(columns: dict[str, np.ndarray], spot: np.ndarray, codes: np.ndarray,
               runs: SpotRuns, samples: np.ndarray,
               thresholds: tuple[np.ndarray, np.ndarray, np.ndarray]) -> None:
    columns["expected_hours"][spot] = runs.expected_hours()[codes]
    for name, q in (("p10_hours", 0.1), ("p50_hours", 0.5), ("p90_hours", 0.9)):
        columns[name][spot] = sorted_quantile(samples, q)[codes]
    names = ("deadline_miss_probability", "budget_overrun_probability", "miss_probability")
    for name, threshold in zip(names, thresholds, strict=True):
        columns[name][spot] = sample_exceed_probability(samples, codes, threshold[spot])
    columns["checkpoint_interval_hours"][spot] = runs.rework_interval_hours()[codes]
    interruptions = runs.job_hazard_per_hour * runs.work_hours * runs.checkpoint_factor()
    columns["expected_interruptions"][spot] = interruptions[codes]
