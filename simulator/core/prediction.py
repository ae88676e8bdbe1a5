"""Vectorized prediction of reference-run metrics (reference_runs.csv schema).

`prepare_runs` turns rows into simulator inputs once (choosing layouts for blank fields);
`predict_targets` is the fitting hot path. Rows that cannot be predicted keep a note saying
why ("not predicted: missing tokens_or_samples_total"), never an exception.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from functools import cached_property
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
from simulator.core.domain import DomainPoint, band_group
from simulator.core.envelope import metric_kind, params_per_gpu
from simulator.core.goodput import GoodputAssumptions, goodput_fraction, whole_run_goodput
from simulator.core.hardware import GpuSpec, gpu_specs_from_frame
from simulator.core.layout import Layout
from simulator.core.reference_runs import (
    TIME_METRICS,
    RunInputs,
    run_family,
    run_inputs,
    run_year,
)
from simulator.core.search import best_layout
from simulator.core.timing import step_time

THROUGHPUT_METRICS: tuple[str, ...] = ("tokens_per_sec_per_gpu", "samples_per_sec",
                                       "tflops_per_gpu", "mfu_pct")
METRICS = THROUGHPUT_METRICS + TIME_METRICS
RULE_OF_THUMB_EFFICIENCY = 0.40
DEFAULT_GOODPUT = GoodputAssumptions()


@dataclass(frozen=True)
class PreparedRuns:
    """Reference rows with chosen layouts, ready for repeated vectorized prediction.

    `info` has one row per input row (run_id, metric, reported, gpu, workload_kind, source,
    family, note, is_predictable, convention, work_samples, n_gpus, architecture, seq_len and
    the chosen layout); `arrays` holds the predictable rows in order.
    """

    info: pd.DataFrame
    arrays: ConfigArrays

    @property
    def is_predictable(self) -> np.ndarray:
        return self.info["is_predictable"].to_numpy(dtype=bool)

    def domain_points(self) -> list[DomainPoint]:
        """DomainPoint of every predictable row, in order."""
        sub = self.info.loc[self.is_predictable]
        return [DomainPoint(str(r["gpu_name"]), str(r["architecture"]), str(r["precision"]),
                            float(r["n_gpus"]), float(r["seq_len"]),
                            band_group(str(r["workload_kind"])),
                            bool(r.get("is_batch_default", False)),
                            bool(r.get("is_fp8_rowwise", False)), float(r["pp"]),
                            float(params_per_gpu(float(r["params"]), float(r["tp"]),
                                                 float(r["pp"]))),
                            float(r.get("year", 0) or 0), metric_kind(str(r["metric"])))
                for r in sub.to_dict("records")]


@dataclass(frozen=True)
class RowTargets:
    """Numpy views of the predictable rows' metric definitions (fast repeated prediction)."""

    metric: np.ndarray
    convention: np.ndarray
    work_samples: FloatArray
    reported: FloatArray
    is_steady_figure: np.ndarray | None = None  # whole runs published as steady-state time

    @classmethod
    def of(cls, prepared: PreparedRuns) -> RowTargets:
        sub = prepared.info.loc[prepared.is_predictable]
        convention = np.array([v if isinstance(v, str) else "" for v in sub["convention"]])
        steady = sub.get("is_steady_figure", pd.Series(False, index=sub.index))
        return cls(sub["metric"].to_numpy(), convention,
                   sub["work_samples"].to_numpy(dtype=float), sub["reported"].to_numpy(dtype=float),
                   steady.fillna(False).to_numpy(dtype=bool))

    @cached_property
    def metric_masks(self) -> list[np.ndarray]:
        """Per METRICS entry, which rows report it (kept: a fit predicts them thousands of
        times)."""
        return [self.metric == m for m in METRICS]

    @cached_property
    def is_time_metric(self) -> np.ndarray:
        """Rows whose metric is a time (TIME_METRICS): a larger value is slower."""
        return np.isin(self.metric, TIME_METRICS)

    def speed_ratio(self, predicted: FloatArray) -> FloatArray:
        """speed_ratio of these rows."""
        return _speed_ratio(self.is_time_metric, predicted, self.reported)


def as_gpu_specs(gpus: pd.DataFrame | Mapping[str, GpuSpec]) -> dict[str, GpuSpec]:
    """Accept a gpus.csv-style DataFrame or an existing name -> GpuSpec mapping."""
    return gpu_specs_from_frame(gpus) if isinstance(gpus, pd.DataFrame) else dict(gpus)


