"""simulate(): invariants, the Megatron GPT-3 worked example, input checks."""

from __future__ import annotations

import json
import math
from dataclasses import replace

import pytest

from simulator.core import (
    PRESETS,
    GoodputAssumptions,
    Layout,
    LayoutConstraints,
    TrainingGoal,
    best_layout,
    llm_from_params,
    make_hardware,
    simulate,
)
from simulator.core.arrays import config_arrays
from simulator.core.timing import attention_roofline
from simulator.core.workloads import dense_llm

GPT3_GOAL = TrainingGoal(tokens=300e9, global_batch_samples=1536)


def _a100_cluster(gpu_specs, nodes):
    return make_hardware(gpu_specs["A100 SXM4-80GB"], gpus_per_node=8, n_nodes=nodes,
                         intra_node="nvswitch", inter_node_gbits_per_s=1600)


def test_gpt3_on_1024_a100_band_contains_34_days(gpu_specs, calibration):
    # Narayanan et al.'s 34 days is steady state (8·T·P/(n·X)): time it without the
    # production overhead a whole run adds (that run is longer, see the next assertion).
    layout = Layout(tp=8, pp=8, dp=16, recompute="full", micro_batch=1, grad_accum=96)
    cluster = _a100_cluster(gpu_specs, 128)
    result = simulate(PRESETS["gpt3-175b"], cluster, layout, GPT3_GOAL, calibration,
                      GoodputAssumptions())
    assert result.time_to_train_p10_hours / 24 <= 34 <= result.time_to_train_p90_hours / 24
    whole = simulate(PRESETS["gpt3-175b"], cluster, layout, GPT3_GOAL, calibration)
    assert whole.time_to_train_hours > result.time_to_train_hours * 1.2
    assert result.memory.is_fit


def test_step_time_parts_add_up(gpu_specs, calibration):
    layout = Layout(tp=8, pp=8, dp=16, recompute="full", micro_batch=1, grad_accum=96)
    r = simulate(PRESETS["gpt3-175b"], _a100_cluster(gpu_specs, 128), layout, GPT3_GOAL,
                 calibration)
    t = r.time
    parts = (t.compute_seconds + t.tp_comm_seconds + t.pp_comm_seconds + t.dp_comm_seconds
             + t.bubble_seconds + t.optimizer_seconds + t.overhead_seconds)
    assert t.step_seconds == pytest.approx(parts)
    assert r.samples_per_second == pytest.approx(1536 / t.step_seconds)
    assert r.hfu > r.mfu  # full recompute executes an extra forward pass
    assert r.gpu_hours == pytest.approx(r.time_to_train_hours * 1024)
    assert r.energy_kwh == pytest.approx(r.gpu_hours * 0.4)


def test_result_is_json_safe(gpu_specs, calibration):
    r = simulate(PRESETS["llama2-7b"], _a100_cluster(gpu_specs, 1),
                 Layout(dp=8, zero_stage=3, recompute="full", micro_batch=1, grad_accum=128),
                 TrainingGoal(tokens=2e12), calibration)
    data = json.loads(json.dumps(r.to_dict()))
    assert data["layout"]["zero_stage"] == 3
    assert math.isclose(data["time_to_train_days"], r.time_to_train_days)


@pytest.mark.parametrize(("layout", "gpu"), [
    (Layout(dp=4), "A100 SXM4-80GB"),                    # GPU count mismatch
    (Layout(dp=8, precision="bf16"), "V100 SXM2-32GB"),  # no bf16 on V100
    (Layout(dp=8, precision="fp8"), "A100 SXM4-80GB"),   # no fp8 on A100
])
def test_bad_configurations_raise(gpu_specs, calibration, layout, gpu):
    hardware = make_hardware(gpu_specs[gpu], gpus_per_node=8, n_nodes=1)
    with pytest.raises(ValueError):
        simulate(PRESETS["llama2-7b"], hardware, layout, TrainingGoal(tokens=1e9), calibration)


