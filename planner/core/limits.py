"""THE bounds on what one user's input may ask of a worker: counts and sizes, each with its
value, unit and reason, and the memory check made before a large array is allocated.

Django-free. The upload parser, the demand grid, the commitment solver and the capacity sweep
import their bounds from here, and docs/limits.md lists the same table (tests/test_limits.py
checks that every row is documented). A bound is far above any real fleet, so it never stops
real work, and low enough that the work it allows fits in a worker.
"""

from __future__ import annotations

from dataclasses import dataclass

GIB = 1024**3


@dataclass(frozen=True)
class Limit:
    """One bound: `value` in `unit`, and `why` in one sentence (shown in docs/limits.md)."""

    name: str
    value: float
    unit: str
    why: str


# More GPUs than the largest clusters built so far (about 100,000 H100 in one site, 2024);
# the largest published training run used 16,384.
MAX_GPUS_PER_JOB = 100_000
# GPUs in use at once in a usage series, and a capacity pool: more than any one fleet
# (the largest reported, about 350,000 H100 in 2024).
MAX_GPUS_IN_USE = 1_000_000
# Points of one capacity sweep (pool sizes x disciplines x policies x wait limits).
MAX_CAPACITY_POINTS = 2_000
# Points x jobs replayed by one capacity sweep: about two CPU-minutes at ~8 million job
# replays per second and core.
MAX_CAPACITY_JOB_POINTS = 1_000_000_000
# One array a run allocates: a worker runs with a memory limit per child, and the arrays of
# one step (and their temporaries) must fit in it together.
MAX_ARRAY_BYTES = 1 * GIB

LIMITS: tuple[Limit, ...] = (
    Limit("gpus_per_job", MAX_GPUS_PER_JOB, "GPUs",
          "above the largest GPU clusters built so far (about 100,000 GPUs in one site); "
          "the largest published training run used 16,384"),
    Limit("gpus_in_use", MAX_GPUS_IN_USE, "GPUs",
          "GPUs in use at once in a usage series, and a capacity pool size: above any one "
          "fleet (the largest reported, about 350,000 H100 in 2024)"),
    Limit("capacity_points", MAX_CAPACITY_POINTS, "points",
          "pool sizes x disciplines x policies x wait limits of one capacity sweep"),
    Limit("capacity_job_points", MAX_CAPACITY_JOB_POINTS, "job replays",
          "points x jobs of one capacity sweep: about two CPU-minutes, so one sweep cannot "
          "hold a worker for long"),
    Limit("array_bytes", MAX_ARRAY_BYTES, "bytes",
          "the largest array one step of a run may allocate (checked before it is "
          "allocated), so a job fails with a message instead of exhausting the worker"),
)
LIMITS_BY_NAME: dict[str, Limit] = {limit.name: limit for limit in LIMITS}


def in_gib(n_bytes: float) -> str:
    """Bytes in GiB, or in MiB below one GiB."""
    if n_bytes < GIB:
        return f"{n_bytes / 1024**2:,.1f} MiB"
    return f"{n_bytes / GIB:,.1f} GiB"


def check_array_bytes(shape: tuple[int, ...], what: str, advice: str, *, item_bytes: int = 8,
                      copies: int = 1) -> None:
    """Raise ValueError saying what, how much and `advice` (what the user can change) when
    `copies` arrays of `shape` (items of `item_bytes` bytes) would need more than
    MAX_ARRAY_BYTES; call it before allocating them."""
    n_items = 1
    for size in shape:
        n_items *= max(int(size), 0)
    needed = n_items * item_bytes * copies
    if needed > MAX_ARRAY_BYTES:
        dims = " x ".join(f"{int(size):,}" for size in shape)
        raise ValueError(
            f"{what} would need {in_gib(needed)} of memory ({dims} values); at most "
            f"{in_gib(MAX_ARRAY_BYTES)} per step: {advice}")
