"""Published whole runs (whole_runs.csv) read as reference rows with metric gpu_hours."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from simulator.core import Calibration
from simulator.core.prediction import prepare_runs
from simulator.core.reference_runs import load_reference_runs
from simulator.core.validation import metric_classes, summarize_errors, validate
from simulator.core.whole_runs import WHOLE_RUN_COLUMNS, whole_run_row, whole_runs_as_reference
from tests.simulator.core.fits import WHOLE_RUNS_CSV


def _row(**cells: object) -> dict[str, object]:
    base: dict[str, object] = {c: None for c in WHOLE_RUN_COLUMNS}
    base.update(run_id="r1", family="F", model_name="M", params_billion="1.1",
                active_params_billion="1.1", tokens_total="3e12", gpu="A100-40GB",
                gpu_count="16", gpu_hours="45312", source_title="T", source_url="u",
                usable_for_goodput_calibration="yes")
    base.update(cells)
    return base


@pytest.mark.parametrize(("cells", "column", "expected"), [
    ({"gpu_count": "768 -> 1536 -> 2304 (ramp; 3072 available)"}, "gpu_count", 2304.0),
    ({"gpu_count": "16 MI250 (32 GCDs)", "gpu": "MI250 (64 GB per GCD)"}, "gpu_count", 16.0),
    ({"global_batch": "384 -> 768 -> 1152 (ramp)"}, "global_batch", 1152.0),
    ({"global_batch": "~576 sequences (2.36M tokens / 4096, derived)"}, "global_batch", 576.0),
    ({"global_batch": "2M tokens (~1024 x 2048)", "seq_len": "2048"}, "global_batch", 977.0),
    ({"n_heads": "32 (8 KV)"}, "n_heads", 32.0),
    ({"gpu_hours": "<504000"}, "value", 504000.0),
    ({"gpu": "H100 (80GB assumed)"}, "gpu", "H100 SXM5-80GB"),
    ({"gpu": "A100-40GB (AWS P4d)"}, "gpu", "A100 SXM4-40GB"),
    ({"gpu": "MI250 (memory not stated)"}, "gpu", "Instinct MI250 OAM-128GB"),
    ({"precision": "bfloat16"}, "precision", "bf16"),
])
def test_text_cells_are_read_to_the_number_they_state(cells, column, expected):
    assert whole_run_row(_row(**cells))[column] == expected


def test_readings_that_are_not_verbatim_are_noted():
    row = whole_run_row(_row(gpu="H100", gpu_hours="<504000", seq_len="32k max"))
    assert "H100 read as H100 SXM5-80GB" in row["notes"]
    assert "upper bound" in row["notes"] and "'32k max' not read" in row["notes"]
    assert math.isnan(row["seq_len"])


def test_moe_rows_keep_total_and_active_parameters_and_unknown_totals_stay_blank():
    moe = whole_run_row(_row(params_billion="132", active_params_billion="36"))
    assert moe["workload_kind"] == "llm_moe" and moe["params_billion"] == 132.0
    unknown = whole_run_row(_row(params_billion="16x3.8B (total not stated)",
                                 active_params_billion="6.6"))
    assert math.isnan(unknown["params_billion"])


def test_a_bad_verdict_names_the_line_and_run():
    frame = pd.DataFrame([_row(), _row(run_id="bad", usable_for_goodput_calibration="maybe")])
    with pytest.raises(ValueError, match=r"line 3 \(bad\): usable_for_goodput_calibration"):
        whole_runs_as_reference(frame)


def test_a_missing_column_is_named():
    with pytest.raises(ValueError, match="missing columns.*gpu_hours"):
        whole_runs_as_reference(pd.DataFrame([_row()]).drop(columns=["gpu_hours"]))


def test_the_shipped_file_is_read_as_gpu_hours_rows_with_their_verdict():
    runs = load_reference_runs(str(WHOLE_RUNS_CSV))
    assert len(runs) == 40 and set(runs["metric"]) == {"gpu_hours"}
    assert set(runs["whole_run_usable"]) == {"yes", "partial", "no"}
    assert runs["source"].str.contains(" \\(whole runs\\): ").all()


def test_only_usable_whole_runs_are_predicted(gpu_specs):
    runs = load_reference_runs(str(WHOLE_RUNS_CSV))
    predictions = validate(runs, gpu_specs, Calibration())
    verdict = runs.set_index("run_id")["whole_run_usable"]
    predicted = predictions.set_index("run_id")["predicted"].notna()
    assert not predicted[verdict[verdict != "yes"].index].any()
    assert predicted[verdict[verdict == "yes"].index].mean() > 0.9
    refused = predictions[predictions["run_id"] == "dbrx-132b"]["note"].iloc[0]
    assert refused.startswith("not predicted: missing") and "partial" in refused


def test_whole_runs_are_their_own_metric_class(gpu_specs):
    runs = load_reference_runs(str(WHOLE_RUNS_CSV))
    summary = summarize_errors(validate(runs.head(8), gpu_specs, Calibration()))
    classes = summary[summary["group_by"] == "metric_class"]["group"].tolist()
    assert classes == ["whole-run"]
    assert list(metric_classes(pd.Series(["gpu_hours", "time_to_train_minutes", "mfu_pct"]))) \
        == ["whole-run", "time", "throughput"]


def test_a_whole_run_takes_longer_than_its_steady_state_by_the_production_overhead(gpu_specs):
    runs = load_reference_runs(str(WHOLE_RUNS_CSV)).head(1)
    lean = validate(runs, gpu_specs, Calibration(production_overhead_fraction=0.01))
    heavy = validate(runs, gpu_specs, Calibration(production_overhead_fraction=0.5))
    ratio = heavy["predicted"].iloc[0] / lean["predicted"].iloc[0]
    assert ratio == pytest.approx(1.5 / 1.01, rel=0.02)


def test_defaults_at_unknown_sequence_and_batch_are_said(gpu_specs):
    runs = load_reference_runs(str(WHOLE_RUNS_CSV))
    phi = runs[runs["run_id"] == "phi-3-mini"]
    note = prepare_runs(phi, gpu_specs, Calibration()).info["note"].iloc[0]
    assert "seq_len assumed 4096" in note
    assert "global batch assumed 1,024 sequences (4,194,304 tokens" in note


def test_fine_grained_experts_run_slower_than_their_dense_twin(gpu_specs):
    """Granite 3.0 1B-A400M: 32 experts of FFN 512, top-8. Its expert GEMMs multiply a quarter
    of the tokens at N = 512 and every token is permuted to 8 experts and back, so the same
    active FLOPs take longer than in a dense model of that shape."""
    runs = load_reference_runs(str(WHOLE_RUNS_CSV))
    moe = runs[runs["run_id"] == "granite3.0-1b-a400m"]
    assert moe[["expert_ffn_hidden_size", "n_experts", "moe_top_k"]].iloc[0].tolist() == [
        512, 32, 8]
    dense = moe.assign(expert_ffn_hidden_size=math.nan)
    cal = Calibration()
    with_experts = validate(moe, gpu_specs, cal)
    without = validate(dense, gpu_specs, cal)
    assert "32 experts of FFN 512, top-8" in with_experts["note"].iloc[0]
    # gpu_hours: the expert shape costs at least 10 % more GPU time for the same FLOPs.
    assert with_experts["predicted"].iloc[0] > 1.1 * without["predicted"].iloc[0]


def test_a_run_read_at_the_default_batch_says_so_in_its_envelope_note(gpu_specs):
    from simulator.core.domain import BATCH_DEFAULT_NOTE

    runs = load_reference_runs(str(WHOLE_RUNS_CSV))
    rows = validate(runs[runs["run_id"].isin(["phi-3-mini", "stablelm-3b-4e1t"])], gpu_specs,
                    Calibration()).set_index("run_id")
    assert BATCH_DEFAULT_NOTE in rows.loc["phi-3-mini", "envelope_note"]
    assert BATCH_DEFAULT_NOTE not in rows.loc["stablelm-3b-4e1t", "envelope_note"]


def test_a_layout_the_source_states_is_the_layout_predicted(gpu_specs):
    """Nemotron-4 15B trained at TP 8 (its Table 2: data-parallel 288 at 2,304 GPUs). Read at
    that layout, its steady-state GPU-hours come out higher than at the layout the search would
    pick for 2,304 H100s, and the predicted layout is the stated one."""
    runs = load_reference_runs(str(WHOLE_RUNS_CSV))
    nemotron = runs[runs["run_id"] == "nemotron-4-15b"]
    assert nemotron[["tp", "pp", "dp"]].iloc[0].tolist() == [8, 1, 288]
    cal = Calibration()
    stated = validate(nemotron, gpu_specs, cal).iloc[0]
    searched = validate(nemotron.assign(tp=math.nan, pp=math.nan, dp=math.nan), gpu_specs,
                        cal).iloc[0]
    assert (stated["tp"], stated["pp"], stated["dp"]) == (8, 1, 288)
    assert searched["tp"] < 8
    assert stated["predicted"] > 1.1 * searched["predicted"]


def test_blank_layout_cells_leave_the_layout_to_the_search():
    row = whole_run_row(_row(tp="4", pp="4", dp="", micro_batch="1"))
    assert (row["tp"], row["pp"], row["micro_batch"]) == (4.0, 4.0, 1.0)
    assert math.isnan(row["dp"])
    assert all(math.isnan(whole_run_row(_row())[c]) for c in ("tp", "pp", "dp", "micro_batch"))
