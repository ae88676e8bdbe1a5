"""Step time per GPU: compute, tensor/pipeline/data-parallel communication, pipeline bubble.

Seconds per optimizer step, as float64 arrays shaped like the ConfigArrays input.
Collectives are ring algorithms: an all-reduce moves 2(n-1)/n of the buffer per GPU, an
all-gather or reduce-scatter (n-1)/n. A group spanning nodes runs at the GPU's share of the
node's scale-out bandwidth.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from simulator.core.arrays import (
    ConfigArrays,
    FloatArray,
    derived,
    sharding_stage,
    stage_layer_share,
    stage_layers,
)
from simulator.core.calibration import Calibration, expert_gemm_efficiency, gemm_efficiency
from simulator.core.memory import model_state_bytes

CAUSAL_ATTENTION_FRACTION = 0.5
BACKWARD_SHARE = 2.0 / 3.0
# Query rows per flash-attention tile (FlashAttention-2 with head dimension 128).
FLASH_ATTENTION_TILE_ROWS = 128.0
# HBM bytes per attention-score value and layer without flash attention (16-bit values; the
# Megatron-LM path of 2019-2021: batched QK^T, fused scale-mask-softmax, dropout, batched
# ·V). Forward: QK^T writes the scores (2), softmax reads and writes them (4), dropout reads
# them and writes output and a 1-byte mask (5), ·V reads them (2). Backward: the ·V
# gradient reads the dropped probabilities for dV and writes their gradient (2 + 2 + 2),
# dropout backward (2 + 1 + 2), softmax backward reads gradient and probabilities and writes
# one (6), the QK^T gradients read it for dQ and dK (4). Recomputation runs the forward again.
SCORE_BYTES_FORWARD = 13.0
SCORE_BYTES_BACKWARD = 21.0
# NCHW CNNs at 16 bits: tensor-core convolutions work in NHWC, so cuDNN transposes each
# convolution's input and output (a read and a write each) in the forward pass, and dy, dx
# (data gradient) and x, dy (weight gradient) in the backward pass: 12 passes over about
# 21M input+output values per ResNet-50 image (2 bytes), 5.5x its 46 MB of stored
# activations (workloads.resnet50), priced at HBM bandwidth.
NCHW_TRANSPOSE_TRAFFIC_RATIO = 5.5


@dataclass(frozen=True)
class TimeArrays:
    """Seconds per step by part (exposed, i.e. not hidden by overlap) and throughput.

    `overhead` is the fixed per-step time plus any wait for a vision input pipeline; the
    parts add up to `step`.
    """

    compute: FloatArray
    tp_comm: FloatArray
    pp_comm: FloatArray
    dp_comm: FloatArray
    dp_comm_total: FloatArray
    bubble: FloatArray
    optimizer: FloatArray
    overhead: FloatArray
    step: FloatArray
    samples_per_second: FloatArray
    hardware_flops_per_sample: FloatArray


def hardware_flops_per_sample(c: ConfigArrays) -> FloatArray:
    """FLOPs executed per sample including recomputation (full: layers' forward again;
    selective: attention cores again)."""
    return derived(c, _hardware_flops_per_sample)


def _hardware_flops_per_sample(c: ConfigArrays) -> FloatArray:
    linear = c.linear_train_flops + np.where(c.recompute == 2, c.linear_recompute_flops, 0.0)
    return linear + c.attention_fwd_flops * (3.0 + (c.recompute >= 1))


def attention_roofline(c: ConfigArrays) -> FloatArray:
    """Share of the 16-bit peak flash-attention cores can reach on the GPU's memory system.

    Each query tile of FLASH_ATTENTION_TILE_ROWS rows streams the keys and values from HBM, so
    the cores run at about that many FLOPs per byte; GPUs whose ridge point (16-bit peak / HBM
    bandwidth) is far above it are bandwidth-bound there (H100: ~40%, A100: ~65% of peak,
    as measured for FlashAttention-2 by Dao 2023 and Shah et al. 2024).
    """
    return derived(c, _attention_roofline)


def _attention_roofline(c: ConfigArrays) -> FloatArray:
    ridge = c.peak_16bit_tflops * 1e12 / (c.memory_bandwidth_gbytes_per_s * 1e9)
    return 1.0 / np.sqrt(1.0 + (ridge / FLASH_ATTENTION_TILE_ROWS) ** 2)


def compute_seconds_per_microbatch(c: ConfigArrays, cal: Calibration) -> FloatArray:
    """GEMM time at the calibrated efficiency plus activation traffic at HBM bandwidth, on the
    busiest pipeline stage: v·ceil(layers / (pp·v)) layers (arrays.stage_layers) plus the
    output projection (the last stage holds it, and a pipeline runs at the pace of its
    slowest stage; a deep pipeline of a few layers per stage with a large vocabulary pays
    for it).

    Attention cores (flash attention, 16-bit) run at attention_factor of the GEMM efficiency.
    """
    work = derived(c, _microbatch_work)
    factor = cal.attention_factor * attention_roofline(c)
    attention_peak = c.peak_16bit_tflops * np.where(work.is_simt, 1.0, factor)
    dense = work.dense_linear + work.attention / attention_peak
    flop_seconds = dense / gemm_efficiency(c, cal)
    if work.expert is not None:
        flop_seconds = flop_seconds + work.expert / expert_gemm_efficiency(c, cal)
    flop_seconds = flop_seconds * c.micro_batch / work.split / 1e12
    cnn = cal.cnn_traffic_factor * np.where(work.is_fused_cnn, cal.fused_cnn_traffic_ratio, 1.0)
    factor = np.where(work.is_transformer, cal.traffic_factor, cnn)
    traffic = factor * c.traffic_bytes * work.layers * c.micro_batch / work.split * work.passes
    traffic = traffic * c.activation_value_bytes / 2.0
    traffic = traffic + work.score_bytes
    traffic = traffic + work.transpose_bytes
    return flop_seconds + traffic / work.bandwidth_bytes_per_s


@dataclass(frozen=True)
class _MicrobatchWork:
    """What compute_seconds_per_microbatch needs that the calibration does not change."""

    split: FloatArray  # tp·cp
    layers: FloatArray  # stage_layer_share
    attention: FloatArray  # attention FLOPs per sample on the busiest stage
    dense_linear: FloatArray  # dense linear FLOPs per sample there / GEMM peak (TFLOP/s)
    expert: FloatArray | None  # expert FFN FLOPs per sample / GEMM peak; None without MoE
    passes: FloatArray  # activation traffic passes (4/3 with full recompute)
    is_simt: np.ndarray
    is_fused_cnn: np.ndarray
    is_transformer: np.ndarray
    score_bytes: FloatArray  # unfused attention score traffic per micro-batch
    transpose_bytes: FloatArray  # NCHW transposes per micro-batch
    bandwidth_bytes_per_s: FloatArray  # HBM


def _microbatch_work(c: ConfigArrays) -> _MicrobatchWork:
    layers = stage_layer_share(c)
    linear = c.linear_train_flops + np.where(c.recompute == 2, c.linear_recompute_flops, 0.0)
    linear = (linear - c.head_train_flops) * layers + c.head_train_flops
    # Causal decoders: flash attention skips the masked half of the score blocks (without it
    # the whole score matrix is computed, then masked).
    causal = np.where((c.kind_index == 0) & (c.is_flash_attention > 0),
                      CAUSAL_ATTENTION_FRACTION, 1.0)
    # A mixture of experts runs its expert FFN share of the matmuls at the expert GEMMs' own
    # (smaller) shape; dense models have no expert share and skip it.
    share = c.expert_gemm_share
    return _MicrobatchWork(
        split=c.tp * c.cp, layers=layers,
        attention=c.attention_fwd_flops * (3.0 + (c.recompute >= 1)) * causal * layers,
        dense_linear=linear * (1.0 - share) / c.gemm_peak_tflops,
        expert=linear * share / c.gemm_peak_tflops if np.any(share > 0) else None,
        passes=1.0 + (c.recompute == 2) / 3.0,
        is_simt=c.is_simt > 0, is_fused_cnn=c.is_fused_cnn > 0,
        is_transformer=c.is_transformer > 0,
        score_bytes=score_traffic_bytes(c) * layers * c.micro_batch,
        transpose_bytes=nchw_transpose_bytes(c) * c.micro_batch,
        bandwidth_bytes_per_s=c.memory_bandwidth_gbytes_per_s * 1e9)


def nchw_transpose_bytes(c: ConfigArrays) -> FloatArray:
    """HBM bytes per sample an NCHW CNN spends transposing for 16-bit tensor-core
    convolutions (NCHW_TRANSPOSE_TRAFFIC_RATIO × its stored activations); 0 in NHWC, at 32
    bits or on GPUs without tensor cores."""
    if not np.any(c.is_nchw_cnn > 0):  # the common case: skip the work over large sweeps
        return np.zeros_like(c.activation_bytes)
    applies = (c.is_nchw_cnn > 0) & (c.activation_value_bytes <= 2.0) & (c.is_simt <= 0)
    return np.where(applies, NCHW_TRANSPOSE_TRAFFIC_RATIO * c.activation_bytes, 0.0)


def score_traffic_bytes(c: ConfigArrays) -> FloatArray:
    """HBM bytes per sample and layer that a transformer without flash attention spends on
    its attention scores: heads/TP × (seq/CP) × seq values per layer, each moved
    SCORE_BYTES_FORWARD + SCORE_BYTES_BACKWARD times (+ the forward again when the attention
    core is recomputed: selective or full). 0 with flash attention, which keeps the scores in
    on-chip memory, and for non-transformers.

    The score matrix grows with seq² where the GEMMs grow with seq·hidden², so it weighs on
    small models at long sequences (Megatron-LM 2021: ~a·seq/hidden ≈ 20 score values per
    hidden value at 1.7B and 2,048 tokens, ~6 at 1T).
    """
    if not np.any(c.is_flash_attention <= 0):  # the common case: skip the work over sweeps
        return np.zeros_like(c.seq_len)
    values = c.n_heads / c.tp * (c.seq_len / c.cp) * c.seq_len
    passes = SCORE_BYTES_FORWARD * (1.0 + (c.recompute >= 1)) + SCORE_BYTES_BACKWARD
    bytes_per_layer = values * passes * c.activation_value_bytes / 2.0
    is_unfused = (c.is_transformer > 0) & (c.is_flash_attention <= 0)
    return np.where(is_unfused, bytes_per_layer, 0.0)


def tp_seconds_per_microbatch(c: ConfigArrays, cal: Calibration) -> FloatArray:
    """Exposed tensor-parallel all-reduces (or RS+AG): 4 per layer of the busiest stage, 6
    with full recompute.

    Each is a reduce-scatter at the activation width and an all-gather at
    tp_gather_value_bytes (1 byte at fp8 with per-tensor scaling). Runs that overlap TP
    communication with the GEMMs hide tp_overlap_fraction of it.
    """
    seconds, bandwidth = derived(c, _tp_traffic)
    exposed = 1.0 - c.tp_comm_overlap * cal.tp_overlap_fraction
    return exposed * seconds / (bandwidth * 1e9 * cal.network_efficiency)


def _tp_traffic(c: ConfigArrays) -> tuple[FloatArray, FloatArray]:
    """(bytes each GPU moves in TP collectives per micro-batch, their bandwidth in GB/s)."""
    values = c.micro_batch * c.seq_len / c.cp * c.hidden_size
    count = (4.0 + 2.0 * (c.recompute == 2)) * stage_layers(c)
    bandwidth = np.where(c.tp <= c.gpus_per_node, c.intra_gbytes_per_s, c.inter_gbytes_per_s)
    per_collective = values * (c.activation_value_bytes + c.tp_gather_value_bytes)
    return count * (c.tp - 1.0) / c.tp * per_collective, bandwidth


def pp_seconds_per_microbatch(c: ConfigArrays, cal: Calibration) -> FloatArray:
    """Pipeline point-to-point sends of one micro-batch's (TP-sharded) activations, fwd+bwd."""
    sent, bandwidth, is_pipelined = derived(c, _pp_traffic)
    seconds = sent / (bandwidth * 1e9 * cal.network_efficiency)
    return np.where(is_pipelined, seconds, 0.0)


