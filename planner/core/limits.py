"""THE bounds on what one user's input may ask of a worker: counts and sizes, each with its
value, unit and reason, and the memory check made before a large array is allocated.

Django-free. The upload parser, the demand grid, the commitment solver and the capacity sweep
import their bounds from here, and docs/limits.md lists the same table
(tests/planner/core/test_limits.py checks that every row is documented). A bound is far above
any real fleet, so it never stops real work, and low enough that the work it allows fits in a
worker. (How much one user may create, keep and have queued is planner.fair_shares.)
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


# Each bound once, with its reason; the MAX_* names below read their values from here.
LIMITS: tuple[Limit, ...] = (
    Limit("gpus_per_job", 100_000, "GPUs",
          "above the largest GPU clusters built so far (about 100,000 GPUs in one site); "
          "the largest published training run used 16,384"),
    Limit("gpus_in_use", 1_000_000, "GPUs",
          "GPUs in use at once in a usage series, and a capacity pool size: above any one "
          "fleet (the largest reported, about 350,000 H100 in 2024)"),
    Limit("capacity_points", 2_000, "points",
          "pool sizes x disciplines x policies x wait limits of one capacity sweep"),
    # Two CPU-minutes at ~8 million job replays per second and core.
    Limit("capacity_job_points", 1_000_000_000, "job replays",
          "points x jobs of one capacity sweep: about two CPU-minutes, so one sweep cannot "
          "hold a worker for long"),
    # A serving plan is computed in the request: a log it reads must parse in seconds.
    Limit("request_log_rows", 1_000_000, "requests",
          "rows of one uploaded request log (a serving plan's traffic), parsed in the request: "
          "530,000 rows took 1 to 2 s on a shared 2-core machine"),
    Limit("request_log_days", 400, "days",
          "the span of one request log: the buying rule reads a year of history, and the "
          "hourly series of a longer span would be stored with the plan"),
    # A worker runs with a memory limit per child, and the arrays of one step (and their
    # temporaries) must fit in it together.
    Limit("array_bytes", 1 * GIB, "bytes",
          "the largest array one step of a run may allocate (checked before it is "
          "allocated), so a job fails with a message instead of exhausting the worker"),
)
LIMITS_BY_NAME: dict[str, Limit] = {limit.name: limit for limit in LIMITS}

MAX_GPUS_PER_JOB = int(LIMITS_BY_NAME["gpus_per_job"].value)
MAX_GPUS_IN_USE = int(LIMITS_BY_NAME["gpus_in_use"].value)
MAX_CAPACITY_POINTS = int(LIMITS_BY_NAME["capacity_points"].value)
MAX_CAPACITY_JOB_POINTS = int(LIMITS_BY_NAME["capacity_job_points"].value)
MAX_ARRAY_BYTES = int(LIMITS_BY_NAME["array_bytes"].value)
MAX_REQUEST_LOG_ROWS = int(LIMITS_BY_NAME["request_log_rows"].value)
MAX_REQUEST_LOG_DAYS = int(LIMITS_BY_NAME["request_log_days"].value)


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
