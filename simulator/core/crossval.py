"""Grouped cross-validation and split-conformal bands (scikit-learn LeaveOneGroupOut).

`cross_validate` refits the calibration once per left-out group (a family, see
runs.run_family, or a source) and predicts that group's rows, so every figure it reports is
out-of-group. Bands are split-conformal: a left-out group's P10-P90 band uses the quantiles of
the *other* groups' out-of-group log residuals of its band group (decoder, encoder, vision:
Mondrian conformal), each normalised by its band scale (status and distance from the
calibration data, see domain), so no row sets its own band.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd
from sklearn.model_selection import LeaveOneGroupOut

from simulator.core.calibration import BAND_CLASSES, Calibration, band_class
from simulator.core.domain import assess
from simulator.core.fitting import fit_prepared
from simulator.core.hardware import GpuSpec
from simulator.core.prediction import (
    PreparedRuns,
    as_gpu_specs,
    predict_prepared,
    prepare_runs,
    speed_ratio,
    subset_prepared,
)
from simulator.core.validation import predictions_frame

GROUP_COLUMNS: tuple[str, ...] = ("family", "source")
BAND_QUANTILES = (0.1, 0.9)
MIN_GROUP_RESIDUALS = 10


@dataclass(frozen=True)
class CrossValidation:
    """Out-of-group predictions (validation columns + fold_group, fold_calibration_rows) and
    the normalised out-of-group log residuals of every predicted row (NaN elsewhere)."""

    predictions: pd.DataFrame
    normalised_residuals: np.ndarray


@dataclass(frozen=True)
class _Fold:
    group: str
    mask: np.ndarray
    calibration: Calibration


def _normalised_residuals(prepared: PreparedRuns, cal: Calibration) -> np.ndarray:
    """log(reported/predicted speed) / band_scale per info row (NaN when not predicted)."""
    predicted = predict_prepared(prepared, cal)
    info = prepared.info
    speed = -speed_ratio(info["metric"].to_numpy(), predicted,
                         info["reported"].to_numpy(dtype=float))
    scale = np.full(len(info), np.nan)
    ok = np.flatnonzero(prepared.is_predictable)
    for i, point in zip(ok, prepared.domain_points(), strict=True):
        scale[i] = assess(cal.domain, point).band_scale
    return np.asarray(speed / scale)


def _folds(prepared: PreparedRuns, group_by: str, start: Calibration) -> list[_Fold]:
    groups = prepared.info[group_by].astype(str).to_numpy()
    folds = []
    for train, test in LeaveOneGroupOut().split(groups, groups=groups):
        train_mask = np.zeros(len(groups), dtype=bool)
        train_mask[train] = True
        cal = fit_prepared(subset_prepared(prepared, train_mask), start)
        folds.append(_Fold(str(groups[test[0]]), ~train_mask, cal))
    return folds


def _is_partial(prepared: PreparedRuns) -> np.ndarray:
    """Whole runs whose figure is a bound or of loose scope: predicted, never banding others."""
    info = prepared.info
    if "whole_run_usable" not in info:
        return np.zeros(len(info), dtype=bool)
    return np.asarray(info["whole_run_usable"].to_numpy() == "partial")


def band_quantiles(residuals: np.ndarray) -> tuple[float, float]:
    """(P10, P90) of finite normalised residuals with the split-conformal finite-sample
    correction: the ceil((n+1)·q)/n quantiles, so a class with few residuals (the ~40 benchmark
    times or whole runs) gets the wider band its small sample calls for; (0, 0) without any."""
    finite = residuals[np.isfinite(residuals)]
    n = len(finite)
    if not n:
        return 0.0, 0.0
    high_level = min(1.0, math.ceil((n + 1) * BAND_QUANTILES[1]) / n)
    low_level = max(0.0, 1.0 - min(1.0, math.ceil((n + 1) * (1 - BAND_QUANTILES[0])) / n))
    low, high = np.quantile(finite, (low_level, high_level))
    return float(low), float(high)


def _band_groups(prepared: PreparedRuns) -> np.ndarray:
    info = prepared.info
    precision = info["precision"] if "precision" in info else pd.Series("", index=info.index)
    return np.array([band_class(str(k), str(m), str(p)) for k, m, p in
                     zip(info["workload_kind"], info["metric"], precision, strict=True)])


def with_bands(cal: Calibration, residuals: np.ndarray, groups: np.ndarray,
               use: np.ndarray) -> Calibration:
    """`cal` with each band group's quantiles from the `use` rows' residuals of that group
    (all used rows when a group has fewer than MIN_GROUP_RESIDUALS)."""
    pooled = band_quantiles(residuals[use])
    for group in BAND_CLASSES:
        own = residuals[use & (groups == group)]
        enough = np.isfinite(own).sum() >= MIN_GROUP_RESIDUALS
        cal = cal.with_band_quantiles(group, *(band_quantiles(own) if enough else pooled))
    return cal


def cross_validate_prepared(prepared: PreparedRuns, group_by: str,
                            start: Calibration) -> CrossValidation:
    """Leave each group out in turn (see module docstring)."""
    if group_by not in GROUP_COLUMNS:
        raise ValueError(f"group_by must be one of {GROUP_COLUMNS}")
    folds = _folds(prepared, group_by, start)
    residuals = np.full(len(prepared.info), np.nan)
    for fold in folds:
        held = subset_prepared(prepared, fold.mask)
        residuals[fold.mask] = _normalised_residuals(held, fold.calibration)
    groups = _band_groups(prepared)
    bounded = _is_partial(prepared)
    frames = []
    for fold in folds:
        cal = with_bands(fold.calibration, residuals, groups, ~fold.mask & ~bounded)
        frame = predictions_frame(subset_prepared(prepared, fold.mask), cal)
        frames.append(frame.assign(fold_group=fold.group, fold_calibration_rows=cal.n_rows))
    return CrossValidation(pd.concat(frames, ignore_index=True), residuals)


def cross_validate(runs_df: pd.DataFrame, gpus: pd.DataFrame | Mapping[str, GpuSpec], *,
                   group_by: str = "family",
                   initial: Calibration | None = None) -> pd.DataFrame:
    """Out-of-group validation table (validate columns plus fold_group and
    fold_calibration_rows), leaving out one `group_by` value ("family" or "source") at a time."""
    start = initial or Calibration()
    prepared = prepare_runs(runs_df, as_gpu_specs(gpus), start)
    return cross_validate_prepared(prepared, group_by, start).predictions


def leave_one_source_out(runs_df: pd.DataFrame, gpus: pd.DataFrame | Mapping[str, GpuSpec],
                         initial: Calibration | None = None) -> pd.DataFrame:
    """cross_validate by `source` (kept for `validate_simulator --loso`)."""
    return cross_validate(runs_df, gpus, group_by="source", initial=initial)


def calibrate_and_validate(runs_df: pd.DataFrame, gpus: pd.DataFrame | Mapping[str, GpuSpec],
                           initial: Calibration | None = None
                           ) -> tuple[Calibration, pd.DataFrame]:
    """The shipped calibration (a fit on every row, band quantiles from the leave-one-family-out
    residuals: split-conformal) and the leave-one-family-out predictions it was banded on."""
    start = initial or Calibration()
    prepared = prepare_runs(runs_df, as_gpu_specs(gpus), start)
    validation = cross_validate_prepared(prepared, "family", start)
    residuals = validation.normalised_residuals
    use = ~_is_partial(prepared)
    fitted = with_bands(fit_prepared(prepared, start), residuals, _band_groups(prepared), use)
    return fitted, validation.predictions


def calibrate(runs_df: pd.DataFrame, gpus: pd.DataFrame | Mapping[str, GpuSpec],
              initial: Calibration | None = None) -> Calibration:
    """The shipped calibration (see calibrate_and_validate)."""
    return calibrate_and_validate(runs_df, gpus, initial)[0]
