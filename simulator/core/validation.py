"""Validate the simulator against published runs (reference_runs.csv schema).

`validate` predicts each row's metric for its configuration; blank layout fields are filled by
the layout search. Rows it cannot predict get NaN and a note, never an exception.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any, cast

import numpy as np
import pandas as pd

from simulator.core.arrays import (
    ConfigArrays,
    FloatArray,
    hardware_columns,
    layout_columns,
    workload_columns,
)
from simulator.core.calibration import Calibration
from simulator.core.hardware import GpuSpec, gpu_specs_from_frame
from simulator.core.layout import Layout
from simulator.core.runs import RunInputs, run_inputs
from simulator.core.search import best_layout
from simulator.core.timing import step_time

THROUGHPUT_METRICS: tuple[str, ...] = ("tokens_per_sec_per_gpu", "samples_per_sec",
                                       "tflops_per_gpu", "mfu_pct")
TIME_METRICS: tuple[str, ...] = ("time_to_train_minutes", "gpu_hours")
METRICS = THROUGHPUT_METRICS + TIME_METRICS
RULE_OF_THUMB_EFFICIENCY = 0.40
PREDICTION_COLUMNS = ["run_id", "metric", "reported", "predicted", "predicted_p10",
                      "predicted_p90", "abs_pct_error", "note"]


@dataclass(frozen=True)
class PreparedRuns:
    """Reference rows with chosen layouts, ready for repeated vectorized prediction.

    `info` has one row per input row (run_id, metric, reported, gpu, workload_kind, source,
    note, is_predictable, convention, work_samples, n_gpus and the chosen layout); `arrays`
    holds the predictable rows in order.
    """

    info: pd.DataFrame
    arrays: ConfigArrays

    @property
    def is_predictable(self) -> np.ndarray:
        return self.info["is_predictable"].to_numpy(dtype=bool)


@dataclass(frozen=True)
class RowTargets:
    """Numpy views of the predictable rows' metric definitions (fast repeated prediction)."""

    metric: np.ndarray
    convention: np.ndarray
    work_samples: FloatArray
    reported: FloatArray

    @classmethod
    def of(cls, prepared: PreparedRuns) -> RowTargets:
        sub = prepared.info.loc[prepared.is_predictable]
        convention = np.array([v if isinstance(v, str) else "" for v in sub["convention"]])
        return cls(sub["metric"].to_numpy(), convention,
                   sub["work_samples"].to_numpy(dtype=float), sub["reported"].to_numpy(dtype=float))


def as_gpu_specs(gpus: pd.DataFrame | Mapping[str, GpuSpec]) -> dict[str, GpuSpec]:
    """Accept a gpus.csv-style DataFrame or an existing name -> GpuSpec mapping."""
    return gpu_specs_from_frame(gpus) if isinstance(gpus, pd.DataFrame) else dict(gpus)


def _prepare_row(row: pd.Series, gpus: dict[str, GpuSpec], cal: Calibration) -> dict[str, object]:
    base: dict[str, object] = {
        "run_id": row["run_id"], "metric": row["metric"], "reported": float(row["value"]),
        "gpu": row["gpu"], "workload_kind": row["workload_kind"], "source": row["source"],
        "convention": row.get("flops_include_recompute"), "is_predictable": False}
    try:
        if row["metric"] not in METRICS:
            raise ValueError(f"unknown metric {row['metric']!r}")
        inputs = run_inputs(cast(dict[str, Any], row.to_dict()), gpus)
        choice = best_layout(inputs.workload, inputs.hardware, inputs.goal, cal, inputs.constraints)
    except ValueError as exc:
        return {**base, "note": f"not predicted: {exc}"}
    notes = list(inputs.notes) + ([] if choice.is_fit else ["memory model says it does not fit"])
    return {**base, **_row_columns(inputs, choice.result.layout), "note": "; ".join(notes),
            "is_predictable": True, "work_samples": inputs.goal.total_samples(inputs.workload),
            "n_gpus": choice.result.n_gpus, "precision": choice.result.layout.precision}


def _row_columns(inputs: RunInputs, layout: Layout) -> dict[str, object]:
    return {**workload_columns(inputs.workload),
            **hardware_columns(inputs.hardware, layout.precision), **layout_columns(layout),
            "recompute_mode": layout.recompute}


