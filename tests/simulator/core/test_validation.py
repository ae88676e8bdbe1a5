"""Validation against reference_runs.csv, the error summary and leave-one-source-out."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from simulator.core import leave_one_source_out, summarize_errors, validate
from simulator.core.validation import PREDICTION_COLUMNS, THROUGHPUT_METRICS


@pytest.fixture(scope="module")
def loso(runs, gpu_specs) -> pd.DataFrame:
    return leave_one_source_out(runs, gpu_specs)


def test_validate_returns_documented_columns(runs, gpu_specs, calibration):
    frame = validate(runs, gpu_specs, calibration)
    assert list(frame.columns[: len(PREDICTION_COLUMNS)]) == PREDICTION_COLUMNS
    assert len(frame) == len(runs)
    assert frame["predicted"].notna().all()
    band = frame.dropna(subset=["predicted"])
    assert (band["predicted_p10"] <= band["predicted_p90"]).all()


def test_unpredictable_rows_get_nan_and_a_note(runs, gpu_specs, calibration):
    bad = runs.head(3).copy()
    bad.loc[bad.index[0], "gpu"] = "Z9000 SXM-1GB"
    bad.loc[bad.index[1], "params_billion"] = np.nan
    bad.loc[bad.index[2], "workload_kind"] = "other"
    frame = validate(bad, gpu_specs, calibration)
    assert frame["predicted"].isna().all()
    assert frame["note"].str.startswith("not predicted").all()


def test_summary_compares_with_the_rule_of_thumb(runs, gpu_specs, calibration):
    summary = summarize_errors(validate(runs, gpu_specs, calibration))
    assert {"overall", "metric", "gpu", "workload_kind"} <= set(summary["group_by"])
    overall = summary.query("group_by == 'overall'").iloc[0]
    assert overall["share_predicted"] == 1.0
    assert overall["median_ape"] < overall["baseline_median_ape"]


def _metric_row(summary: pd.DataFrame, metric: str) -> pd.Series:
    return summary.query("group_by == 'metric' and group == @metric").iloc[0]


def test_loso_predicts_nearly_every_row_and_meets_time_target(loso):
    summary = summarize_errors(loso)
    assert summary.query("group_by == 'overall'").iloc[0]["share_predicted"] >= 0.95
    assert _metric_row(summary, "time_to_train_minutes")["median_ape"] <= 15.0


def test_loso_beats_rule_of_thumb_on_every_metric(loso):
    summary = summarize_errors(loso).query("group_by == 'metric'")
    assert (summary["median_ape"] < summary["baseline_median_ape"]).all()


def test_loso_meets_throughput_targets(loso):
    rows = loso[loso["metric"].isin(THROUGHPUT_METRICS)]["abs_pct_error"]
    assert rows.median() <= 10.0 and rows.quantile(0.9) <= 30.0