def _pp_traffic(c: ConfigArrays) -> tuple[FloatArray, FloatArray, np.ndarray]:
    """(bytes each GPU sends between stages per micro-batch, their bandwidth in GB/s,
    whether there is a pipeline)."""
    message = c.micro_batch * c.seq_len / c.cp * c.hidden_size * c.activation_value_bytes / c.tp
    crosses_nodes = c.tp * c.cp * c.pp > c.gpus_per_node
    bandwidth = np.where(crosses_nodes, c.inter_gbytes_per_s, c.intra_gbytes_per_s)
    return 2.0 * message * c.virtual_stages, bandwidth, c.pp > 1


def group_gbytes_per_s(c: ConfigArrays, group: FloatArray, stride: FloatArray) -> FloatArray:
    """Bus bandwidth (GB/s) of a collective over `group` ranks spaced `stride` apart.

    Inside a node: the GPU's fabric. Across nodes, NCCL runs one ring per NIC, so the group's
    members in one node (gpus_per_node/stride of them) share their NICs' bandwidth.
    """
    members_per_node = np.clip(c.gpus_per_node / stride, 1.0, group)
    spans_nodes = group * stride > c.gpus_per_node
    inter = np.minimum(c.inter_gbytes_per_s * members_per_node, c.intra_gbytes_per_s)
    return np.where(spans_nodes, inter, c.intra_gbytes_per_s)


