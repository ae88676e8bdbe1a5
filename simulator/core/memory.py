"""Memory per GPU: model states (ZeRO paper), activations (Korthikanti et al. 2022), overhead.

All results are bytes per GPU as float64 arrays shaped like the ConfigArrays input.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from simulator.core.arrays import (
    ConfigArrays,
    FloatArray,
    sharding_stage,
    stage_layer_share,
    stage_layers,
)

GIB = float(2**30)
# CUDA context, NCCL buffers and allocator reserve seen on real jobs (DeepSpeed #4093 class).
FIXED_OVERHEAD_BYTES = 1.5 * GIB
FRAGMENTATION_FRACTION = 0.05
# Full recompute of a CNN keeps block outputs only, roughly a quarter of all activations.
CNN_FULL_RECOMPUTE_FRACTION = 0.25


@dataclass(frozen=True)
class MemoryArrays:
    """Bytes per GPU by component; `total` includes `overhead`."""

    weights: FloatArray
    gradients: FloatArray
    optimizer: FloatArray
    activations: FloatArray
    overhead: FloatArray
    total: FloatArray
    capacity: FloatArray


def model_state_bytes(c: ConfigArrays) -> tuple[FloatArray, FloatArray, FloatArray]:
    """(weights, gradients, optimizer) bytes per GPU after TP/PP splitting and ZeRO sharding.

    ZeRO over N = dp·cp ranks: stage 1 shards optimizer states, 2 adds gradients, 3 weights.
    With mixed-precision Adam this gives 16Ψ, 4Ψ+12Ψ/N, 2Ψ+14Ψ/N and 16Ψ/N. A pipeline
    stage holds the busiest stage's share of the layers (1/pp when they split evenly), and
    under a pipeline stages 2 and 3 hold what stage 1 does (arrays.sharding_stage).
    """
    share = stage_layer_share(c) / c.tp
    psi, psi_trainable = c.params * share, c.trainable_params * share
    n, zero = c.dp * c.cp, sharding_stage(c)
    weights = c.weight_bytes * psi / np.where(zero >= 3, n, 1.0)
    gradients = c.grad_bytes * psi_trainable / np.where(zero >= 2, n, 1.0)
    optimizer = c.optimizer_bytes * psi_trainable / np.where(zero >= 1, n, 1.0)
    return weights, gradients, optimizer


def _sbh_over_t(c: ConfigArrays) -> FloatArray:
    """s·b·h/t: one micro-batch's hidden values of a layer per GPU (CP and TP/SP split)."""
    return c.seq_len / c.cp * c.micro_batch * np.maximum(c.hidden_size, 1.0) / c.tp


def _full_layer_bytes(c: ConfigArrays) -> FloatArray:
    """One layer's activations of one micro-batch without recomputation (sequence parallel)."""
    scores = 5.0 * c.n_heads * (c.seq_len / c.cp) / np.maximum(c.hidden_size, 1.0)
    return _sbh_over_t(c) * (34.0 + scores * (1.0 - c.is_flash_attention))


def transformer_layer_activation_bytes(c: ConfigArrays) -> FloatArray:
    """16-bit activation bytes per layer per micro-batch (Korthikanti et al. 2022).

    none: s·b·h·(34/t + 5·a·s/(h·t)) with sequence parallelism (the 5as/h score term is
    dropped with flash attention); selective: 34·s·b·h/t; full: 2·s·b·h/t (the layer input
    only, which sequence parallelism already splits over the t TP ranks).
    """
    sbh_t = _sbh_over_t(c)
    kept = np.where(c.recompute == 1, 34.0 * sbh_t, 2.0 * sbh_t)
    return np.where(c.recompute == 0, _full_layer_bytes(c), kept)


def recompute_working_bytes(c: ConfigArrays) -> FloatArray:
    """With full recomputation the backward pass rebuilds one layer's activations at a time:
    one layer of one micro-batch without recomputation, held once per GPU."""
    return np.where(c.recompute == 2, _full_layer_bytes(c), 0.0)


def activation_bytes(c: ConfigArrays) -> FloatArray:
    """Activation bytes per GPU on the pipeline stage that holds the most.

    1F1B keeps min(pp, micro-batches) micro-batches in flight on the first stage; interleaving
    v model chunks per stage keeps 1 + (pp-1)/(pp·v) times as much (Korthikanti et al. 2022).
    The fp32 logits of the LM head (4·s·b·V/t) live on the last stage only, which keeps one
    micro-batch in flight (v = 1) or (v-1)·pp + 1 chunk micro-batches of layers/(pp·v) layers
    each (Megatron-LM's interleaved warm-up): the larger of the two stages counts. Without a
    pipeline the one stage holds both. Full recomputation adds the one layer it rebuilds.
    """
    interleave = np.where(c.virtual_stages > 1, 1.0 + (c.pp - 1.0) / (c.pp * c.virtual_stages),
                          1.0)
    in_flight = np.where(c.pp > 1, np.minimum(c.pp, c.grad_accum), 1.0) * interleave
    layers = stage_layers(c)
    scale = c.activation_value_bytes / 2.0
    per_layer = transformer_layer_activation_bytes(c) * scale
    logits = 4.0 * c.seq_len / c.cp * c.micro_batch * c.vocab_size / c.tp
    first = per_layer * layers * in_flight
    last_chunks = np.minimum((c.virtual_stages - 1.0) * c.pp + 1.0,
                             c.virtual_stages * c.grad_accum)
    last = per_layer * layers / c.virtual_stages * last_chunks + logits
    working = recompute_working_bytes(c) * scale
    transformer = np.where(c.pp > 1, np.maximum(first, last), first + logits) + working
    cnn_keep = np.where(c.recompute == 2, CNN_FULL_RECOMPUTE_FRACTION, 1.0)
    other = c.activation_bytes * c.micro_batch * scale * cnn_keep
    return np.where(c.is_transformer > 0, transformer, other)


def memory_breakdown(c: ConfigArrays) -> MemoryArrays:
    """Memory per GPU by component, with framework overhead and ZeRO-3 gather buffers."""
    weights, gradients, optimizer = model_state_bytes(c)
    activations = activation_bytes(c)
    layer_params = c.params / np.maximum(c.n_layers, 1.0) / c.tp
    gather = np.where(sharding_stage(c) >= 3, 2.0 * layer_params * c.weight_bytes, 0.0)
    overhead = FIXED_OVERHEAD_BYTES + gather + FRAGMENTATION_FRACTION * activations
    total = weights + gradients + optimizer + activations + overhead
    return MemoryArrays(weights, gradients, optimizer, activations, overhead, total,
                        c.memory_gib * GIB)
