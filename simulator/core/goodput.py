"""Goodput: the share of wall-clock time a long training run spends on useful steps.

whole-run time = steady-state time / goodput, with (Young/Daly first-order model)

    goodput = 1 / (1 + eval + production + C/τ + λ·(R + τ/2)),   τ = sqrt(2·C/λ)

λ = failures per GPU-hour × GPUs (failures per hour of the job; hardware and software, on any
purchase option: spot interruptions come on top, in the plan's spot model), C = seconds to
write one checkpoint (a blocking stall), R = seconds to detect a failure, re-queue and reload,
τ = the Young/Daly checkpoint interval (planner.core.spot.young_interval_hours), eval = periodic
evaluation, production = the rest a production run loses beyond the failure model (data
stalls, loss-spike rollbacks, slow nodes, batch ramp-up), fitted on whole_runs.csv. Failures
grow with cluster size, lost work with the checkpoint interval; a run shorter than one
interval writes no checkpoint (C/τ term 0) and loses half its own length per failure.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, replace
from typing import Any

import numpy as np
import numpy.typing as npt

from planner.core.spot import young_interval_hours

SECONDS_PER_HOUR = 3600.0
# Llama 3 paper (Dubey et al. 2024, §3.3.4): 419 unexpected interruptions in a 54-day
# snapshot on 16,384 H100 GPUs -> 419 / (54·24·16384) GPU-hours.
LLAMA3_FAILURES_PER_GPU_HOUR = 419.0 / (54.0 * 24.0 * 16384.0)


@dataclass(frozen=True)
class GoodputAssumptions:
    """Editable reliability and overhead assumptions of a training run.

    failures_per_gpu_hour: job-interrupting failures per GPU-hour (Llama 3 report default).
    restart_seconds: detect, reschedule and reload after a failure.
    checkpoint_write_seconds: blocking time to write one checkpoint.
    eval_overhead_fraction: periodic evaluation as a share of training time (assumption: 1%).
    production_overhead_fraction: what a production run loses beyond failures and evaluation
    (data stalls, loss-spike rollbacks, slow nodes, ramp-up), as a share of steady time; 0 for
    benchmark timings (MLPerf), the calibration's fitted value for whole runs
    (`whole_run_goodput`).
    Restart (5 min) and checkpoint (30 s) defaults are assumptions, set so that the Llama 3
    setting (16,384 GPUs) gives about the >90% effective training time that paper reports.
    """

    failures_per_gpu_hour: float = LLAMA3_FAILURES_PER_GPU_HOUR
    restart_seconds: float = 300.0
    checkpoint_write_seconds: float = 30.0
    eval_overhead_fraction: float = 0.01
    production_overhead_fraction: float = 0.0
    # Goodput at most this (the well-run profile's effective training time); 1 = no cap.
    effective_time_cap: float = 1.0

    def __post_init__(self) -> None:
        values = (self.failures_per_gpu_hour, self.restart_seconds,
                  self.checkpoint_write_seconds, self.eval_overhead_fraction,
                  self.production_overhead_fraction)
        if min(values) < 0 or not all(math.isfinite(v) for v in values):
            raise ValueError("goodput assumptions must be finite and >= 0")
        if not 0.0 < self.effective_time_cap <= 1.0:
            raise ValueError("effective_time_cap must be in (0, 1]")

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe dict (shown beside every time prediction)."""
        return asdict(self)


NO_FAILURES = GoodputAssumptions(0.0, 0.0, 0.0, 0.0)


def goodput_fraction(n_gpus: npt.ArrayLike, steady_seconds: npt.ArrayLike,
                     assumptions: GoodputAssumptions) -> npt.NDArray[np.float64]:
    """Goodput in (0, 1] for jobs of `n_gpus` GPUs running `steady_seconds` of useful steps.

    Vectorized: arrays broadcast. Invariant: 1 with NO_FAILURES; falls as GPUs or failure rate grow.
    """
    gpus = np.asarray(n_gpus, dtype=np.float64)
    steady = np.maximum(np.asarray(steady_seconds, dtype=np.float64), 1e-9)
    rate = assumptions.failures_per_gpu_hour * gpus / SECONDS_PER_HOUR  # failures per second
    write = assumptions.checkpoint_write_seconds
    daly = checkpoint_interval_seconds(write, rate)
    # A run shorter than one Daly interval writes no checkpoint and loses half itself on a failure.
    checkpoint = np.where(steady > daly, write / np.maximum(daly, 1e-9), 0.0)
    failures = rate * (assumptions.restart_seconds + np.minimum(daly, steady) / 2.0)
    overhead = assumptions.eval_overhead_fraction + assumptions.production_overhead_fraction
    fraction = 1.0 / (1.0 + overhead + checkpoint + failures)
    return np.asarray(np.minimum(fraction, assumptions.effective_time_cap), dtype=np.float64)


