"""Fit a Calibration to published runs with a small numpy Nelder-Mead (no scipy in core).

The objective is the sum of squared log errors of predicted speed (throughput, or inverse
time) plus a weak ridge pull toward the starting point, in transformed coordinates (logit for
fractions, log for positive scales). Layouts of blank rows are chosen once, with `initial`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from simulator.core.arrays import FloatArray
from simulator.core.calibration import Calibration
from simulator.core.hardware import GpuSpec
from simulator.core.validation import (
    PreparedRuns,
    RowTargets,
    predict_targets,
    prepare_runs,
    speed_ratio,
)

# (field, transform): "logit" keeps a fraction in (0, 1), "log" keeps a scale positive.
FITTED_FIELDS: tuple[tuple[str, str], ...] = (
    ("efficiency_llm", "logit"), ("efficiency_bert", "logit"), ("efficiency_resnet", "logit"),
    ("ridge_multiple", "log"), ("traffic_factor", "log"), ("network_efficiency", "logit"),
    ("overlap_fraction", "logit"), ("hop_latency_us", "log"), ("simt_factor", "log"),
    ("run_overhead_seconds", "log"), ("ring_full_bandwidth_nodes", "log"),
)
RIDGE = 0.02
ROBUST_SCALE = 0.15
MAX_EVALUATIONS = 4000
RESTARTS = 2


def encode(cal: Calibration) -> FloatArray:
    """Calibration -> unconstrained vector."""
    values = [getattr(cal, name) for name, _ in FITTED_FIELDS]
    return np.array([np.log(v / (1 - v)) if kind == "logit" else np.log(v)
                     for v, (_, kind) in zip(values, FITTED_FIELDS, strict=True)])


def decode(x: FloatArray, base: Calibration) -> Calibration:
    """Unconstrained vector -> Calibration (other fields from `base`)."""
    values: dict[str, Any] = {name: float(1 / (1 + np.exp(-v)) if kind == "logit" else np.exp(v))
                              for v, (name, kind) in zip(x, FITTED_FIELDS, strict=True)}
    return replace(base, **values)


def _simplex_step(f: Callable[[FloatArray], float], simplex: FloatArray,
                  values: FloatArray) -> int:
    """One Nelder-Mead move on sorted (simplex, values), in place; returns evaluations used."""
    centroid = simplex[:-1].mean(axis=0)
    worst = simplex[-1]
    reflected = centroid + (centroid - worst)
    f_r = f(reflected)
    if f_r < values[0]:
        expanded = centroid + 2.0 * (centroid - worst)
        f_e = f(expanded)
        simplex[-1], values[-1] = (expanded, f_e) if f_e < f_r else (reflected, f_r)
        return 2
    if f_r < values[-2]:
        simplex[-1], values[-1] = reflected, f_r
        return 1
    contracted = centroid + 0.5 * (worst - centroid)
    f_c = f(contracted)
    if f_c < values[-1]:
        simplex[-1], values[-1] = contracted, f_c
        return 2
    simplex[1:] = simplex[0] + 0.5 * (simplex[1:] - simplex[0])
    values[1:] = [f(x) for x in simplex[1:]]
    return 1 + len(simplex)


def nelder_mead(f: Callable[[FloatArray], float], x0: FloatArray, *, step: float = 0.5,
                max_evaluations: int = MAX_EVALUATIONS, tolerance: float = 1e-9) -> FloatArray:
    """Minimize `f` from `x0`; deterministic. Returns the best point found."""
    simplex = np.vstack([x0, x0 + step * np.eye(len(x0))])
    values = np.array([f(x) for x in simplex])
    used = len(simplex)
    while used < max_evaluations:
        order = np.argsort(values)
        simplex, values = simplex[order], values[order]
        if values[-1] - values[0] < tolerance:
            break
        used += _simplex_step(f, simplex, values)
    return np.asarray(simplex[np.argmin(values)])


def soft_l1(residuals: FloatArray, scale: float = ROBUST_SCALE) -> FloatArray:
    """Robust loss: quadratic below `scale`, linear above, so a few runs that no physics
    here explains (e.g. 2021 DeepSpeed ZeRO-3 at 1,500 GPUs) cannot dominate the fit."""
    return 2.0 * scale**2 * (np.sqrt(1.0 + (residuals / scale) ** 2) - 1.0)


def _objective(prepared: PreparedRuns, base: Calibration) -> Callable[[FloatArray], float]:
    arrays, targets = prepared.arrays, RowTargets.of(prepared)
    x0 = encode(base)

    def objective(x: FloatArray) -> float:
        predicted = predict_targets(arrays, targets, decode(x, base))
        errors = speed_ratio(targets.metric, predicted, targets.reported)
        return float(np.sum(soft_l1(errors)) + RIDGE * np.sum((x - x0) ** 2))

    return objective


def fit_prepared(prepared: PreparedRuns, initial: Calibration) -> Calibration:
    """Fit FITTED_FIELDS on prepared rows, then set residual quantiles and n_rows."""
    objective = _objective(prepared, initial)
    x = encode(initial)
    for _ in range(RESTARTS):
        x = nelder_mead(objective, x)
    fitted = decode(x, initial)
    return with_residual_quantiles(prepared, fitted)


def with_residual_quantiles(prepared: PreparedRuns, cal: Calibration) -> Calibration:
    """Store P10/P90 of log(reported/predicted speed) over the predictable rows."""
    targets = RowTargets.of(prepared)
    predicted = predict_targets(prepared.arrays, targets, cal)
    residuals = -speed_ratio(targets.metric, predicted, targets.reported)
    p10, p90 = np.quantile(residuals, [0.1, 0.9])
    return replace(cal, log_residual_p10=float(p10), log_residual_p90=float(p90),
                   n_rows=len(residuals))


def fit_calibration(runs_df: pd.DataFrame, gpus: pd.DataFrame | Mapping[str, GpuSpec],
                    initial: Calibration | None = None) -> Calibration:
    """Fit the efficiency model on reference runs (reference_runs.csv schema).

    `gpus` is a gpus.csv-style DataFrame or a name -> GpuSpec mapping. Deterministic: the same
    inputs give the same Calibration (the shipped calibration.json comes from this call with
    the defaults).
    """
    start = initial or Calibration()
    return fit_prepared(prepare_runs(runs_df, gpus, start), start)
