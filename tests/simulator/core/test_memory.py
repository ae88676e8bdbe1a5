"""Memory formulas against the ZeRO paper and Korthikanti et al. (2022)."""

from __future__ import annotations

import pytest

from simulator.core import Layout, TrainingGoal, dense_llm, make_hardware, simulate
from simulator.core.arrays import config_arrays
from simulator.core.memory import (
    activation_bytes,
    model_state_bytes,
    transformer_layer_activation_bytes,
)
from simulator.core.timing import dp_volume_bytes

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
    ("full", 4, 2 / 4),
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


def _stage_arrays(gpu_specs, *, pp, virtual_stages=1, grad_accum=16, vocab_size=32000):
    workload = dense_llm("t", n_layers=32, hidden_size=2048, n_heads=16, seq_len=2048,
                         vocab_size=vocab_size, params=PSI)
    layout = Layout(pp=pp, dp=8 // pp, virtual_stages=virtual_stages, micro_batch=1,
                    grad_accum=grad_accum)
    return _arrays(gpu_specs, layout, workload)


def test_the_logits_live_on_the_last_stage_not_the_first(gpu_specs):
    """With a pipeline, the first stage holds pp micro-batches of its layers and no logits:
    the LM head's fp32 logits (4·s·b·V bytes) are on the last stage, which holds one."""
    per_layer = 34 * 2048 * 2048
    logits = 4 * 2048 * 32000
    plain = float(activation_bytes(_stage_arrays(gpu_specs, pp=1))[0])
    assert plain == pytest.approx(32 * per_layer + logits)
    first = float(activation_bytes(_stage_arrays(gpu_specs, pp=4))[0])
    assert first == pytest.approx(8 * per_layer * 4)


def test_a_huge_vocabulary_makes_the_last_stage_the_fullest(gpu_specs):
    per_layer = 34 * 2048 * 2048
    vocab = 1_000_000
    c = _stage_arrays(gpu_specs, pp=4, vocab_size=vocab)
    assert float(activation_bytes(c)[0]) == pytest.approx(8 * per_layer + 4 * 2048 * vocab)


def test_interleaved_last_stage_keeps_its_warm_up_chunks(gpu_specs):
    """Megatron-LM's interleaved schedule: the last stage warms up (v-1)·pp chunk
    micro-batches, each of layers/(pp·v) layers, plus the one it runs."""
    per_layer = 34 * 2048 * 2048
    vocab = 1_000_000
    c = _stage_arrays(gpu_specs, pp=4, virtual_stages=2, vocab_size=vocab)
    last = 4 * per_layer * (1 * 4 + 1) + 4 * 2048 * vocab
    first = 8 * per_layer * 4 * (1 + 3 / 8)
    assert float(activation_bytes(c)[0]) == pytest.approx(max(first, last))
    assert last > first


@pytest.mark.parametrize("stage", [2, 3])
def test_under_a_pipeline_zero_2_and_3_cost_and_hold_what_zero_1_does(gpu_specs, stage):
    """FSDP2 under torch.distributed.pipelining keeps the stage's weights gathered and its
    gradients unsynced until the last micro-batch: one all-gather and one reduce-scatter a
    step, whole weights and gradients held meanwhile. Without a pipeline, ZeRO 3 shards."""
    def arrays(zero, pp):
        return _arrays(gpu_specs, Layout(pp=pp, dp=8 // pp, zero_stage=zero, micro_batch=1,
                                         grad_accum=8))
    piped, zero1 = arrays(stage, 2), arrays(1, 2)
    assert [float(p[0]) for p in model_state_bytes(piped)] == pytest.approx(
        [float(p[0]) for p in model_state_bytes(zero1)])
    assert float(dp_volume_bytes(piped)[0]) == pytest.approx(float(dp_volume_bytes(zero1)[0]))
    flat, flat_zero1 = arrays(stage, 1), arrays(1, 1)
    assert sum(float(p[0]) for p in model_state_bytes(flat)) < sum(
        float(p[0]) for p in model_state_bytes(flat_zero1))
    assert float(dp_volume_bytes(flat)[0]) > float(dp_volume_bytes(flat_zero1)[0])