def prepare_runs(runs_df: pd.DataFrame, gpus: pd.DataFrame | Mapping[str, GpuSpec],
                 calibration: Calibration) -> PreparedRuns:
    """Build inputs and choose layouts for every row (layout search uses `calibration`)."""
    specs = as_gpu_specs(gpus)
    info = pd.DataFrame([_prepare_row(row, specs, calibration) for _, row in runs_df.iterrows()])
    ok = info["is_predictable"].to_numpy(dtype=bool)
    arrays = ConfigArrays.from_columns(info.loc[ok]) if ok.any() else _empty_arrays()
    return PreparedRuns(info, arrays)


def _empty_arrays() -> ConfigArrays:
    return ConfigArrays(**{f.name: np.zeros(0) for f in fields(ConfigArrays)})


def metric_values(c: ConfigArrays, samples_per_second: FloatArray, executed_flops: FloatArray,
                  targets: RowTargets, overhead_seconds: float) -> FloatArray:
    """Predicted value of each row's metric from throughput (samples/s) per row."""
    n_gpus, samples = c.n_gpus, samples_per_second
    full = c.linear_train_flops + c.linear_recompute_flops + 4.0 * c.attention_fwd_flops
    convention = targets.convention
    # Blank convention: assume model FLOPs (PaLM/MFU style), the most common unstated count.
    per_sample = np.where(convention == "yes", full,
                          np.where(convention == "rule", executed_flops, c.model_flops))
    flops = per_sample * samples / n_gpus
    minutes = (targets.work_samples / samples + overhead_seconds) / 60.0
    choices = [samples * c.seq_len / n_gpus, samples, flops / 1e12,
               100.0 * flops / (c.peak_tflops * 1e12), minutes, minutes * n_gpus / 60.0]
    return np.select([targets.metric == m for m in METRICS], choices, default=np.nan)


def predict_targets(c: ConfigArrays, targets: RowTargets, calibration: Calibration) -> FloatArray:
    """Predicted metric for arrays/targets of predictable rows (the fitting hot path)."""
    times = step_time(c, calibration)
    return metric_values(c, times.samples_per_second, times.hardware_flops_per_sample,
                         targets, calibration.run_overhead_seconds)


def predict_prepared(prepared: PreparedRuns, calibration: Calibration) -> FloatArray:
    """Predicted metric per input row (NaN where not predictable)."""
    out = np.full(len(prepared.info), np.nan)
    ok = prepared.is_predictable
    if ok.any():
        out[ok] = predict_targets(prepared.arrays, RowTargets.of(prepared), calibration)
    return out


def baseline_prepared(prepared: PreparedRuns) -> FloatArray:
    """Rule of thumb: 6·params·tokens (ResNet: 3x forward FLOPs) at 40% of dense peak.

    Its FLOP rate is 40% of peak under any counting convention.
    """
    out = np.full(len(prepared.info), np.nan)
    ok = prepared.is_predictable
    if not ok.any():
        return out
    c, targets = prepared.arrays, RowTargets.of(prepared)
    per_sample = np.where(c.is_transformer > 0, 6.0 * c.params * c.seq_len, c.linear_train_flops)
    samples = RULE_OF_THUMB_EFFICIENCY * c.peak_tflops * 1e12 * c.n_gpus / per_sample
    plain = RowTargets(targets.metric, np.full(len(per_sample), "rule"), targets.work_samples,
                       targets.reported)
    out[ok] = metric_values(c, samples, per_sample, plain, 0.0)
    return out


def speed_ratio(metric: np.ndarray, predicted: FloatArray, reported: FloatArray) -> FloatArray:
    """log(predicted/reported) expressed for speed (time metrics inverted)."""
    ratio = np.log(predicted / reported)
    return np.where(np.isin(metric, TIME_METRICS), -ratio, ratio)


