"""Vectorized catalog sweep."""

from __future__ import annotations

import pandas as pd
import pytest

from simulator.core import (
    PRESETS,
    STATUSES,
    Layout,
    TrainingGoal,
    layout_grid,
    make_hardware,
    simulate,
    sweep,
)
from simulator.core.sweep import OUTPUT_COLUMNS

GOAL = TrainingGoal(tokens=2e12, global_batch_samples=1024)


def _instances() -> pd.DataFrame:
    return pd.DataFrame([
        {"instance_key": "a100x8", "gpu": "A100 SXM4-80GB", "gpus_per_node": 8,
         "intra_node_gbytes_per_s": 300.0, "inter_node_gbits_per_s": 1600.0},
        {"instance_key": "h100x8", "gpu": "H100 SXM5-80GB", "gpus_per_node": 8,
         "intra_node_gbytes_per_s": 450.0, "inter_node_gbits_per_s": 3200.0},
        {"instance_key": "l4x1", "gpu": "L4 PCIe-24GB", "gpus_per_node": 1,
         "intra_node_gbytes_per_s": 32.0, "inter_node_gbits_per_s": 100.0},
        {"instance_key": "mystery", "gpu": "Z9000", "gpus_per_node": 8,
         "intra_node_gbytes_per_s": 1.0, "inter_node_gbits_per_s": 1.0},
    ])


def test_sweep_returns_best_feasible_configuration_per_instance_and_nodes(gpu_specs, calibration):
    result = sweep(PRESETS["llama2-70b"], GOAL, _instances(), [1, 2, 4, 8], calibration,
                   gpu_specs)
    frame = result.configurations
    assert list(frame.columns) == OUTPUT_COLUMNS
    assert not frame.duplicated(["instance_key", "nodes"]).any()
    assert set(frame["instance_key"]) <= {"a100x8", "h100x8", "l4x1"}
    assert (frame["memory_per_gpu_gib"] <= 80.0).all()
    assert result.n_configurations == 4 * 4 * len(layout_grid(PRESETS["llama2-70b"]))


def test_sweep_matches_simulate_for_the_same_configuration(gpu_specs, calibration):
    result = sweep(PRESETS["llama2-70b"], GOAL, _instances().head(1), [4], calibration,
                   gpu_specs, keep="all")
    row = result.configurations.iloc[0]
    layout = Layout(tp=int(row.tp), pp=int(row.pp), dp=int(row.dp), zero_stage=int(row.zero_stage),
                    recompute=row.recompute, micro_batch=int(row.micro_batch),
                    grad_accum=int(row.grad_accum), virtual_stages=int(row.virtual_stages))
    hardware = make_hardware(gpu_specs["A100 SXM4-80GB"], gpus_per_node=8, n_nodes=4,
                             intra_node_gbytes_per_s=300.0, inter_node_gbits_per_s=1600.0)
    single = simulate(PRESETS["llama2-70b"], hardware, layout, GOAL, calibration)
    assert row.step_seconds == pytest.approx(single.time.step_seconds)
    assert row.memory_per_gpu_gib == pytest.approx(single.memory.total_gib)
    assert row.mfu == pytest.approx(single.mfu)


def test_sweep_rejects_missing_columns(gpu_specs, calibration):
    with pytest.raises(ValueError):
        sweep(PRESETS["mpt-7b"], GOAL, _instances().drop(columns="gpu"), [1], calibration,
              gpu_specs)


def test_sweep_rows_carry_calibration_status_and_goodput(gpu_specs, calibration):
    frame = sweep(PRESETS["llama2-70b"], GOAL, _instances(), [1, 8], calibration,
                  gpu_specs).configurations
    status = dict(zip(frame["instance_key"], frame["calibration_status"], strict=False))
    assert status["h100x8"] == "calibrated" and set(status.values()) <= set(STATUSES)
    assert (frame["goodput_fraction"] < 1.0).all()
    assert (frame["time_to_train_p10_hours"] <= frame["time_to_train_hours"]).all()
    assert (frame["time_to_train_hours"] <= frame["time_to_train_p90_hours"]).all()


A10G_INSTANCE = pd.DataFrame([{"instance_key": "g5.12xlarge", "gpu": "A10G PCIe-24GB",
                               "gpus_per_node": 4, "intra_node_gbytes_per_s": 32.0,
                               "inter_node_gbits_per_s": 40.0}])


def test_a10g_is_swept_at_its_fp32_cuda_core_rate_with_its_note(gpu_specs, calibration):
    result = sweep(PRESETS["mpt-125m"], TrainingGoal(tokens=2.5e9, global_batch_samples=256),
                   A10G_INSTANCE, [1, 2], calibration, gpu_specs)
    frame = result.configurations
    assert len(frame) == 2 and set(frame["precision"]) == {"fp32"}
    assert set(frame["calibration_status"]) == {"uncalibrated"}
    assert all("FP32 CUDA-core rate (31.52 TFLOPS)" in note and "lower bound" in note
               for note in frame["rate_note"])
    # MFU is against the FP32 peak: at most the CUDA-core GEMM ceiling
    assert (frame["mfu"] > 0.3).all() and (frame["mfu"] <= 0.85).all()