def _prepare_row(row: pd.Series, gpus: dict[str, GpuSpec], cal: Calibration) -> dict[str, object]:
    base: dict[str, object] = {
        "run_id": row["run_id"], "metric": row["metric"], "reported": float(row["value"]),
        "gpu": row["gpu"], "workload_kind": row["workload_kind"], "source": row["source"],
        "family": run_family(str(row["source"])),
        "year": run_year(cast(dict[str, Any], row.to_dict())),
        "convention": row.get("flops_include_recompute"), "is_predictable": False,
        "whole_run_usable": _whole_run_usable(row),
        "is_steady_figure": row.get("whole_run_scope") == "steady",
        "is_own_run": isinstance(row.get("is_own_run"), bool | np.bool_)
        and bool(row.get("is_own_run"))}
    try:
        if row["metric"] not in METRICS:
            raise ValueError(f"unknown metric {row['metric']!r}")
        if row.get("whole_run_usable") == "no":
            raise ValueError("missing a whole-run figure (usable_for_goodput_calibration: no)")
        if row.get("whole_run_usable") == "partial":
            raise ValueError("missing a whole-run figure of known scope (usable_for_goodput_"
                             "calibration: partial, an upper bound or a loose scope)")
        inputs = run_inputs(cast(dict[str, Any], row.to_dict()), gpus)
        choice = best_layout(inputs.workload, inputs.hardware, inputs.goal, cal, inputs.constraints)
    except ValueError as exc:
        return {**base, "note": f"not predicted: {exc}"}
    notes = list(inputs.notes) + ([] if choice.is_fit else ["memory model says it does not fit"])
    return {**base, **_row_columns(inputs, choice.result.layout), "note": "; ".join(notes),
            "is_predictable": True, "work_samples": inputs.goal.total_samples(inputs.workload),
            "n_gpus": choice.result.n_gpus, "precision": choice.result.layout.precision,
            "gpu_name": inputs.hardware.gpu.name,
            "architecture": inputs.hardware.gpu.architecture,
            "is_batch_default": inputs.goal.global_batch_samples is None,
            "is_fp8_rowwise": choice.result.layout.is_fp8_rowwise}


def _whole_run_usable(row: pd.Series) -> str:
    """"yes"/"partial"/"no" for whole-run rows, "" for benchmark rows."""
    value = row.get("whole_run_usable")
    return value if isinstance(value, str) else ""


def _row_columns(inputs: RunInputs, layout: Layout) -> dict[str, object]:
    return {**workload_columns(inputs.workload),
            **hardware_columns(inputs.hardware, layout.precision), **layout_columns(layout),
            "recompute_mode": layout.recompute}


# Hears how far long work is: (share done, 0..1; a line saying where).
Progress = Callable[[float, str], None]
PREPARE_PROGRESS_EVERY = 25  # rows between two progress reports


def progress_span(progress: Progress, start: float, end: float) -> Progress:
    """`progress` for one part of a longer job: the part's 0..1 maps onto start..end."""
    return lambda share, line: progress(start + (end - start) * share, line)


def prepare_runs(runs_df: pd.DataFrame, gpus: pd.DataFrame | Mapping[str, GpuSpec],
                 calibration: Calibration, progress: Progress | None = None) -> PreparedRuns:
    """Build inputs and choose layouts for every row (layout search uses `calibration`);
    `progress`, when given, hears every PREPARE_PROGRESS_EVERY rows."""
    specs = as_gpu_specs(gpus)
    prepared = []
    for index, (_, row) in enumerate(runs_df.iterrows()):
        if progress is not None and index and index % PREPARE_PROGRESS_EVERY == 0:
            progress(index / len(runs_df), f"choosing layouts: {index:,} of {len(runs_df):,} runs")
        prepared.append(_prepare_row(row, specs, calibration))
    info = pd.DataFrame(prepared)
    ok = info["is_predictable"].to_numpy(dtype=bool)
    arrays = ConfigArrays.from_columns(info.loc[ok]) if ok.any() else _empty_arrays()
    return PreparedRuns(info, arrays)


def _empty_arrays() -> ConfigArrays:
    return ConfigArrays(**{f.name: np.zeros(0) for f in fields(ConfigArrays)})


