"""Fit a Calibration to published runs: MAP estimate with priors, numpy Nelder-Mead.

The objective is the family-weighted sum of a robust loss of log speed errors (throughput, or
inverse time) plus a Gaussian prior on every fitted knob, in transformed coordinates (logit for
fractions, log for positive scales). Row weights are 1/sqrt(rows of its family), so a family of
200 rows weighs about 14 single-row families, not 200. Layouts of blank rows are chosen once,
with `initial`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from simulator.core.arrays import FloatArray
from simulator.core.calibration import Calibration
from simulator.core.domain import CalibrationDomain, domain_from_points
from simulator.core.hardware import EFFICIENCY_CLASSES, GpuSpec
from simulator.core.prediction import (
    PreparedRuns,
    Progress,
    RowTargets,
    predict_targets,
    prepare_runs,
    progress_span,
)

# (field, transform, prior value, prior sd in transformed units). Efficiencies: large-GEMM
# fractions seen in cuBLAS/NCCL-era benchmarks (A100 ~0.65-0.7, H100 bf16 ~0.6, fp8 ~0.45 of
# the fp8 peak i.e. ~1.5x bf16); network: NCCL bus bandwidth ~70% of link; overlap: DDP/FSDP
# hide most gradient traffic; chunked TP overlap (userbuffers, async TP) hides over half of
# the TP collectives (PyTorch reports 1.04-1.16x end-to-end from async TP); vision input
# pipelines (DALI-class) feed ~3-10k images/s per GPU. "logit" keeps a fraction in (0, 1),
# "log" a scale positive.
PRIORS: tuple[tuple[str, str, float, float], ...] = (
    ("efficiency_volta_16bit", "logit", 0.60, 0.5),
    ("efficiency_ampere_16bit", "logit", 0.65, 0.5),
    ("efficiency_hopper_16bit", "logit", 0.60, 0.5),
    ("efficiency_hopper_fp8", "logit", 0.45, 0.5),
    # Row-wise fp8 scaling does strictly more work than per-tensor scaling (scales in the
    # epilogue, a cast per scaling axis): a fraction below 1, centred on a 10% slowdown, wide.
    ("fp8_rowwise_factor", "logit", 0.9, 0.7),
    ("encoder_factor", "log", 1.0, 0.3),
    ("pcie_card_factor", "logit", 0.85, 0.7),
    ("cnn_factor", "log", 0.6, 0.5),
    ("attention_factor", "logit", 0.7, 0.7),
    ("ridge_multiple", "log", 1.0, 0.7),
    ("traffic_factor", "log", 4.0, 0.5),
    ("cnn_traffic_factor", "log", 8.0, 0.7),
    ("fused_cnn_traffic_ratio", "logit", 0.6, 0.5),
    ("network_efficiency", "logit", 0.7, 0.5),
    ("overlap_fraction", "logit", 0.8, 0.7),
    ("tp_overlap_fraction", "logit", 0.6, 0.7),
    ("ring_full_bandwidth_nodes", "log", 4.0, 0.7),
    ("step_overhead_seconds", "log", 0.01, 1.0),
    # Reliability studies put a well-run large cluster's effective training time near 90%
    # (Llama 3, MegaScale) and an early cloud run's near 60% (OPT-175B logbook): beyond the
    # failure model, a prior of 25% of steady time, wide (log sd 0.7).
    ("production_overhead_fraction", "log", 0.25, 0.7),
)
# Not fitted (fixed at their Calibration defaults): efficiency_other and
# input_images_per_second_per_gpu would each be set by a handful of rows from one or two
# families (exotic accelerators; one synthetic-data ResNet table), hop_latency_us and
# run_overhead_seconds are not identifiable from throughput tables.
FITTED_FIELDS: tuple[tuple[str, str], ...] = tuple((name, kind) for name, kind, _, _ in PRIORS)
ROBUST_SCALE = 0.15
MAX_EVALUATIONS = 3000
RESTARTS = 2


def _transform(value: float, kind: str) -> float:
    return float(np.log(value / (1 - value)) if kind == "logit" else np.log(value))


def encode(cal: Calibration) -> FloatArray:
    """Calibration -> unconstrained vector."""
    return np.array([_transform(getattr(cal, name), kind) for name, kind in FITTED_FIELDS])


def prior_vector(center: Calibration | None = None) -> tuple[FloatArray, FloatArray]:
    """(prior means, prior sds) of FITTED_FIELDS in transformed coordinates.

    Means are the PRIORS values, or `center`'s (a refit on more runs is pulled toward the
    calibration it refines, e.g. the shipped one).
    """
    means = (encode(center) if center is not None else
             np.array([_transform(value, kind) for _, kind, value, _ in PRIORS]))
    return means, np.array([sd for *_, sd in PRIORS])


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


def family_weights(prepared: PreparedRuns) -> FloatArray:
    """Weight of each predictable row: 1/sqrt(rows of its family that inform the fit); 0 for
    whole runs whose figure is only a bound or of loose scope (whole_run_usable "partial"), and 0
    for rows whose GEMMs run at the fixed efficiency_other (accelerators and precisions
    without a fitted efficiency: Gaudi, CDNA, Ada, Blackwell). Their error is mostly that
    unfitted efficiency; fitted, the shared knobs (attention, traffic, overlap, production
    overhead) would absorb it and move every calibrated GPU's predictions. They are still
    predicted and validated. A user's own runs (`is_own_run`, a refit on measured runs)
    always inform it: on their own cluster, moving the shared knobs toward them is the point."""
    rows = prepared.info.loc[prepared.is_predictable]
    usable = (rows.get("whole_run_usable", pd.Series("", index=rows.index)) != "partial")
    own = rows.get("is_own_run", pd.Series(False, index=rows.index)).to_numpy(dtype=bool)
    c = prepared.arrays
    informs = usable.to_numpy() & (
        (np.asarray(c.efficiency_class) != EFFICIENCY_CLASSES.index("other"))
        | (np.asarray(c.is_simt) > 0) | own)
    families = rows["family"].astype(str)
    counts = families.map(families[informs].value_counts()).fillna(1.0)
    return np.asarray(informs / np.sqrt(counts.to_numpy(dtype=float)))


def _objective(prepared: PreparedRuns, base: Calibration,
               weights: FloatArray) -> Callable[[FloatArray], float]:
    # The same rows are predicted thousands of times: keep what the calibration does not change.
    arrays, targets = prepared.arrays.keeping_derived(), RowTargets.of(prepared)
    means, sds = prior_vector(base)

    def objective(x: FloatArray) -> float:
        predicted = predict_targets(arrays, targets, decode(x, base))
        errors = targets.speed_ratio(predicted)
        # Gaussian prior against log errors of scale ROBUST_SCALE: sigma² · sum(z²).
        prior = np.sum(((x - means) / sds) ** 2)
        return float(np.sum(weights * soft_l1(errors)) + ROBUST_SCALE**2 * prior)

    return objective


PROGRESS_EVERY = 100  # evaluations between two progress reports
# fit_calibration's progress: choosing layouts takes about this share of the time (5 of 7 s
# on 410 runs), the search the rest.
PREPARE_SHARE = 0.7


def _reporting(objective: Callable[[FloatArray], float], progress: Progress,
               restart: int) -> Callable[[FloatArray], float]:
    """`objective`, reporting every PROGRESS_EVERY evaluations how much of this restart's
    budget (MAX_EVALUATIONS) is used; a restart that converges early jumps to the next."""
    used = 0

    def counted(x: FloatArray) -> float:
        nonlocal used
        used += 1
        if used % PROGRESS_EVERY == 0:
            share = (restart + min(used / MAX_EVALUATIONS, 1.0)) / RESTARTS
            progress(share, f"fitting: pass {restart + 1} of {RESTARTS}, "
                            f"{used:,} model evaluations")
        return objective(x)

    return counted


def fit_prepared(prepared: PreparedRuns, initial: Calibration,
                 progress: Progress | None = None) -> Calibration:
    """MAP fit of FITTED_FIELDS on prepared rows, prior centred on `initial` (whose defaults
    are the PRIORS values); sets the domain and n_rows. `progress`, when given, hears how far
    the fit is every PROGRESS_EVERY model evaluations.

    Band quantiles and the envelope groups' band multipliers are kept from `initial` (they
    come from out-of-family residuals, see crossval.calibrate).
    """
    weights = family_weights(prepared)
    objective = _objective(prepared, initial, weights)
    x = encode(initial)
    for restart in range(RESTARTS):
        x = nelder_mead(objective if progress is None
                        else _reporting(objective, progress, restart), x)
    return replace(decode(x, initial), domain=informing_domain(prepared, initial.domain),
                   n_rows=int(prepared.is_predictable.sum()))


def informing_domain(prepared: PreparedRuns, initial: CalibrationDomain) -> CalibrationDomain:
    """The envelope of a fit on `prepared`: the rows that weigh in it (rows at a generic,
    unfitted GEMM efficiency weigh nothing and leave their GPU uncalibrated), with the
    envelope groups' band multipliers of `initial`."""
    weights = family_weights(prepared)
    informing = [point for point, weight in zip(prepared.domain_points(), weights, strict=True)
                 if weight > 0]
    return domain_from_points(informing).with_envelope_scales(initial.envelope_scales)


def fit_calibration(runs_df: pd.DataFrame, gpus: pd.DataFrame | Mapping[str, GpuSpec],
                    initial: Calibration | None = None,
                    progress: Progress | None = None) -> Calibration:
    """Fit the efficiency model on reference runs (reference_runs.csv schema).

    `gpus` is a gpus.csv-style DataFrame or a name -> GpuSpec mapping. Deterministic: the same
    inputs give the same Calibration. Fixed knobs and band quantiles come from `initial`.
    """
    start = initial or Calibration()
    if progress is None:
        return fit_prepared(prepare_runs(runs_df, gpus, start), start)
    prepared = prepare_runs(runs_df, gpus, start, progress_span(progress, 0.0, PREPARE_SHARE))
    return fit_prepared(prepared, start, progress_span(progress, PREPARE_SHARE, 1.0))
