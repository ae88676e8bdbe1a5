"""Validation against the reference runs: columns, notes, answerability and error summaries."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from simulator.core import summarize_errors, validate
from simulator.core.reference_runs import DEFAULT_GPU_COUNT, row_workload, run_family
from simulator.core.validation import PREDICTION_COLUMNS, scale_band, single_factor_floor


def test_validate_returns_documented_columns(runs, gpu_specs, calibration):
    frame = validate(runs, gpu_specs, calibration)
    assert list(frame.columns[: len(PREDICTION_COLUMNS)]) == PREDICTION_COLUMNS
    assert len(frame) == len(runs)
    assert frame["predicted"].notna().all()
    assert (frame["predicted_p10"] <= frame["predicted"]).all()
    assert (frame["predicted"] <= frame["predicted_p90"]).all()
    assert set(frame["calibration_status"]) <= {"calibrated", "extrapolated", "uncalibrated"}


def test_unpredictable_rows_get_nan_and_a_note(runs, gpu_specs, calibration):
    bad = runs.head(3).copy()
    bad.loc[bad.index[0], "gpu"] = "Z9000 SXM-1GB"
    bad.loc[bad.index[1], "params_billion"] = np.nan
    bad.loc[bad.index[2], "workload_kind"] = "other"
    frame = validate(bad, gpu_specs, calibration)
    assert frame["predicted"].isna().all()
    assert frame["note"].str.startswith("not predicted").all()
    assert (frame["calibration_status"] == "not predicted").all()


def test_time_rows_without_a_token_count_are_not_answered(runs, gpu_specs, calibration):
    timed = runs[runs["metric"] == "time_to_train_minutes"].head(2).copy()
    timed["tokens_or_samples_total"] = np.nan
    frame = validate(timed, gpu_specs, calibration)
    assert frame["predicted"].isna().all()
    assert (frame["note"] == "not predicted: missing tokens_or_samples_total").all()
    assert not frame["is_answerable"].any()


def test_gpu_hours_without_a_gpu_count_plan_at_the_default_scale(runs, gpu_specs, calibration):
    row = runs[runs["metric"] == "time_to_train_minutes"].head(1).copy()
    row["metric"], row["gpu_count"], row["dp"] = "gpu_hours", np.nan, np.nan
    frame = validate(row, gpu_specs, calibration)
    assert frame["predicted"].notna().all()
    assert f"planned at {DEFAULT_GPU_COUNT} GPUs" in frame["note"].iloc[0]
    assert frame["n_gpus"].iloc[0] == DEFAULT_GPU_COUNT


def test_gpu_hours_without_a_gpu_count_use_the_parallel_degrees(runs, gpu_specs, calibration):
    row = runs[runs["metric"] == "time_to_train_minutes"].head(1).copy()
    row["metric"], row["gpu_count"] = "gpu_hours", np.nan
    frame = validate(row, gpu_specs, calibration)
    assert frame["n_gpus"].iloc[0] == 8 and "from the parallel degrees" in frame["note"].iloc[0]


@pytest.mark.parametrize(("source", "family"), [
    ("MLPerf Training v2.1 results: Dell XE8545x4A100-SXM-40GB (bert)",
     "MLPerf Training v2.1 results"),
    ("Lambda deeplearning-benchmark: PyTorch training throughput, FP16 (pytorch/x.csv)",
     "Lambda deeplearning-benchmark"),
    ("MPT Training Benchmarks (mosaicml/llm-foundry scripts/train/benchmarking/README.md)",
     "MPT Training Benchmarks (mosaicml/llm-foundry scripts/train/benchmarking/README.md)"),
    ("ZeRO: Memory Optimizations Toward Training Trillion Parameter Models", "ZeRO"),
])
def test_family_is_the_source_up_to_its_first_colon(source, family):
    assert run_family(source) == family


@pytest.mark.parametrize(("n_gpus", "band"), [(1, "1 GPU"), (8, "2-8 GPUs"), (9, "9-64 GPUs"),
                                               (6144, ">4096 GPUs")])
def test_scale_bands(n_gpus, band):
    assert scale_band(n_gpus) == band


def test_summary_has_every_grouping_and_the_rule_of_thumb(runs, gpu_specs, calibration):
    summary = summarize_errors(validate(runs, gpu_specs, calibration))
    assert {"overall", "metric", "gpu", "precision", "scale_band", "family",
            "calibration_status"} <= set(summary["group_by"])
    overall = summary.query("group_by == 'overall'").iloc[0]
    assert overall["share_predicted"] == 1.0
    assert 0.0 <= overall["coverage"] <= 1.0
    assert overall["median_ape"] < overall["baseline_median_ape"]


def test_summary_counts_coverage_and_bias_by_hand():
    frame = pd.DataFrame({
        "run_id": ["a", "b", "c"], "metric": ["samples_per_sec"] * 3, "gpu": ["X"] * 3,
        "workload_kind": ["llm"] * 3, "family": ["f"] * 3, "reported": [100.0, 100.0, 100.0],
        "predicted": [110.0, 80.0, np.nan], "abs_pct_error": [10.0, 20.0, np.nan],
        "signed_pct_error": [10.0, -20.0, np.nan], "is_covered": [1.0, 0.0, np.nan],
        "baseline_abs_pct_error": [50.0, 50.0, np.nan], "is_answerable": [True, True, False]})
    overall = summarize_errors(frame).query("group_by == 'overall'").iloc[0]
    assert overall["share_predicted"] == 1.0  # the unanswerable row does not count against it
    assert overall["median_ape"] == 15.0 and overall["bias_pct"] == -5.0
    assert overall["coverage"] == 0.5


def test_only_mlperf_cnn_rows_get_fused_epilogues(all_runs):
    kinds = all_runs[all_runs["workload_kind"] == "resnet50"]
    fused = {row["run_id"]: row_workload(row.to_dict())[0].has_fused_epilogues
             for _, row in kinds.iterrows()}
    assert fused["MLPERF-v2.0-NVIDIA-dgxa100_ngc22.04_mxnet-resnet"]
    assert not fused["DLE-RN50-A10080-1gpu-AMP"] and not fused["LAMBDA-RN50-A100SXM80-1gpu-AMP"]


def test_fp8_throughput_is_banded_by_its_own_class(all_runs, gpu_specs, calibration):
    """fp8 recipes vary in ways no column records: fp8 throughput rows take the fp8 class's
    out-of-family quantiles, bf16 rows the decoder class's."""
    from dataclasses import replace

    from simulator.core.calibration import band_class

    assert band_class("llm", "tokens_per_sec_per_gpu", "fp8") == "fp8"
    assert band_class("llm", "tokens_per_sec_per_gpu", "bf16") == "llm"
    assert band_class("llm", "gpu_hours", "fp8") == "whole_run"
    ids = ["TTITAN-2412-8B-8gpu-fsdp-compile", "TTITAN-2412-8B-8gpu-fsdp-compile-float8"]
    rows = all_runs[all_runs["run_id"].isin(ids)]
    narrow_llm = replace(calibration, band_log_p10=-0.01, band_log_p90=0.01,
                         band_fp8_log_p10=-0.5, band_fp8_log_p90=0.5)
    frame = validate(rows, gpu_specs, narrow_llm).set_index("run_id")
    spread = np.log(frame["predicted_p90"] / frame["predicted_p10"]) / frame["band_scale"]
    assert spread[ids[0]] == pytest.approx(0.02)
    assert spread[ids[1]] == pytest.approx(1.0)