def test_more_bandwidth_never_slows_a_step(gpu_specs, calibration):
    layout = Layout(dp=64, zero_stage=3, recompute="full", micro_batch=1, grad_accum=16)
    times = []
    for gbits in (100, 400, 1600, 3200):
        hardware = make_hardware(gpu_specs["A100 SXM4-80GB"], gpus_per_node=8, n_nodes=8,
                                 inter_node_gbits_per_s=gbits)
        r = simulate(PRESETS["llama2-13b"], hardware, layout, TrainingGoal(tokens=1e9), calibration)
        times.append(r.time.step_seconds)
    assert times == sorted(times, reverse=True)


def test_best_layout_keeps_tp_in_node_and_fits(gpu_specs, calibration):
    choice = best_layout(PRESETS["llama2-70b"], _a100_cluster(gpu_specs, 8),
                         TrainingGoal(tokens=2e12, global_batch_samples=1024), calibration)
    layout = choice.result.layout
    assert choice.is_fit and choice.result.memory.is_fit
    assert layout.tp <= 8 and layout.n_gpus == 64
    assert layout.global_batch >= 1024


def test_best_layout_reports_when_nothing_fits(gpu_specs, calibration):
    hardware = make_hardware(gpu_specs["A100 SXM4-40GB"], gpus_per_node=1, n_nodes=1)
    choice = best_layout(PRESETS["llama2-70b"], hardware, TrainingGoal(tokens=1e9), calibration)
    assert not choice.is_fit
    assert "does not fit" in choice.result.memory.overflow_message


def test_a_gpu_without_the_rate_is_refused_by_name_not_with_a_crash(gpu_specs, calibration):
    # e.g. a database catalog row older than gpus.csv: the GPU lacks the precision's rate.
    blank = replace(gpu_specs["A100 SXM4-80GB"], fp32_tflops=math.nan, tf32_tflops=math.nan)
    hardware = make_hardware(blank, gpus_per_node=8, n_nodes=1)
    with pytest.raises(ValueError, match="no published fp32 rate"):
        best_layout(PRESETS["llama2-7b"], hardware, TrainingGoal(tokens=1e9), calibration,
                    LayoutConstraints(precision="fp32"))


def test_sharded_rings_lose_nic_parallelism_over_many_nodes(gpu_specs, calibration):
    workload, goal = PRESETS["llama2-13b"], TrainingGoal(tokens=1e9)

    def dp_seconds(nodes: int, zero_stage: int) -> float:
        layout = Layout(dp=8 * nodes, zero_stage=zero_stage, recompute="full", micro_batch=1)
        return simulate(workload, _a100_cluster(gpu_specs, nodes), layout, goal,
                        calibration).time.dp_comm_total_seconds

    assert dp_seconds(128, 3) > 5 * dp_seconds(2, 3)  # about one NIC per GPU at 128 nodes
    assert dp_seconds(128, 0) == pytest.approx(dp_seconds(2, 0), rel=0.1)  # all-reduce


def test_the_last_pipeline_stage_carries_the_output_projection(gpu_specs, calibration):
    # MT-NLG 530B's shape (105 layers, hidden 20,480) on 35 stages: 3 layers a stage, and the
    # last one also runs the 51,200-wide output projection (about 0.2 of a layer).
    workload = dense_llm("mt-nlg", n_layers=105, hidden_size=20480, n_heads=128, seq_len=2048,
                         vocab_size=51200, params=530e9)
    wide = replace(workload, vocab_size=256000)

    def compute(w, pp: int) -> float:
        layout = Layout(tp=8, pp=pp, dp=1, recompute="full", micro_batch=1, grad_accum=140)
        hardware = _a100_cluster(gpu_specs, pp)
        return simulate(w, hardware, layout, GPT3_GOAL, calibration).time.compute_seconds

    # Without the head the stages would split the work evenly (compute x pp constant); the
    # busiest stage holds 3 layers plus the head, so 35 stages are slower than 35/5 x 5 stages.
    assert compute(workload, 35) * 35 > 1.04 * compute(workload, 5) * 5
    # A larger vocabulary weighs more on the last stage.
    assert compute(wide, 35) / compute(workload, 35) > compute(wide, 5) / compute(workload, 5)


