"""Validate the simulator against published runs (reference_runs.csv schema).

`validate` predicts each row's metric for its configuration; blank layout fields are filled by
the layout search. Rows it cannot predict get NaN and a note, never an exception. Every
predicted row carries its calibration status and a P10-P90 band (see domain).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from simulator.core.calibration import Calibration, band_class
from simulator.core.domain import assess
from simulator.core.envelope import metric_kind
from simulator.core.hardware import GpuSpec
from simulator.core.prediction import (
    METRICS,
    THROUGHPUT_METRICS,
    PreparedRuns,
    baseline_prepared,
    predict_prepared,
    prepare_runs,
)
from simulator.core.reference_runs import TIME_METRICS

__all__ = ["METRICS", "PREDICTION_COLUMNS", "THROUGHPUT_METRICS", "TIME_METRICS",
           "SingleFactorFloor", "predictions_frame", "single_factor_floor", "summarize_errors",
           "validate"]

PREDICTION_COLUMNS = ["run_id", "metric", "reported", "predicted", "predicted_p10",
                      "predicted_p90", "abs_pct_error", "note"]
SCALE_BANDS: tuple[tuple[float, str], ...] = (
    (1, "1 GPU"), (8, "2-8 GPUs"), (64, "9-64 GPUs"), (512, "65-512 GPUs"),
    (4096, "513-4096 GPUs"), (float("inf"), ">4096 GPUs"))
GROUPINGS: tuple[str, ...] = ("overall", "metric_class", "metric", "gpu", "precision",
                              "scale_band", "family", "workload_kind", "calibration_status",
                              "envelope_group")


def scale_band(n_gpus: float) -> str:
    """Label of the GPU-count band of a run (SCALE_BANDS)."""
    return next(label for limit, label in SCALE_BANDS if n_gpus <= limit)


def _bands(prepared: PreparedRuns, cal: Calibration) -> pd.DataFrame:
    """calibration_status, status_reason, band_scale and the envelope (envelope: the axes
    outside, ";"-joined; envelope_distance; envelope_group; envelope_note) of every info row."""
    n = len(prepared.info)
    status, reason, scale = ["not predicted"] * n, [""] * n, np.full(n, np.nan)
    notes, axes, groups = [""] * n, [""] * n, ["not predicted"] * n
    distance = np.full(n, np.nan)
    ok = np.flatnonzero(prepared.is_predictable)
    for i, point in zip(ok, prepared.domain_points(), strict=True):
        verdict = assess(cal.domain, point)
        status[i], reason[i], scale[i] = verdict.status, verdict.reason, verdict.band_scale
        notes[i], axes[i] = verdict.envelope_note, ";".join(verdict.envelope)
        distance[i], groups[i] = verdict.envelope_distance, verdict.envelope_group
    return pd.DataFrame({"calibration_status": status, "status_reason": reason,
                         "band_scale": scale, "envelope": axes, "envelope_distance": distance,
                         "envelope_group": groups, "envelope_note": notes},
                        index=prepared.info.index)


def band_classes(info: pd.DataFrame) -> np.ndarray:
    """calibration.band_class of every info row (its workload kind, metric and precision)."""
    precision = info["precision"] if "precision" in info else pd.Series("", index=info.index)
    return np.array([band_class(str(k), str(m), str(p)) for k, m, p in
                     zip(info["workload_kind"], info["metric"], precision, strict=True)])


def predictions_frame(prepared: PreparedRuns, calibration: Calibration) -> pd.DataFrame:
    """The validation table: PREDICTION_COLUMNS plus grouping, band, baseline and layout columns.

    Bands: predicted speed × exp(band_scale × the row's band-class P10/P90) (inverted for time
    metrics); band_scale is the row's envelope group's multiplier × its setting multipliers.
    """
    info = prepared.info
    predicted = predict_prepared(prepared, calibration)
    bands = _bands(prepared, calibration)
    scale = bands["band_scale"].to_numpy(dtype=float)
    is_time = info["metric"].isin(TIME_METRICS).to_numpy()
    quantiles = np.array([calibration.band_quantiles(c)
                          for c in band_classes(info)]).reshape(-1, 2)
    q10, q90 = quantiles[:, 0], quantiles[:, 1]
    low = np.where(is_time, -q90, q10) * scale
    high = np.where(is_time, -q10, q90) * scale
    reported = info["reported"].to_numpy(dtype=float)
    frame = info[["run_id", "metric", "reported", "note", "gpu", "workload_kind", "source",
                  "family"]].copy()
    frame["predicted"] = predicted
    frame["predicted_p10"] = predicted * np.exp(low)
    frame["predicted_p90"] = predicted * np.exp(high)
    frame["abs_pct_error"] = 100.0 * np.abs(predicted / reported - 1.0)
    frame["signed_pct_error"] = 100.0 * (predicted / reported - 1.0)
    frame["is_covered"] = np.where(np.isnan(predicted), np.nan,
                                   (frame["predicted_p10"] <= reported)
                                   & (reported <= frame["predicted_p90"]))
    frame = frame.join(bands)
    baseline = baseline_prepared(prepared)
    frame["baseline"] = baseline
    frame["baseline_abs_pct_error"] = 100.0 * np.abs(baseline / reported - 1.0)
    frame["is_answerable"] = ~frame["note"].str.startswith("not predicted: missing")
    n_gpus = info["n_gpus"] if "n_gpus" in info else pd.Series(np.nan, index=info.index)
    frame["scale_band"] = [scale_band(n) if n == n else "unknown" for n in n_gpus]
    layout_cols = [k for k in ("n_gpus", "tp", "pp", "dp", "cp", "zero_stage", "recompute_mode",
                               "micro_batch", "grad_accum", "precision") if k in info]
    frame = frame.join(info[layout_cols])
    return frame[PREDICTION_COLUMNS + [c for c in frame.columns if c not in PREDICTION_COLUMNS]]


def validate(runs_df: pd.DataFrame, gpus: pd.DataFrame | Mapping[str, GpuSpec],
             calibration: Calibration) -> pd.DataFrame:
    """Predict every reference row's metric (see module docstring and PREDICTION_COLUMNS)."""
    return predictions_frame(prepare_runs(runs_df, gpus, calibration), calibration)