def predictions_frame(prepared: PreparedRuns, calibration: Calibration) -> pd.DataFrame:
    """The validation table: PREDICTION_COLUMNS plus grouping, baseline and layout columns."""
    info = prepared.info
    predicted = predict_prepared(prepared, calibration)
    baseline = baseline_prepared(prepared)
    is_time = info["metric"].isin(TIME_METRICS).to_numpy()
    low = np.where(is_time, -calibration.log_residual_p90, calibration.log_residual_p10)
    high = np.where(is_time, -calibration.log_residual_p10, calibration.log_residual_p90)
    reported = info["reported"].to_numpy(dtype=float)
    frame = info[["run_id", "metric", "reported", "note", "gpu", "workload_kind", "source"]].copy()
    frame["predicted"] = predicted
    frame["predicted_p10"] = predicted * np.exp(low)
    frame["predicted_p90"] = predicted * np.exp(high)
    frame["abs_pct_error"] = 100.0 * np.abs(predicted / reported - 1.0)
    frame["baseline"] = baseline
    frame["baseline_abs_pct_error"] = 100.0 * np.abs(baseline / reported - 1.0)
    layout_cols = [k for k in ("tp", "pp", "dp", "cp", "zero_stage", "recompute_mode",
                               "micro_batch", "grad_accum", "precision") if k in info]
    frame = frame.join(info[layout_cols])
    return frame[PREDICTION_COLUMNS + [c for c in frame.columns if c not in PREDICTION_COLUMNS]]


def validate(runs_df: pd.DataFrame, gpus: pd.DataFrame | Mapping[str, GpuSpec],
             calibration: Calibration) -> pd.DataFrame:
    """Predict every reference row's metric (see module docstring and PREDICTION_COLUMNS)."""
    return predictions_frame(prepare_runs(runs_df, gpus, calibration), calibration)


def subset_prepared(prepared: PreparedRuns, mask: np.ndarray) -> PreparedRuns:
    """Rows of `prepared` selected by a boolean mask over its info rows."""
    arrays_mask = mask[prepared.is_predictable]
    info = prepared.info.loc[mask].reset_index(drop=True)
    return PreparedRuns(info, prepared.arrays.take(arrays_mask))


def _error_stats(errors: pd.Series) -> tuple[float, float]:
    valid = errors.dropna()
    if valid.empty:
        return float("nan"), float("nan")
    return float(valid.median()), float(valid.quantile(0.9))


def _summary_row(group_by: str, group: str, rows: pd.DataFrame) -> dict[str, object]:
    sim_median, sim_p90 = _error_stats(rows["abs_pct_error"])
    base_median, base_p90 = _error_stats(rows["baseline_abs_pct_error"])
    return {"group_by": group_by, "group": group, "n_rows": len(rows),
            "share_predicted": float(rows["predicted"].notna().mean()),
            "median_ape": sim_median, "p90_ape": sim_p90,
            "baseline_median_ape": base_median, "baseline_p90_ape": base_p90}


def summarize_errors(predictions: pd.DataFrame) -> pd.DataFrame:
    """Median and P90 absolute % error, simulator vs rule of thumb, overall and by group.

    Groups: overall, metric_class (throughput vs time), metric, gpu, workload_kind.
    Input is a `validate` / `leave_one_source_out` frame.
    """
    frame = predictions.assign(
        metric_class=np.where(predictions["metric"].isin(TIME_METRICS), "time", "throughput"),
        overall="all")
    out = []
    for group_by in ("overall", "metric_class", "metric", "gpu", "workload_kind"):
        for group, rows in frame.groupby(group_by, sort=True):
            out.append(_summary_row(group_by, str(group), rows))
    return pd.DataFrame(out)


def leave_one_source_out(runs_df: pd.DataFrame, gpus: pd.DataFrame | Mapping[str, GpuSpec],
                         initial: Calibration | None = None) -> pd.DataFrame:
    """For each distinct `source`, refit on the other sources and predict that source's rows.

    Returns the `validate` columns for every row, predicted by its fold's calibration, plus
    `fold_calibration_rows`.
    """
    from simulator.core.fitting import fit_prepared

    start = initial or Calibration()
    specs = as_gpu_specs(gpus)
    prepared = prepare_runs(runs_df, specs, start)
    sources = prepared.info["source"].to_numpy()
    frames = []
    for source in pd.unique(sources):
        held_out = sources == source
        cal = fit_prepared(subset_prepared(prepared, ~held_out), start)
        frame = validate(runs_df.loc[held_out], specs, cal)
        frames.append(frame.assign(fold_calibration_rows=cal.n_rows))
    return pd.concat(frames, ignore_index=True)