def dp_volume_bytes(c: ConfigArrays) -> FloatArray:
    """Bytes each rank moves per step in data-parallel collectives (before the (n-1)/n factor).

    ZeRO 0/1: one gradient all-reduce per step. ZeRO 2: a reduce-scatter per micro-batch plus
    an all-gather of updated weights. ZeRO 3: per micro-batch, two weight all-gathers
    (forward, backward) and one gradient reduce-scatter. Under a pipeline, ZeRO 2 and 3 move
    what ZeRO 1 does, once a step (arrays.sharding_stage).
    """
    return derived(c, _dp_volume_bytes)


def _dp_volume_bytes(c: ConfigArrays) -> FloatArray:
    shard = c.tp * c.pp
    weights = c.params / shard * c.weight_bytes
    trainable_w = c.trainable_params / shard * c.weight_bytes
    grads = c.trainable_params / shard * c.grad_bytes
    zero2 = c.grad_accum * grads + trainable_w
    zero3 = c.grad_accum * (2.0 * weights + grads)
    zero = sharding_stage(c)
    return np.where(zero <= 1, 2.0 * grads, np.where(zero == 2, zero2, zero3))


def sharded_ring_stride(c: ConfigArrays, cal: Calibration) -> FloatArray:
    """Effective rank stride of the data-parallel group for the NIC-sharing rule.

    ZeRO 2/3 all-gathers and reduce-scatters are ring-only collectives (all-reduce can use
    trees). Over k nodes beyond `ring_full_bandwidth_nodes` the cross-node flows of the
    node's rings contend in the fabric, modelled as fewer members sharing the NICs: the
    stride grows by k / ring_full_bandwidth_nodes, so a GPU ends with about its own NIC.
    """
    traffic = derived(c, _dp_traffic)
    contention = np.maximum(traffic.nodes / cal.ring_full_bandwidth_nodes, 1.0)
    return np.where(traffic.is_sharded_ring, c.tp * contention, c.tp)


