"""Memory formulas against the ZeRO paper and Korthikanti et al. (2022)."""

from __future__ import annotations

import pytest

from simulator.core import Layout, TrainingGoal, dense_llm, make_hardware, simulate
from simulator.core.arrays import config_arrays
from simulator.core.memory import model_state_bytes, transformer_layer_activation_bytes

PSI = 1e9
N = 64


def _arrays(gpu_specs, layout, workload=None):
    workload = workload or dense_llm("t", n_layers=24, hidden_size=2048, n_heads=16,
                                     seq_len=2048, vocab_size=32000, params=PSI)
    hardware = make_hardware(gpu_specs["A100 SXM4-80GB"], gpus_per_node=8,
                             n_nodes=max(1, layout.n_gpus // 8))
    return config_arrays(workload, hardware, layout)


@pytest.mark.parametrize(("stage", "bytes_per_param"), [
    (0, 2 + 2 + 12),
    (1, 4 + 12 / N),
    (2, 2 + 14 / N),
    (3, 16 / N),
])
def test_model_states_match_zero_paper(gpu_specs, stage, bytes_per_param):
    c = _arrays(gpu_specs, Layout(dp=N, zero_stage=stage))
    total = sum(float(part[0]) for part in model_state_bytes(c))
    assert total == pytest.approx(bytes_per_param * PSI)


@pytest.mark.parametrize(("recompute", "tp", "expected_per_sbh"), [
    ("none", 1, 34 + 5 * 16 * 2048 / 2048),
    ("none", 4, 34 / 4 + 5 * 16 * 2048 / (2048 * 4)),
    ("selective", 4, 34 / 4),
    ("full", 1, 2),
])
def test_activation_bytes_match_korthikanti(gpu_specs, recompute, tp, expected_per_sbh):
    layout = Layout(tp=tp, dp=8 // tp, recompute=recompute, micro_batch=2,
                    is_flash_attention=False)
    c = _arrays(gpu_specs, layout)
    sbh = 2048 * 2 * 2048
    assert float(transformer_layer_activation_bytes(c)[0]) == pytest.approx(sbh * expected_per_sbh)


def test_flash_attention_drops_the_score_term(gpu_specs):
    c = _arrays(gpu_specs, Layout(dp=8, micro_batch=1))
    assert float(transformer_layer_activation_bytes(c)[0]) == pytest.approx(34 * 2048 * 2048)


def _seven_b():
    return dense_llm("7B", n_layers=32, hidden_size=4096, n_heads=32, seq_len=2048,
                     vocab_size=32000, params=7e9)


def test_7b_with_adam_does_not_fit_one_80gb_gpu(gpu_specs, calibration):
    hardware = make_hardware(gpu_specs["A100 SXM4-80GB"], gpus_per_node=1, n_nodes=1)
    layout = Layout(recompute="full", micro_batch=1)
    result = simulate(_seven_b(), hardware, layout, TrainingGoal(tokens=1e9), calibration)
    assert not result.memory.is_fit
    assert "optimizer states" in result.memory.overflow_message


def test_7b_fits_with_zero3_over_8_gpus(gpu_specs, calibration):
    hardware = make_hardware(gpu_specs["A100 SXM4-80GB"], gpus_per_node=8, n_nodes=1)
    layout = Layout(dp=8, zero_stage=3, recompute="full", micro_batch=1)
    result = simulate(_seven_b(), hardware, layout, TrainingGoal(tokens=1e9), calibration)
    assert result.memory.is_fit
    assert result.memory.overflow_message == ""
    assert result.memory.weights_gib == pytest.approx(2 * 7e9 / 8 / 2**30)


def test_memory_parts_add_up(gpu_specs, calibration):
    hardware = make_hardware(gpu_specs["H100 SXM5-80GB"], gpus_per_node=8, n_nodes=2)
    layout = Layout(tp=2, pp=2, dp=4, zero_stage=1, recompute="selective", micro_batch=2,
                    grad_accum=8)
    m = simulate(_seven_b(), hardware, layout, TrainingGoal(tokens=1e9), calibration).memory
    parts = m.weights_gib + m.gradients_gib + m.optimizer_gib + m.activations_gib + m.overhead_gib
    assert m.total_gib == pytest.approx(parts)
