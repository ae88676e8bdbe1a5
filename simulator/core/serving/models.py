"""Model shapes for serving and the precisions weights and the KV cache are stored in.

Parameter counts: total (stored) and active (read/multiplied per token). A mixture of experts
gives `n_experts`/`experts_per_token`; its expert weights are the stored-minus-active share
spread over the experts not chosen. KV: values stored per token per layer (2 x KV heads x head
dim for grouped-query attention; DeepSeek's MLA latent, 512 + 64, is shared across TP ranks).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from simulator.core.workloads import PRESETS

# Bytes per stored weight. 4-bit weight-only (AWQ/GPTQ, group size 128): 0.5 byte plus one
# 16-bit scale per 128 weights, with embeddings and the LM head kept at 16 bits (~4 % here).
WEIGHT_BYTES: dict[str, float] = {"bf16": 2.0, "fp16": 2.0, "fp8": 1.0, "int4": 0.55}
PRECISION_LABELS: dict[str, str] = {
    "bf16": "BF16", "fp16": "FP16", "fp8": "FP8 (weights and activations)",
    "int4": "4-bit weight-only (16-bit math)",
}
# The math precision whose peak a precision runs at (weight-only 4-bit dequantises to 16-bit).
COMPUTE_PRECISION: dict[str, str] = {"bf16": "bf16", "fp16": "fp16", "fp8": "fp8",
                                     "int4": "bf16"}


@dataclass(frozen=True)
class ServingModel:
    """A decoder to serve. Counts are whole numbers of parameters, not billions."""

    key: str
    name: str
    n_layers: int
    hidden_size: int
    n_heads: int
    n_kv_heads: int
    head_dim: int
    vocab_size: int
    params_total: float
    params_active: float
    n_experts: int = 1
    experts_per_token: int = 1
    kv_latent_dim: int = 0  # MLA: values per token per layer, replicated on every TP rank

    def __post_init__(self) -> None:
        if min(self.n_layers, self.hidden_size, self.n_heads, self.n_kv_heads,
               self.head_dim) <= 0:
            raise ValueError("model shape fields must be positive")
        if not 0 < self.params_active <= self.params_total * (1 + 1e-9):
            raise ValueError("need 0 < params_active <= params_total")
        if not 1 <= self.experts_per_token <= self.n_experts:
            raise ValueError("need 1 <= experts_per_token <= n_experts")

    @property
    def is_moe(self) -> bool:
        return self.n_experts > 1

    @property
    def expert_params(self) -> float:
        """Parameters of one expert summed over layers (0 for a dense model)."""
        if not self.is_moe:
            return 0.0
        return (self.params_total - self.params_active) / (self.n_experts
                                                           - self.experts_per_token)

    @property
    def dense_params(self) -> float:
        """Parameters every token reads: attention, embeddings, shared experts, router."""
        return self.params_total - self.n_experts * self.expert_params

    @property
    def attention_width(self) -> int:
        return self.n_heads * self.head_dim

    def kv_values_per_token(self) -> float:
        """KV-cache values stored per token, all layers (before TP splitting)."""
        per_layer = self.kv_latent_dim or 2 * self.n_kv_heads * self.head_dim
        return float(self.n_layers * per_layer)

    def kv_values_per_token_per_gpu(self, tp: int) -> float:
        """KV values one TP rank stores per token: KV heads split over ranks, at least one
        head each (replicated when tp > KV heads); an MLA latent lives on every rank."""
        if self.kv_latent_dim:
            return float(self.n_layers * self.kv_latent_dim)
        heads = math.ceil(self.n_kv_heads / tp)
        return float(self.n_layers * 2 * heads * self.head_dim)

    def weights_read_params(self, tokens_in_step: float) -> float:
        """Parameters read from memory by one forward step over `tokens_in_step` tokens: all
        dense weights plus the experts those tokens route to (expected distinct experts when
        each token picks k of E uniformly)."""
        if not self.is_moe:
            return self.params_total
        e, k = self.n_experts, self.experts_per_token
        touched = e * (1.0 - (1.0 - k / e) ** max(tokens_in_step, 0.0))
        return float(self.dense_params + touched * self.expert_params)


def _from_workload(key: str, preset: str, name: str, n_kv_heads: int) -> ServingModel:
    w = PRESETS[preset]
    return ServingModel(key, name, w.n_layers, w.hidden_size, w.n_heads, n_kv_heads,
                        w.hidden_size // w.n_heads, w.vocab_size, w.params, w.params)


# Shapes: the model cards / config.json of each release (layers, hidden, heads, KV heads,
# head dim, vocab); Llama 3.x from simulator.core.workloads. MoE counts: Mixtral paper
# (46.7B total, 12.9B active), DeepSeek-V3 report (671B / 37B, 256 routed experts top-8 + 1
# shared, MLA latent 512 + 64 rope dims), Qwen3 model card (235B / 22B, 128 experts top-8).
SERVING_PRESETS: dict[str, ServingModel] = {
    m.key: m for m in (
        _from_workload("llama3.1-8b", "llama3-8b", "Llama 3.1 8B", 8),
        _from_workload("llama3.1-70b", "llama3-70b", "Llama 3.1 70B", 8),
        _from_workload("llama3.1-405b", "llama3-405b", "Llama 3.1 405B", 8),
        _from_workload("llama2-70b", "llama2-70b", "Llama 2 70B", 8),
        _from_workload("llama2-13b", "llama2-13b", "Llama 2 13B", 40),
        ServingModel("gptj-6b", "GPT-J 6B", 28, 4096, 16, 16, 256, 50400, 6.05e9, 6.05e9),
        ServingModel("mistral-7b", "Mistral 7B", 32, 4096, 32, 8, 128, 32000, 7.24e9, 7.24e9),
        ServingModel("mixtral-8x7b", "Mixtral 8x7B", 32, 4096, 32, 8, 128, 32000, 46.7e9,
                     12.9e9, n_experts=8, experts_per_token=2),
        ServingModel("mixtral-8x22b", "Mixtral 8x22B", 56, 6144, 48, 8, 128, 32768, 141e9,
                     39e9, n_experts=8, experts_per_token=2),
        ServingModel("deepseek-v3", "DeepSeek-V3", 61, 7168, 128, 128, 128, 129280, 671e9,
                     37e9, n_experts=256, experts_per_token=8, kv_latent_dim=576),
        ServingModel("deepseek-r1", "DeepSeek-R1", 61, 7168, 128, 128, 128, 129280, 671e9,
                     37e9, n_experts=256, experts_per_token=8, kv_latent_dim=576),
        ServingModel("qwen3-8b", "Qwen3 8B", 36, 4096, 32, 8, 128, 151936, 8.2e9, 8.2e9),
        ServingModel("qwen3-32b", "Qwen3 32B", 64, 5120, 64, 8, 128, 151936, 32.8e9, 32.8e9),
        ServingModel("qwen3-235b-a22b", "Qwen3 235B-A22B", 94, 4096, 64, 4, 128, 151936,
                     235e9, 22e9, n_experts=128, experts_per_token=8),
    )
}


def serving_model(key: str) -> ServingModel:
    """The preset named `key`; ValueError naming the known keys otherwise."""
    if key not in SERVING_PRESETS:
        raise ValueError(f"unknown model {key!r}; known: {', '.join(sorted(SERVING_PRESETS))}")
    return SERVING_PRESETS[key]


def check_precision(precision: str) -> str:
    if precision not in WEIGHT_BYTES:
        raise ValueError(f"unknown precision {precision!r}; known: {', '.join(WEIGHT_BYTES)}")
    return precision