@dataclass(frozen=True)
class _DataParallelTraffic:
    """What dp_seconds_per_step needs that the calibration does not change."""

    ranks: FloatArray  # N = dp·cp
    nodes: FloatArray  # nodes the group spans (at least 1)
    is_sharded_ring: np.ndarray  # ZeRO 2/3 over more than one node
    bytes_moved: FloatArray  # dp_volume_bytes · (N-1)/N
    hops: FloatArray  # ring hop latencies per step


def _dp_traffic(c: ConfigArrays) -> _DataParallelTraffic:
    n = c.dp * c.cp
    nodes = np.maximum(n * c.tp / c.gpus_per_node, 1.0)
    zero = sharding_stage(c)
    per_layer = np.where(zero >= 3, 3.0, np.where(zero == 2, 1.0, 0.0))
    return _DataParallelTraffic(
        ranks=n, nodes=nodes, is_sharded_ring=(zero >= 2) & (nodes > 1.0),
        bytes_moved=dp_volume_bytes(c) * (n - 1.0) / n,
        hops=per_layer * stage_layers(c) * c.grad_accum * (n - 1.0))


def dp_seconds_per_step(c: ConfigArrays, cal: Calibration) -> FloatArray:
    """Data-parallel traffic time per step over N = dp·cp ranks, plus ring latency.

    Sharded stages issue per-layer collectives (3 per layer per micro-batch for ZeRO 3, 1 for
    ZeRO 2); each ring all-gather/reduce-scatter pays (N-1) hop latencies.
    """
    traffic = derived(c, _dp_traffic)
    bandwidth = group_gbytes_per_s(c, traffic.ranks, sharded_ring_stride(c, cal))
    transfer = traffic.bytes_moved / (bandwidth * 1e9 * cal.network_efficiency)
    return transfer + traffic.hops * cal.hop_latency_us * 1e-6