def test_a10g_tf32_is_judged_as_the_cuda_core_run_it_is(gpu_specs, calibration):
    # Ampere TF32 encoder runs exist (A100 tensor cores); they do not calibrate A10G CUDA cores.
    frame = sweep(PRESETS["bert-large"], TrainingGoal(samples=1e6, global_batch_samples=256),
                  A10G_INSTANCE, [1], calibration, gpu_specs, precision="tf32").configurations
    assert len(frame) == 1
    assert frame["calibration_status"].iloc[0] == "uncalibrated"
    assert frame["rate_note"].iloc[0].startswith("planned at the FP32 CUDA-core rate")


def test_gpus_with_tensor_rates_carry_no_rate_note(gpu_specs, calibration):
    result = sweep(PRESETS["llama2-7b"], GOAL, _instances().head(3), [1], calibration, gpu_specs)
    assert len(result.configurations) and (result.configurations["rate_note"] == "").all()


def test_the_grid_interleaves_pipelines_with_at_least_a_layer_per_chunk():
    grid = layout_grid(PRESETS["llama2-70b"])  # 80 layers: 5 a stage at PP 16
    chunks = grid.groupby("pp")["virtual_stages"].agg(lambda v: sorted(set(v)))
    assert chunks[1] == [1] and chunks[2] == [1, 2, 4] and chunks[16] == [1, 2, 4]
    # Stages need not hold equal layer counts: Llama 3 405B ran 126 layers on 16 stages.
    uneven = layout_grid(PRESETS["llama3-405b"], max_pp=32)
    chunks = uneven.groupby("pp")["virtual_stages"].agg(lambda v: sorted(set(v)))
    assert chunks[16] == [1, 2, 4] and chunks[32] == [1, 2]  # 126 / 32: 3 or 4 a stage


def test_a_deep_pipeline_is_planned_interleaved_and_says_so(gpu_specs, calibration):
    grid = layout_grid(PRESETS["llama2-70b"])
    deep = grid[(grid["pp"] == 8) & (grid["tp"] == 8)]
    result = sweep(PRESETS["llama2-70b"], GOAL, _instances().head(1), [16], calibration,
                   gpu_specs, layouts=deep)
    row = result.configurations.iloc[0]
    assert row.virtual_stages > 1  # bubble (pp-1)/(v·m) beats plain 1F1B's (pp-1)/m
    plain = sweep(PRESETS["llama2-70b"], GOAL, _instances().head(1), [16], calibration,
                  gpu_specs, layouts=deep[deep["virtual_stages"] == 1]).configurations.iloc[0]
    assert row.step_seconds < plain.step_seconds


def test_a_plan_without_a_batch_says_so_and_gets_a_wider_band(gpu_specs, calibration):
    from simulator.core.domain import BATCH_DEFAULT_BAND_SCALE, BATCH_DEFAULT_NOTE

    given = sweep(PRESETS["llama2-70b"], GOAL, _instances().head(1), [8], calibration,
                  gpu_specs).configurations.iloc[0]
    guessed = sweep(PRESETS["llama2-70b"], TrainingGoal(tokens=2e12), _instances().head(1),
                    [8], calibration, gpu_specs).configurations.iloc[0]
    assert BATCH_DEFAULT_NOTE in guessed["envelope_note"]
    assert BATCH_DEFAULT_NOTE not in given["envelope_note"]

    def spread(row: pd.Series) -> float:
        return float(row["time_to_train_p90_hours"] / row["time_to_train_p10_hours"])

    assert spread(guessed) == pytest.approx(spread(given) ** BATCH_DEFAULT_BAND_SCALE, rel=1e-6)


def test_the_grid_does_not_repeat_zero_1_under_a_pipeline():
    """ZeRO 2/3 under a pipeline run as ZeRO 1 (one gather a step): the default grid tries
    them only without a pipeline, so a sweep lists no layout twice; a caller that fixes
    stage 3 still gets its pipeline layouts (FSDP2 + pipelining, labelled as such)."""
    grid = layout_grid(PRESETS["llama2-70b"])
    assert not ((grid["pp"] > 1) & (grid["zero_stage"] > 1)).any()
    assert ((grid["pp"] == 1) & (grid["zero_stage"] == 3)).any()
    assert set(grid.loc[grid["pp"] > 1, "zero_stage"]) == {0, 1}
    fixed = layout_grid(PRESETS["llama2-70b"], zero_stages=(3,))
    assert set(fixed["zero_stage"]) == {3} and (fixed["pp"] > 1).any()
