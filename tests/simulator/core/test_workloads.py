"""Workload FLOP counts, presets and training goals."""

from __future__ import annotations

from dataclasses import replace

import pytest

from simulator.core import (
    PRESETS,
    TrainingGoal,
    Workload,
    dense_llm,
    llm_from_params,
    lora,
    moe_llm,
)


def test_megatron_flop_counts_per_token():
    w = dense_llm("gpt", n_layers=96, hidden_size=12288, n_heads=96, seq_len=2048,
                  vocab_size=51200)
    layers, h, s, v = 96, 12288, 2048, 51200
    per_token = w.model_flops_per_sample() / s
    # Narayanan et al. eq. 3 without recompute: 72·l·h²·(1 + s/6h + V/12lh) per token.
    expected = 72 * layers * h**2 * (1 + s / (6 * h) + v / (12 * layers * h))
    assert per_token == pytest.approx(expected)


@pytest.mark.parametrize(("key", "params_billion"), [
    ("gpt3-175b", 175), ("llama2-7b", 6.74), ("llama2-70b", 68.98), ("llama3-405b", 405),
    ("mpt-7b", 6.65), ("bert-large", 0.34), ("resnet50", 0.0256),
])
def test_presets_have_published_sizes(key, params_billion):
    assert PRESETS[key].params / 1e9 == pytest.approx(params_billion, rel=0.02)


@pytest.mark.parametrize(("params", "shape"), [
    (70e9, (80, 8192, 64)), (175e9, (96, 12288, 96)), (7e9, (32, 4096, 32)),
    (100e9, (80, 10240, 80)), (125e6, (12, 768, 12)),
])
def test_llm_from_params_gives_a_published_shape(params, shape):
    w = llm_from_params("custom", params)
    assert (w.n_layers, w.hidden_size, w.n_heads) == shape
    assert w.params == params and w.ffn_hidden_size == 4 * w.hidden_size


@pytest.mark.parametrize("params", [3e8, 1e9, 20e9, 40e9, 300e9, 1e12])
def test_standard_shapes_split_over_tensor_parallelism(params):
    w = llm_from_params("custom", params)
    assert w.n_heads % 4 == 0 and w.n_layers % 2 == 0
    assert w.hidden_size % w.n_heads == 0


def test_lora_trains_few_parameters_and_skips_weight_gradients():
    base = PRESETS["llama2-7b"]
    tuned = lora(base, rank=16)
    assert tuned.trainable_params == 32 * 4 * 2 * 16 * 4096
    assert tuned.model_flops_per_sample() < base.model_flops_per_sample()


def test_moe_computes_with_active_and_stores_total_parameters():
    moe = moe_llm(PRESETS["mpt-7b"], total_params=47e9, n_experts=8)
    assert moe.params == 47e9
    assert moe.model_flops_per_sample() == PRESETS["mpt-7b"].model_flops_per_sample()


@pytest.mark.parametrize(("goal", "samples"), [
    (TrainingGoal(tokens=4096e3), 1000),
    (TrainingGoal(samples=5.0), 5),
    (TrainingGoal(epochs=2, dataset_samples=100), 200),
])
def test_goal_total_samples(goal, samples):
    w = dense_llm("x", n_layers=2, hidden_size=128, n_heads=2, seq_len=4096, vocab_size=10)
    assert goal.total_samples(w) == pytest.approx(samples)


@pytest.mark.parametrize("kwargs", [{}, {"tokens": 1, "samples": 1}, {"epochs": 1},
                                    {"tokens": -5}])
def test_bad_goals_raise(kwargs):
    with pytest.raises(ValueError):
        TrainingGoal(**kwargs)


def test_bad_workload_raises():
    with pytest.raises(ValueError):
        Workload("x", "llm", params=1e9, active_params=2e9, trainable_params=1e9)


def test_unpadded_attention_scales_with_fill_squared():
    padded = PRESETS["bert-large"]
    unpadded = replace(padded, token_fill=0.5)
    assert unpadded.attention_forward_flops_per_sample() == pytest.approx(
        padded.attention_forward_flops_per_sample() / 4)


def test_an_moe_with_its_expert_shape_permutes_tokens_and_names_its_expert_share():
    base = dense_llm("granite-moe", n_layers=24, hidden_size=1024, n_heads=16, seq_len=4096,
                     vocab_size=49155, params=0.4e9)
    plain = moe_llm(base, total_params=1.3e9, n_experts=32)
    shaped = replace(plain, expert_ffn_hidden_size=512, experts_per_token=8)
    assert plain.expert_gemm_share() == 0.0 and plain.expert_token_fraction() == 1.0
    assert shaped.expert_token_fraction() == pytest.approx(8 / 32)
    assert shaped.expert_gemm_share() == pytest.approx(3 * 1024 * 512 * 8 * 24 / 0.4e9)
    assert shaped.traffic_bytes_per_sample() > plain.traffic_bytes_per_sample()
    assert shaped.model_flops_per_sample() == plain.model_flops_per_sample()