def optimizer_seconds(c: ConfigArrays) -> FloatArray:
    """Optimizer update: reads and writes the local model states once at HBM bandwidth."""
    return derived(c, _optimizer_seconds)


def _optimizer_seconds(c: ConfigArrays) -> FloatArray:
    weights, gradients, optimizer = model_state_bytes(c)
    return 2.0 * (weights + gradients + optimizer) / (c.memory_bandwidth_gbytes_per_s * 1e9)


def input_seconds_per_step(c: ConfigArrays, cal: Calibration) -> FloatArray:
    """Vision models: the host input pipeline (decode, augment, copy) delivers at most
    input_images_per_second_per_gpu; it runs ahead of the GPU, so a step takes the longer."""
    per_gpu_images, is_vision = derived(c, _input_images)
    return np.where(is_vision, per_gpu_images / cal.input_images_per_second_per_gpu, 0.0)


def _input_images(c: ConfigArrays) -> tuple[FloatArray, np.ndarray]:
    """(images each GPU takes per step, whether the model reads images)."""
    return c.micro_batch * c.grad_accum, c.kind_index == 2


@dataclass(frozen=True)
class _StepShape:
    """What step_time needs that the calibration does not change."""

    hideable_share: FloatArray  # of compute that data-parallel traffic can hide behind
    is_encoder: np.ndarray
    bubble_share: FloatArray  # (pp - 1) / virtual stages
    global_batch: FloatArray


def _step_shape(c: ConfigArrays) -> _StepShape:
    # Gradient reduction can only hide behind the backward pass (2/3 of compute); ZeRO-3
    # weight all-gathers are prefetched during the forward pass as well.
    return _StepShape(np.where(sharding_stage(c) >= 3, 1.0, BACKWARD_SHARE), c.kind_index == 1,
                      (c.pp - 1.0) / c.virtual_stages, c.global_batch)


def step_time(c: ConfigArrays, cal: Calibration) -> TimeArrays:
    """Seconds per optimizer step and its exposed parts."""
    per_micro = compute_seconds_per_microbatch(c, cal)
    tp = tp_seconds_per_microbatch(c, cal)
    pp = pp_seconds_per_microbatch(c, cal)
    compute = c.grad_accum * per_micro
    dp_total = dp_seconds_per_step(c, cal)
    shape = derived(c, _step_shape)
    hideable = shape.hideable_share * compute
    overlap = np.where(shape.is_encoder, cal.encoder_overlap_fraction, cal.overlap_fraction)
    dp_exposed = np.maximum(0.0, dp_total - overlap * hideable)
    bubble = shape.bubble_share * (per_micro + tp + pp)
    optimizer = optimizer_seconds(c)
    busy = compute + c.grad_accum * (tp + pp) + bubble + dp_exposed + optimizer
    step = np.maximum(busy + cal.step_overhead_seconds, input_seconds_per_step(c, cal))
    samples = shape.global_batch / step
    return TimeArrays(compute, c.grad_accum * tp, c.grad_accum * pp, dp_exposed, dp_total,
                      bubble, optimizer, step - busy, step, samples,
                      hardware_flops_per_sample(c))