def _quantiles(values: pd.Series) -> tuple[float, float]:
    valid = values.dropna()
    if valid.empty:
        return float("nan"), float("nan")
    return float(valid.median()), float(valid.quantile(0.9))


def _summary_row(group_by: str, group: str, rows: pd.DataFrame) -> dict[str, object]:
    sim_median, sim_p90 = _quantiles(rows["abs_pct_error"])
    base_median, base_p90 = _quantiles(rows["baseline_abs_pct_error"])
    answerable = rows["is_answerable"] if "is_answerable" in rows else pd.Series(True, rows.index)
    predicted = rows["predicted"].notna()
    covered = rows["is_covered"].dropna() if "is_covered" in rows else pd.Series(dtype=float)
    bias = rows["signed_pct_error"].dropna() if "signed_pct_error" in rows else covered
    return {"group_by": group_by, "group": group, "n_rows": len(rows),
            "n_predicted": int(predicted.sum()),
            "share_predicted": float(predicted.sum() / max(int(answerable.sum()), 1)),
            "median_ape": sim_median, "p90_ape": sim_p90,
            "bias_pct": float(bias.median()) if len(bias) else float("nan"),
            "coverage": float(covered.astype(float).mean()) if len(covered) else float("nan"),
            "baseline_median_ape": base_median, "baseline_p90_ape": base_p90}


def metric_classes(metrics: pd.Series) -> np.ndarray:
    """"whole-run" (published whole-run GPU-hours), "time" (time to train) or "throughput"."""
    names = {"whole_run": "whole-run", "time": "time", "steady": "throughput"}
    return np.array([names[metric_kind(str(m))] for m in metrics], dtype=str)


def summarize_errors(predictions: pd.DataFrame) -> pd.DataFrame:
    """Error statistics, simulator vs rule of thumb, overall and by group (GROUPINGS).

    Columns: group_by, group, n_rows, n_predicted, share_predicted (of answerable rows),
    median_ape and p90_ape (absolute % error), bias_pct (median signed % error), coverage
    (share of predicted rows whose reported value lies in the P10-P90 band),
    baseline_median_ape, baseline_p90_ape. Input is a `validate` or cross-validation frame.
    """
    frame = predictions.assign(metric_class=metric_classes(predictions["metric"]), overall="all")
    for column in GROUPINGS:
        if column not in frame:
            frame[column] = "unknown"
    frame = frame.fillna({c: "unknown" for c in GROUPINGS})
    out = []
    for group_by in GROUPINGS:
        for group, rows in frame.groupby(group_by, sort=True):
            out.append(_summary_row(group_by, str(group), rows))
    return pd.DataFrame(out)


@dataclass(frozen=True)
class SingleFactorFloor:
    """How far apart a class's published figures are from each other, seen through the
    simulator: `ratio_low`..`ratio_high` is published ÷ predicted over its `n_rows` rows, and
    `p90_ape` the P90 % error still left after multiplying every prediction by the one
    `factor` that minimises it, chosen on those very rows (in-sample, so a floor no fitted
    goodput or overhead factor can go below, not an accuracy figure)."""

    n_rows: int
    factor: float
    p90_ape: float
    ratio_low: float
    ratio_high: float


def single_factor_floor(predictions: pd.DataFrame, metric_class: str = "whole-run",
                        steps: int = 4001) -> SingleFactorFloor | None:
    """The SingleFactorFloor of `metric_class`'s predicted rows (a `validate` or
    cross-validation frame), or None with fewer than two. Grid search over the rows' own
    ratios' span, `steps` log-spaced factors; P90 as summarize_errors takes it (linear)."""
    rows = predictions[(metric_classes(predictions["metric"]) == metric_class)
                       & predictions["predicted"].notna() & (predictions["reported"] > 0)
                       & (predictions["predicted"] > 0)]
    if len(rows) < 2:
        return None
    ratio = (rows["reported"] / rows["predicted"]).to_numpy(dtype=np.float64)
    factors = np.geomspace(ratio.min(), ratio.max(), steps)
    errors = np.abs(factors[:, None] / ratio[None, :] - 1.0) * 100.0
    p90 = np.quantile(errors, 0.9, axis=1)
    best = int(np.argmin(p90))
    return SingleFactorFloor(len(rows), float(factors[best]), float(p90[best]),
                             float(ratio.min()), float(ratio.max()))