def failure_goodput(n_gpus: npt.ArrayLike, steady_seconds: npt.ArrayLike,
                    assumptions: GoodputAssumptions) -> npt.NDArray[np.float64]:
    """The modelled part alone: goodput with only failures, restarts and checkpoint stalls
    (no evaluation, production overhead or cap), so 1/failure_goodput − 1 is what failures
    and restarts add and the rest of 1/goodput − 1 is the production overhead."""
    modelled = replace(assumptions, eval_overhead_fraction=0.0,
                       production_overhead_fraction=0.0, effective_time_cap=1.0)
    return goodput_fraction(n_gpus, steady_seconds, modelled)


def checkpoint_interval_seconds(write_seconds: float,
                                failures_per_second: npt.NDArray[np.float64]
                                ) -> npt.NDArray[np.float64]:
    """Young/Daly interval sqrt(2·C·MTBF) in seconds (very large without failures)."""
    mtbf = 1.0 / np.maximum(failures_per_second, 1e-300)
    hours = young_interval_hours(write_seconds / SECONDS_PER_HOUR, mtbf / SECONDS_PER_HOUR)
    return np.asarray(hours * SECONDS_PER_HOUR, dtype=np.float64)


def whole_run_goodput(production_overhead_fraction: float,
                      base: GoodputAssumptions | None = None) -> GoodputAssumptions:
    """Assumptions of a whole production run: `base` (defaults) with the production overhead."""
    return replace(base or GoodputAssumptions(),
                   production_overhead_fraction=production_overhead_fraction)


@dataclass(frozen=True)
class GoodputProfile:
    """A named way to set the production overhead of a whole run (the failure model is the
    same in every profile). `effective_time_cap` None: the calibration's fitted overhead."""

    code: str
    label: str
    meaning: str
    effective_time_cap: float | None
    sources: tuple[str, ...] = ()


# Published effective training time (share of wall-clock time spent on useful steps) of
# well-run large clusters; not fitted to any run the accuracy page scores.
WELL_RUN_EFFECTIVE_TIME = 0.90
GOODPUT_PROFILES: dict[str, GoodputProfile] = {p.code: p for p in (
    GoodputProfile(
        "well_run", "Well-run cluster",
        f"at most {WELL_RUN_EFFECTIVE_TIME:.0%} effective training time: failures, restarts "
        f"and checkpoints as modelled, the rest of the gap to {WELL_RUN_EFFECTIVE_TIME:.0%} as "
        "production overhead (evaluation, data stalls, rollbacks); not fitted to any scored run",
        WELL_RUN_EFFECTIVE_TIME,
        ("Dubey et al. 2024, The Llama 3 Herd of Models, §3.3.4: >90 % effective training "
         "time on 16,384 H100 GPUs",
         "Jiang et al. 2024, MegaScale (NSDI '24): effective training time rate above 90 % "
         "on more than 10,000 GPUs")),
    GoodputProfile(
        "typical", "Typical (fitted)",
        "the production overhead fitted on published whole runs (whole_runs.csv): data "
        "stalls, loss-spike rollbacks, slow nodes, ramp-up and layouts slower than planned",
        None, ("whole_runs.csv fit, shown on the accuracy page",)),
    GoodputProfile("custom", "Custom", "the production overhead you give", None, ()),
)}


def profile_goodput(code: str, production_fit: float,
                    settings: dict[str, float] | None = None) -> GoodputAssumptions:
    """Whole-run goodput assumptions of a profile: well_run caps goodput at its effective
    training time with no fitted overhead; typical and custom start from the fit; `settings`
    (GoodputAssumptions fields the user gave) apply on top. ValueError on an unknown code."""
    if code not in GOODPUT_PROFILES:
        raise ValueError(f"goodput_profile: {code!r} is not one of {', '.join(GOODPUT_PROFILES)}")
    cap = GOODPUT_PROFILES[code].effective_time_cap
    base = (GoodputAssumptions(effective_time_cap=cap) if cap is not None
            else whole_run_goodput(production_fit))
    return replace(base, **(settings or {}))


def goodput_profile_summary(code: str) -> dict[str, Any]:
    """A goodput profile as the page, report and command state it: code, label, what it
    means, its effective-time cap (0-1, None: fitted) and its sources."""
    profile = GOODPUT_PROFILES[code]
    return {"code": profile.code, "label": profile.label, "meaning": profile.meaning,
            "effective_time_cap": profile.effective_time_cap, "sources": list(profile.sources)}