def test_interleaved_pipeline_shrinks_the_bubble(gpu_specs, calibration):
    plain = Layout(tp=8, pp=8, dp=16, recompute="full", micro_batch=1, grad_accum=96)
    interleaved = Layout(tp=8, pp=8, dp=16, recompute="full", micro_batch=1, grad_accum=96,
                         virtual_stages=2)
    bubbles = [simulate(PRESETS["gpt3-175b"], _a100_cluster(gpu_specs, 128), layout, GPT3_GOAL,
                        calibration).time.bubble_seconds for layout in (plain, interleaved)]
    assert bubbles[1] < 0.6 * bubbles[0]  # half the idle stages, a little more p2p traffic


def test_overlapped_tensor_parallel_traffic_is_partly_hidden(gpu_specs, calibration):
    def run(tp: int, overlap: bool):
        layout = Layout(tp=tp, dp=64 // tp, recompute="selective", micro_batch=1,
                        grad_accum=16, tp_comm_overlap=overlap)
        return simulate(PRESETS["llama2-70b"], _a100_cluster(gpu_specs, 8), layout,
                        TrainingGoal(tokens=1e9, global_batch_samples=1024 // tp), calibration)

    plain, overlapped = run(8, False).time, run(8, True).time
    hidden = 1.0 - calibration.tp_overlap_fraction
    assert overlapped.tp_comm_seconds == pytest.approx(hidden * plain.tp_comm_seconds)
    assert overlapped.step_seconds < plain.step_seconds
    # Without tensor parallelism there is nothing to overlap.
    assert run(1, True).time.step_seconds == pytest.approx(run(1, False).time.step_seconds)


def test_fp8_gathers_tensor_parallel_inputs_in_fp8_unless_scaled_row_wise(gpu_specs, calibration):
    hardware = make_hardware(gpu_specs["H100 SXM5-80GB"], gpus_per_node=8, n_nodes=8,
                             intra_node="nvswitch", inter_node_gbits_per_s=3200)

    def tp_seconds(precision: str, rowwise: bool = False) -> float:
        layout = Layout(tp=8, dp=8, recompute="selective", micro_batch=1, grad_accum=16,
                        precision=precision, fp8_rowwise=rowwise)
        return simulate(PRESETS["llama2-70b"], hardware, layout,
                        TrainingGoal(tokens=1e9, global_batch_samples=128),
                        calibration).time.tp_comm_seconds

    # Reduce-scatters stay 2 bytes a value, all-gathers drop to 1: 3/4 of the bf16 traffic.
    assert tp_seconds("fp8") == pytest.approx(0.75 * tp_seconds("bf16"))
    # Row-wise scaling gathers in bf16 (torchtitan: fp8 TP all-gather is tensorwise-only).
    assert tp_seconds("fp8", rowwise=True) == pytest.approx(tp_seconds("bf16"))
    # The flag means nothing at 16 bits.
    assert tp_seconds("bf16", rowwise=True) == pytest.approx(tp_seconds("bf16"))


def test_zero_runs_are_searched_without_pipelining(gpu_specs, calibration):
    choice = best_layout(PRESETS["gpt3-175b"], _a100_cluster(gpu_specs, 50), GPT3_GOAL,
                         calibration, LayoutConstraints(zero_stage=3))
    assert choice.is_fit and choice.result.layout.pp == 1


def _llama_band(gpu_specs, calibration, gpu_name):
    hardware = make_hardware(gpu_specs[gpu_name], gpus_per_node=8, n_nodes=8)
    choice = best_layout(PRESETS["llama2-70b"], hardware, TrainingGoal(tokens=2e12), calibration)
    result = choice.result
    return result, result.time_to_train_p90_hours / result.time_to_train_p10_hours


def test_results_carry_calibration_status_and_wider_bands_off_the_data(gpu_specs, calibration):
    known, known_width = _llama_band(gpu_specs, calibration, "H100 SXM5-80GB")
    new, new_width = _llama_band(gpu_specs, calibration, "Instinct MI300X OAM-192GB")
    assert known.calibration_status == "calibrated"
    assert new.calibration_status == "uncalibrated" and "CDNA 3" in new.calibration_note
    assert new_width > known_width > 1.0


def test_whole_run_time_is_steady_state_over_goodput(gpu_specs, calibration):
    result, _ = _llama_band(gpu_specs, calibration, "H100 SXM5-80GB")
    assumptions = result.goodput_assumptions
    # A whole production run: failures, restarts, checkpoints, evaluation and the fitted
    # production overhead, so goodput sits well below 1 but above the overhead alone.
    assert assumptions.production_overhead_fraction == calibration.production_overhead_fraction
    assert 1.0 / (1.0 + assumptions.production_overhead_fraction + 0.05) < (
        result.goodput_fraction) < 1.0 / (1.0 + assumptions.production_overhead_fraction)
    assert result.time_to_train_hours == pytest.approx(
        result.steady_state_hours / result.goodput_fraction)
    assert assumptions.failures_per_gpu_hour > 0


def test_parameter_count_only_plans_like_the_preset(gpu_specs, calibration):
    hardware = make_hardware(gpu_specs["H100 SXM5-80GB"], gpus_per_node=8, n_nodes=8)
    goal = TrainingGoal(tokens=2e12)
    custom = llm_from_params("70B", 70e9, seq_len=4096, vocab_size=32000)
    preset = best_layout(PRESETS["llama2-70b"], hardware, goal, calibration).result
    planned = best_layout(custom, hardware, goal, calibration).result
    assert planned.mfu == pytest.approx(preset.mfu, rel=0.2)


def _one_node(gpu_specs, name):
    return make_hardware(gpu_specs[name], gpus_per_node=8, n_nodes=1, intra_node="nvswitch")


def test_attention_cores_are_bandwidth_bound_on_gpus_with_a_high_ridge(gpu_specs):
    shares = {}
    for name in ("A100 SXM4-80GB", "H100 SXM5-80GB"):
        layout = Layout(tp=1, pp=1, dp=8, micro_batch=1, grad_accum=1)
        c = config_arrays(PRESETS["llama2-7b"], _one_node(gpu_specs, name), layout)
        shares[name] = float(attention_roofline(c)[0])
    # FlashAttention-2 reaches about 35-40% of the H100 peak, 60-70% of the A100 peak
    assert 0.35 <= shares["H100 SXM5-80GB"] <= 0.45 <= 0.6 <= shares["A100 SXM4-80GB"] <= 0.7


def test_long_sequences_gain_less_from_an_h100_than_short_ones(gpu_specs, calibration):
    def speedup(seq_len):
        workload = replace(PRESETS["mpt-7b"], seq_len=seq_len)
        layout = Layout(tp=1, pp=1, dp=8, zero_stage=3, recompute="full", micro_batch=1,
                        grad_accum=1)
        goal = TrainingGoal(tokens=1e9, global_batch_samples=8)
        speeds = [simulate(workload, _one_node(gpu_specs, name), layout, goal,
                           calibration).tokens_per_second
                  for name in ("A100 SXM4-80GB", "H100 SXM5-80GB")]
        return speeds[1] / speeds[0]
    assert speedup(32768) < 0.9 * speedup(2048)


def test_attention_without_flash_costs_small_models_most(gpu_specs, calibration):
    """Before flash attention the score matrices (heads x seq x seq a layer) went through
    HBM: a 2021 Megatron 1.7B model at 2,048 tokens loses far more to them than a 175B one,
    whose GEMMs grow with hidden squared; with flash attention nothing is lost."""
    goal = TrainingGoal(tokens=1e9, global_batch_samples=512)

    def slowdown(workload, layout):
        speeds = [simulate(workload, _a100_cluster(gpu_specs, layout.n_gpus // 8),
                           replace(layout, is_flash_attention=flash), goal,
                           calibration).tokens_per_second for flash in (True, False)]
        return speeds[0] / speeds[1]

    small = dense_llm("gpt-1.7b", n_layers=24, hidden_size=2304, n_heads=24, seq_len=2048,
                      vocab_size=51200)
    small_loss = slowdown(small, Layout(tp=1, dp=32, recompute="full", micro_batch=8,
                                        grad_accum=2))
    large_loss = slowdown(PRESETS["gpt3-175b"], Layout(tp=8, pp=8, dp=16, recompute="full",
                                                       micro_batch=1, grad_accum=32))
    assert small_loss > 1.08
    assert 1.0 < large_loss < 1.03


def test_fused_cnn_epilogues_move_less_activation_traffic(gpu_specs, calibration):
    layout = Layout(tp=1, pp=1, dp=8, micro_batch=256, grad_accum=1)
    goal = TrainingGoal(samples=1.28e6, global_batch_samples=2048)
    plain, fused = (simulate(w, _one_node(gpu_specs, "A100 SXM4-80GB"), layout, goal, calibration)
                    for w in (PRESETS["resnet50"],
                              replace(PRESETS["resnet50"], has_fused_epilogues=True)))
    assert fused.samples_per_second > 1.2 * plain.samples_per_second


def test_nchw_convolutions_pay_for_transposes_only_on_tensor_cores(gpu_specs, calibration):
    """A 16-bit NCHW ResNet transposes every convolution's input and output for the tensor
    cores (DeepLearningExamples without --memory-format nhwc); at fp32 there is nothing to
    transpose."""
    goal = TrainingGoal(samples=1.28e6, global_batch_samples=2048)
    nchw = replace(PRESETS["resnet50"], is_channels_last=False)

    def ratio(gpu, precision):
        layout = Layout(tp=1, pp=1, dp=8, micro_batch=256, grad_accum=1, precision=precision)
        speeds = [simulate(w, _one_node(gpu_specs, gpu), layout, goal,
                           calibration).samples_per_second for w in (PRESETS["resnet50"], nchw)]
        return speeds[0] / speeds[1]

    assert ratio("A100 SXM4-80GB", "fp16") > 1.15
    assert ratio("V100 SXM2-32GB", "fp32") == pytest.approx(1.0)


def test_encoders_expose_their_gradient_all_reduce(gpu_specs, calibration):
    hardware = make_hardware(gpu_specs["A100 SXM4-80GB"], gpus_per_node=8, n_nodes=8,
                             intra_node="nvswitch", inter_node_gbits_per_s=200)
    layout = Layout(tp=1, pp=1, dp=64, micro_batch=32, grad_accum=1)
    result = simulate(PRESETS["bert-large"], hardware, layout,
                      TrainingGoal(samples=1e6, global_batch_samples=2048), calibration)
    assert result.time.dp_comm_seconds == pytest.approx(result.time.dp_comm_total_seconds)


def test_a10g_is_searched_at_fp32_and_says_its_speed_is_a_lower_bound(gpu_specs, calibration):
    hardware = make_hardware(gpu_specs["A10G PCIe-24GB"], gpus_per_node=4, n_nodes=1,
                             intra_node="pcie")
    choice = best_layout(PRESETS["mpt-125m"], hardware,
                         TrainingGoal(tokens=2.5e9, global_batch_samples=256), calibration)
    result = choice.result
    assert choice.is_fit and result.layout.precision == "fp32"
    assert result.calibration_status == "uncalibrated"
    assert result.rate_note.startswith("planned at the FP32 CUDA-core rate (31.52 TFLOPS)")
    h100 = _llama_band(gpu_specs, calibration, "H100 SXM5-80GB")[0]
    assert h100.rate_note == ""


def test_row_wise_fp8_gemms_run_at_the_fitted_fraction_of_per_tensor_ones(gpu_specs,
                                                                          calibration):
    # No tensor parallelism, so no gather differs: only the GEMM rate does.
    hardware = make_hardware(gpu_specs["H100 SXM5-80GB"], gpus_per_node=8, n_nodes=1,
                             intra_node="nvswitch", inter_node_gbits_per_s=0)

    def compute_seconds(precision: str, rowwise: bool) -> float:
        layout = Layout(dp=8, zero_stage=3, recompute="selective", micro_batch=1,
                        grad_accum=1, precision=precision, fp8_rowwise=rowwise)
        return simulate(PRESETS["llama3-8b"], hardware, layout,
                        TrainingGoal(tokens=1e9, global_batch_samples=8),
                        calibration).time.compute_seconds

    assert 0.5 < calibration.fp8_rowwise_factor < 1.0
    per_tensor, rowwise = compute_seconds("fp8", False), compute_seconds("fp8", True)
    # Slower, but by less than 1/factor: attention and the elementwise passes stay bf16.
    assert per_tensor < rowwise < per_tensor / calibration.fp8_rowwise_factor
    assert compute_seconds("bf16", True) == pytest.approx(compute_seconds("bf16", False))
