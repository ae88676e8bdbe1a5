"""Seeded synthetic job histories in the generic upload format (for tests and benchmarks)."""

from __future__ import annotations

import os

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.csv as pa_csv

GPU_TYPE_SHARES: tuple[tuple[str, float], ...] = (
    ("A100-80GB", 0.5),
    ("H100-80GB", 0.3),
    ("L4", 0.2),
)
GPU_COUNTS = np.array([1, 2, 4, 8, 16], dtype=np.int32)
GPU_COUNT_SHARES = np.array([0.5, 0.2, 0.15, 0.12, 0.03])


def _start_offsets_s(
    rng: np.random.Generator, n_jobs: int, days: int, growth_over_window: float
) -> np.ndarray:
    """Arrivals with a linear ramp (density ~ 1 + g*x) and a daytime peak."""
    u = rng.random(n_jobs)
    g = growth_over_window
    x = u if g == 0 else (np.sqrt(1.0 + g * (2.0 + g) * u) - 1.0) / g
    day = np.floor(x * days)
    hour_of_day = np.clip(rng.normal(14.0, 4.0, n_jobs), 0.0, 23.999)
    return ((day * 24.0 + hour_of_day) * 3600.0).astype(np.int64)


def synthetic_jobs_table(
    n_jobs: int,
    *,
    seed: int,
    days: int = 90,
    start: str = "2024-01-01",
    interruptible_share: float = 0.3,
    n_teams: int = 12,
    growth_over_window: float = 0.3,
) -> pa.Table:
    """Generic-format jobs: job_id, start, end, gpu_type, gpu_count, interruptible, team.

    Durations are log-normal (median 1.5 h, sigma 1.2, clipped to 1 min .. 14 days).
    """
    if n_jobs <= 0 or days <= 0:
        raise ValueError("n_jobs and days must be > 0")
    rng = np.random.default_rng(seed)
    origin_s = int(pd.Timestamp(start, tz="UTC").timestamp())
    start_s = origin_s + _start_offsets_s(rng, n_jobs, days, growth_over_window)
    duration_s = np.clip(rng.lognormal(np.log(1.5 * 3600), 1.2, n_jobs), 60, 14 * 86400)
    names = [name for name, _ in GPU_TYPE_SHARES]
    shares = np.array([share for _, share in GPU_TYPE_SHARES])
    return pa.table(
        {
            "job_id": pa.array(np.char.add("job-", np.arange(n_jobs).astype(str))),
            "start": pa.array(start_s, pa.timestamp("s", tz="UTC")),
            "end": pa.array(start_s + duration_s.astype(np.int64), pa.timestamp("s", tz="UTC")),
            "gpu_type": pa.array(np.array(names)[rng.choice(len(names), n_jobs, p=shares)]),
            "gpu_count": pa.array(rng.choice(GPU_COUNTS, n_jobs, p=GPU_COUNT_SHARES)),
            "interruptible": pa.array(rng.random(n_jobs) < interruptible_share),
            "team": pa.array(np.char.add("team-", rng.integers(0, n_teams, n_jobs).astype(str))),
        }
    )


def write_synthetic_jobs_csv(
    path: str | os.PathLike[str], n_jobs: int, *, seed: int, days: int = 90
) -> None:
    """Write `synthetic_jobs_table` as a generic-format CSV (ISO-8601 UTC timestamps)."""
    pa_csv.write_csv(synthetic_jobs_table(n_jobs, seed=seed, days=days), str(path))