def metric_values(c: ConfigArrays, samples_per_second: FloatArray, executed_flops: FloatArray,
                  targets: RowTargets, overhead_seconds: float,
                  goodput: GoodputAssumptions = DEFAULT_GOODPUT,
                  whole_run: GoodputAssumptions = DEFAULT_GOODPUT) -> FloatArray:
    """Predicted value of each row's metric from throughput (samples/s) per row.

    Time metrics are steady-state time / goodput plus the fixed run overhead: benchmark times
    to train (MLPerf) with `goodput`, published whole-run GPU-hours with `whole_run` (which
    adds the production overhead).
    """
    n_gpus, samples = c.n_gpus, samples_per_second
    full = c.linear_train_flops + c.linear_recompute_flops + 4.0 * c.attention_fwd_flops
    convention = targets.convention
    # Blank convention: assume model FLOPs (PaLM/MFU style), the most common unstated count.
    per_sample = np.where(convention == "yes", full,
                          np.where(convention == "rule", executed_flops, c.model_flops))
    flops = per_sample * samples / n_gpus
    steady = targets.work_samples / samples
    minutes = (steady / goodput_fraction(n_gpus, steady, goodput) + overhead_seconds) / 60.0
    whole_minutes = (steady / goodput_fraction(n_gpus, steady, whole_run)
                     + overhead_seconds) / 60.0
    if targets.is_steady_figure is not None:
        whole_minutes = np.where(targets.is_steady_figure, minutes, whole_minutes)
    choices = [samples * c.seq_len / n_gpus, samples, flops / 1e12,
               100.0 * flops / (c.peak_tflops * 1e12), minutes, whole_minutes * n_gpus / 60.0]
    # np.select's result, without its broadcasting of every choice (the fitting hot path).
    values = np.full(targets.metric.shape, np.nan)
    for is_metric, choice in zip(targets.metric_masks, choices, strict=True):
        np.copyto(values, choice, where=is_metric)
    return values


def predict_targets(c: ConfigArrays, targets: RowTargets, calibration: Calibration) -> FloatArray:
    """Predicted metric for arrays/targets of predictable rows (the fitting hot path)."""
    times = step_time(c, calibration)
    return metric_values(c, times.samples_per_second, times.hardware_flops_per_sample,
                         targets, calibration.run_overhead_seconds, DEFAULT_GOODPUT,
                         whole_run_goodput(calibration.production_overhead_fraction))


def predict_prepared(prepared: PreparedRuns, calibration: Calibration) -> FloatArray:
    """Predicted metric per input row (NaN where not predictable)."""
    out = np.full(len(prepared.info), np.nan)
    ok = prepared.is_predictable
    if ok.any():
        out[ok] = predict_targets(prepared.arrays, RowTargets.of(prepared), calibration)
    return out


def baseline_prepared(prepared: PreparedRuns) -> FloatArray:
    """Rule of thumb: 6·params·tokens (ResNet: 3x forward FLOPs) at 40% of dense peak.

    Its FLOP rate is 40% of peak under any counting convention; no goodput loss.
    """
    out = np.full(len(prepared.info), np.nan)
    ok = prepared.is_predictable
    if not ok.any():
        return out
    c, targets = prepared.arrays, RowTargets.of(prepared)
    per_sample = np.where(c.is_transformer > 0, 6.0 * c.params * c.seq_len, c.linear_train_flops)
    samples = RULE_OF_THUMB_EFFICIENCY * c.peak_tflops * 1e12 * c.n_gpus / per_sample
    plain = RowTargets(targets.metric, np.full(len(per_sample), "rule"), targets.work_samples,
                       targets.reported, targets.is_steady_figure)
    no_loss = GoodputAssumptions(0.0, 0.0, 0.0, 0.0)
    out[ok] = metric_values(c, samples, per_sample, plain, 0.0, no_loss, no_loss)
    return out


def speed_ratio(metric: np.ndarray, predicted: FloatArray, reported: FloatArray) -> FloatArray:
    """log(predicted/reported) expressed for speed (time metrics inverted)."""
    return _speed_ratio(np.isin(metric, TIME_METRICS), predicted, reported)


def _speed_ratio(is_time: np.ndarray, predicted: FloatArray, reported: FloatArray) -> FloatArray:
    ratio = np.log(predicted / reported)
    return np.where(is_time, -ratio, ratio)


def subset_prepared(prepared: PreparedRuns, mask: np.ndarray) -> PreparedRuns:
    """Rows of `prepared` selected by a boolean mask over its info rows."""
    arrays_mask = mask[prepared.is_predictable]
    info = prepared.info.loc[mask].reset_index(drop=True)
    return PreparedRuns(info, prepared.arrays.take(arrays_mask))