def _ratios_frame(ratios: list[float], metric: str = "gpu_hours") -> pd.DataFrame:
    """Rows whose published ÷ predicted value is each of `ratios`."""
    return pd.DataFrame({"metric": metric, "reported": [100.0 * r for r in ratios],
                         "predicted": 100.0})


def test_single_factor_floor_finds_the_factor_and_the_p90_it_leaves() -> None:
    floor = single_factor_floor(_ratios_frame([1.0] * 9 + [2.0]))
    assert floor is not None and floor.n_rows == 10
    # x1 leaves nine rows exact and one 50 % off: P90 (linear) = 0.1 x 50 % = 5 %.
    assert floor.factor == pytest.approx(1.0) and floor.p90_ape == pytest.approx(5.0)
    assert (floor.ratio_low, floor.ratio_high) == (1.0, 2.0)


def test_figures_a_factor_cannot_reconcile_leave_a_floor() -> None:
    # Half the rows published at half the prediction, half at twice: the best single factor
    # still leaves every row at least a third off.
    floor = single_factor_floor(_ratios_frame([0.5, 2.0] * 5))
    assert floor is not None and floor.p90_ape > 33.0
    assert single_factor_floor(_ratios_frame([1.0, 2.0], metric="tokens_per_sec_per_gpu")) is None
