"""Grouped cross-validation and split-conformal bands (scikit-learn LeaveOneGroupOut).

`cross_validate` refits the calibration once per left-out group (a family, see
runs.run_family, or a source) and predicts that group's rows, so every figure it reports is
out-of-group. Each row's residual and its envelope (how far outside the calibration runs it
was, envelope.ENVELOPE_GROUPS) are judged against the fit that never saw its family.

Bands are split-conformal and nested: a left-out group's P10-P90 band comes only from the
*other* groups' out-of-group residuals. Its width is the product of two out-of-sample factors
(with_bands): its band class's quantiles (decoder, encoder, vision, fp8, time to train, whole
run: Mondrian conformal) and its envelope group's multiplier, the one that covers 80 % of the
rows that were that far outside the envelope when held out. The two are set in turn (raking)
so that both the classes and the envelope groups hold their share; no row sets its own band.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd
from sklearn.model_selection import LeaveOneGroupOut

from simulator.core.calibration import BAND_CLASSES, Calibration
from simulator.core.domain import assess, setting_scale
from simulator.core.envelope import ENVELOPE_GROUPS
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
from simulator.core.validation import band_classes, predictions_frame

GROUP_COLUMNS: tuple[str, ...] = ("family", "source")
BAND_QUANTILES = (0.1, 0.9)
MIN_GROUP_RESIDUALS = 10
# Alternations of class quantiles and envelope multipliers (each ends on the multipliers).
RAKING_ROUNDS = 4
# Smallest |quantile| a class band may have when the multiplier a row needs is worked out.
MIN_QUANTILE = 1e-3


@dataclass(frozen=True)
class Residuals:
    """Per info row, judged against the fit that never saw the row's family: the log speed
    residual log(reported/predicted speed) (NaN when not predicted), the ENVELOPE_GROUPS
    index it fell in (-1 when not predicted) and its fixed setting multiplier (domain.
    setting_scale: a guessed batch, row-wise fp8)."""

    log_speed: np.ndarray
    envelope_group: np.ndarray
    setting_scale: np.ndarray

    @classmethod
    def empty(cls, n: int) -> Residuals:
        return cls(np.full(n, np.nan), np.full(n, -1, dtype=np.intp), np.ones(n))


@dataclass(frozen=True)
class CrossValidation:
    """Out-of-group predictions (validation columns + fold_group, fold_calibration_rows) and
    the out-of-group residuals of every row."""

    predictions: pd.DataFrame
    residuals: Residuals


@dataclass(frozen=True)
class _Fold:
    group: str
    mask: np.ndarray
    calibration: Calibration


def _fill_residuals(out: Residuals, rows: np.ndarray, prepared: PreparedRuns,
                    cal: Calibration) -> None:
    """Write the residuals of `prepared` (the info rows `rows` of the whole) into `out`."""
    predicted = predict_prepared(prepared, cal)
    info = prepared.info
    speed = -speed_ratio(info["metric"].to_numpy(), predicted,
                         info["reported"].to_numpy(dtype=float))
    out.log_speed[rows] = speed
    ok = np.flatnonzero(prepared.is_predictable)
    for i, point in zip(ok, prepared.domain_points(), strict=True):
        verdict = assess(cal.domain, point)
        out.envelope_group[rows[i]] = ENVELOPE_GROUPS.index(verdict.envelope_group)
        out.setting_scale[rows[i]] = setting_scale(point)


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
    """(P10, P90) of finite normalised residuals: ∓ the split-conformal quantile of their
    absolute values at P90 - P10 = 80 %, ceil((n+1)·0.8)/n, so a class with few residuals
    (the ~40 benchmark times or whole runs) gets the wider band its small sample calls for;
    (0, 0) without any. Symmetric in log speed: the families' biases differ in sign, so the
    side a new family errs on cannot be told from the others' (asymmetric quantiles held 71 %
    of the throughput rows out of family, symmetric ones 75 %)."""
    finite = np.abs(residuals[np.isfinite(residuals)])
    if not len(finite):
        return 0.0, 0.0
    half = conformal_quantile(finite)
    return -half, half


def conformal_quantile(values: np.ndarray) -> float:
    """The split-conformal quantile covering BAND_QUANTILES[1] - BAND_QUANTILES[0] (80 %) of
    the finite `values` (at least one): their ceil((n+1)·0.8)/n quantile."""
    finite = values[np.isfinite(values)]
    n = len(finite)
    level = min(1.0, math.ceil((n + 1) * (BAND_QUANTILES[1] - BAND_QUANTILES[0])) / n)
    return float(np.quantile(finite, level))


def _class_quantiles(cal: Calibration, normalised: np.ndarray, classes: np.ndarray,
                     use: np.ndarray) -> Calibration:
    """`cal` with each band class's quantiles from the `use` rows' normalised residuals of
    that class (all used rows when a class has fewer than MIN_GROUP_RESIDUALS)."""
    pooled = band_quantiles(normalised[use])
    for group in BAND_CLASSES:
        own = normalised[use & (classes == group)]
        enough = np.isfinite(own).sum() >= MIN_GROUP_RESIDUALS
        cal = cal.with_band_quantiles(group, *(band_quantiles(own) if enough else pooled))
    return cal


def needed_multipliers(cal: Calibration, residuals: Residuals,
                       classes: np.ndarray) -> np.ndarray:
    """Per row, the smallest band multiplier whose band (class quantiles × multiplier ×
    setting scale) holds its residual."""
    bounds = np.array([cal.band_quantiles(c) if c in BAND_CLASSES else (0.0, 0.0)
                       for c in classes]).reshape(-1, 2)
    low = np.minimum(bounds[:, 0], -MIN_QUANTILE)
    high = np.maximum(bounds[:, 1], MIN_QUANTILE)
    scaled = residuals.log_speed / residuals.setting_scale
    return np.asarray(np.where(scaled >= 0, scaled / high, scaled / low))


def with_bands(cal: Calibration, residuals: Residuals, classes: np.ndarray,
               use: np.ndarray) -> Calibration:
    """`cal` with its band classes' quantiles and envelope groups' multipliers from the `use`
    rows' residuals (see the module docstring). A group with fewer than MIN_GROUP_RESIDUALS
    rows keeps its multiplier before the fit; a farther group is never narrower."""
    scales = np.asarray(cal.domain.envelope_scales, dtype=float)
    finite = use & np.isfinite(residuals.log_speed) & (residuals.envelope_group >= 0)
    for _ in range(RAKING_ROUNDS):
        per_row = scales[np.maximum(residuals.envelope_group, 0)] * residuals.setting_scale
        cal = _class_quantiles(cal, residuals.log_speed / per_row, classes, finite)
        needed = needed_multipliers(cal, residuals, classes)
        for g in range(len(ENVELOPE_GROUPS)):
            rows = finite & (residuals.envelope_group == g)
            if rows.sum() >= MIN_GROUP_RESIDUALS:
                scales[g] = conformal_quantile(needed[rows])
        scales = np.maximum.accumulate(np.maximum(scales, MIN_QUANTILE))
    return replace(cal, domain=cal.domain.with_envelope_scales(tuple(scales)))


def cross_validate_prepared(prepared: PreparedRuns, group_by: str,
                            start: Calibration) -> CrossValidation:
    """Leave each group out in turn (see module docstring)."""
    if group_by not in GROUP_COLUMNS:
        raise ValueError(f"group_by must be one of {GROUP_COLUMNS}")
    return _validate_folds(prepared, _folds(prepared, group_by, start))


def _validate_folds(prepared: PreparedRuns, folds: list[_Fold]) -> CrossValidation:
    """Residuals, bands and predictions of fitted folds (see cross_validate_prepared)."""
    residuals = Residuals.empty(len(prepared.info))
    for fold in folds:
        _fill_residuals(residuals, np.flatnonzero(fold.mask),
                        subset_prepared(prepared, fold.mask), fold.calibration)
    groups = band_classes(prepared.info)
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
    residuals = validation.residuals
    use = ~_is_partial(prepared)
    fitted = with_bands(fit_prepared(prepared, start), residuals, band_classes(prepared.info), use)
    return fitted, validation.predictions


def calibrate(runs_df: pd.DataFrame, gpus: pd.DataFrame | Mapping[str, GpuSpec],
              initial: Calibration | None = None) -> Calibration:
    """The shipped calibration (see calibrate_and_validate)."""
    return calibrate_and_validate(runs_df, gpus, initial)[0]
