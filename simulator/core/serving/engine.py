"""One serving replica's physics: prefill, decode steps, collectives and KV capacity.

Units: seconds, bytes, FLOP. A replica is `tp` x `pp` GPUs holding one copy of the model
(experts split over `ep` of the TP ranks). Prefill is compute-bound: 2 FLOP per active parameter
per prompt token plus causal attention over the prompt, at a fitted fraction of the dense peak.
A decode step is memory-bound: it reads every weight the batch routes to plus each sequence's
KV cache, at a fitted fraction of HBM bandwidth; the step also pays its matmul FLOPs (roofline
max), two TP all-reduces per layer and fixed per-step and per-layer overheads.

A replica may span instances: its TP ranks share one node's fabric, its pipeline stages (and,
when `ep` > `tp`, its expert-parallel group) cross the nodes' scale-out network
(`inter_node_gbytes_per_s`). Stages run one after another (one batch in flight, no
micro-batch pipelining), so PP adds memory, not speed; experts spread over more ranks than
one stage's TP group are read by all of them at once.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property

from simulator.core.hardware import GpuSpec
from simulator.core.serving.models import (
    COMPUTE_PRECISION,
    WEIGHT_BYTES,
    ServingModel,
    check_precision,
)

GIB = 1024.0**3
# Share of GPU memory a server hands to weights + KV: vLLM/SGLang take 0.9 of the whole memory
# (gpu_memory_utilization); TensorRT-LLM loads the weights first and gives the KV cache 0.9 of
# what is then free (kv_cache_free_gpu_mem_fraction), so a model that nearly fills the GPU
# still gets most of the remainder.
USABLE_MEMORY_FRACTION = 0.9
# Activation workspace per GPU besides weights and KV, bytes (logits and a prefill chunk).
WORKSPACE_BYTES = 2.0 * GIB
FRAMEWORKS: tuple[str, ...] = ("trtllm", "vllm", "sglang", "other")


@dataclass(frozen=True)
class ServingCalibration:
    """Fitted efficiencies (see fit.PRIORS for their priors and why)."""

    compute_efficiency: float = 0.55  # share of the dense peak prefill GEMMs reach
    decode_compute_efficiency: float = 0.35  # skinny decode GEMMs (M = batch) reach less
    memory_efficiency: float = 0.80  # share of HBM bandwidth a decode step's reads reach
    vllm_factor: float = 0.85  # vLLM/ROCm efficiency relative to TensorRT-LLM
    step_overhead_seconds: float = 1.0e-3  # scheduling, sampling, launch per decode step
    layer_overhead_seconds: float = 8.0e-6  # kernel launches per layer per step
    collective_latency_seconds: float = 1.0e-5  # per all-reduce
    network_efficiency: float = 0.7  # share of the fabric bandwidth a collective reaches
    pcie_efficiency: float = 0.5  # the same over PCIe (peer traffic through host bridges)
    batch_cap: float = 1024.0  # most sequences a scheduler keeps in flight
    roofline_sharpness: float = 1.5  # p of the p-norm joining memory and compute time
    queue_factor: float = 1.0  # burstiness of prompt arrivals (1 = Poisson)
    tail_factor: float = 1.0  # spread of per-request TPOT around its mean
    fp8_efficiency_ratio: float = 0.75  # fp8 math's efficiency relative to 16-bit (of 2x peak)

    def to_dict(self) -> dict[str, float]:
        return {k: float(getattr(self, k)) for k in self.__dataclass_fields__}


# The rule of thumb the issue compares against: decode at HBM bandwidth, prefill at 40 % of
# peak, nothing else (no overheads, no queueing beyond the batch, no framework difference).
RULE_OF_THUMB = ServingCalibration(
    compute_efficiency=0.40, decode_compute_efficiency=0.40, memory_efficiency=1.0, vllm_factor=1.0,
    step_overhead_seconds=0.0, layer_overhead_seconds=0.0, collective_latency_seconds=0.0,
    network_efficiency=1.0, pcie_efficiency=1.0, batch_cap=1.0e9, roofline_sharpness=1.0e3,
    queue_factor=0.0, tail_factor=0.0, fp8_efficiency_ratio=1.0,
)


@dataclass(frozen=True)
class Replica:
    """One model copy on `tp` x `pp` GPUs of one kind.

    `precision`: weights (bf16, fp16, fp8, int4 weight-only); `kv_bytes`: bytes per KV value
    (2 for 16-bit, 1 for an fp8 cache); `fabric_gbytes_per_s`: per-GPU per-direction bandwidth
    of the TP collectives (NVLink/xGMI, or PCIe); `inter_node_gbytes_per_s`: scale-out bandwidth
    of one node (all its NICs, per direction) when the replica spans nodes, NaN when it sits in
    one node (then stages and experts talk over the node fabric).
    """

    model: ServingModel
    gpu: GpuSpec
    tp: int
    precision: str
    kv_bytes: float
    fabric_gbytes_per_s: float
    pp: int = 1
    ep: int = 1
    framework: str = "trtllm"
    inter_node_gbytes_per_s: float = math.nan

    def __post_init__(self) -> None:
        check_precision(self.precision)
        if self.tp < 1 or self.pp < 1 or self.ep < 1:
            raise ValueError("tp, pp and ep must be >= 1")
        if self.ep > self.tp * self.pp:
            raise ValueError("ep cannot exceed the replica's GPUs")
        if self.kv_bytes not in (1.0, 2.0):
            raise ValueError("kv_bytes must be 1 or 2")
        if self.framework not in FRAMEWORKS:
            raise ValueError(f"unknown framework {self.framework!r}")
        if not (math.isnan(self.inter_node_gbytes_per_s) or self.inter_node_gbytes_per_s > 0):
            raise ValueError("inter-node bandwidth must be above 0 GB/s (NaN: one node)")

    @property
    def n_gpus(self) -> int:
        return self.tp * self.pp

    @property
    def spans_nodes(self) -> bool:
        return not math.isnan(self.inter_node_gbytes_per_s)

    @property
    def expert_lanes(self) -> int:
        """GPUs that read and multiply one layer's experts at once: the stage's TP ranks, or
        all `ep` ranks when experts spread beyond them (other stages idle meanwhile)."""
        return max(self.tp, self.ep) if self.model.is_moe else self.tp

    @cached_property
    def compute_precision(self) -> str:
        """Math precision: fp8 falls back to 16-bit on a GPU without fp8 (weight-only fp8).
        Cached: every decode step asks for it."""
        wanted = COMPUTE_PRECISION[self.precision]
        if self.gpu.supports(wanted):
            return wanted
        return "fp16" if self.gpu.supports("fp16") else "bf16"

    def peak_flops(self) -> float:
        """Dense FLOP/s of the whole replica at its math precision."""
        return self.gpu.peak_tflops(self.compute_precision) * 1e12 * self.n_gpus

    def weight_bytes(self) -> float:
        return self.model.params_total * WEIGHT_BYTES[self.precision]

    def kv_bytes_per_token_per_gpu(self) -> float:
        """KV bytes one GPU stores per token in flight (layers split over pp)."""
        return self.model.kv_values_per_token_per_gpu(self.tp) * self.kv_bytes / self.pp

    def kv_capacity_tokens(self) -> float:
        """Tokens of KV cache the replica can hold (paged: any mix of sequences); <= 0 when
        the weights alone do not fit."""
        memory = self.gpu.memory_gib * GIB
        weights = self.weight_bytes() / self.n_gpus
        if self.framework == "trtllm":
            free = USABLE_MEMORY_FRACTION * (memory - weights - WORKSPACE_BYTES)
        else:
            free = memory * USABLE_MEMORY_FRACTION - weights - WORKSPACE_BYTES
        return free / self.kv_bytes_per_token_per_gpu()

    def fits(self) -> bool:
        return self.kv_capacity_tokens() > 0


def _framework_factor(replica: Replica, cal: ServingCalibration) -> float:
    return cal.vllm_factor if replica.framework == "vllm" else 1.0


def _math_factor(replica: Replica, cal: ServingCalibration) -> float:
    """Efficiency of the replica's math relative to 16-bit GEMMs: fp8 kernels reach a smaller
    share of their doubled peak (scaling, casts, and attention/norms that stay in 16-bit)."""
    return cal.fp8_efficiency_ratio if replica.compute_precision == "fp8" else 1.0


def max_batch(replica: Replica, context_tokens: float, cal: ServingCalibration) -> float:
    """Most sequences of `context_tokens` (prompt + output) in flight: KV capacity / context,
    at most the scheduler cap; 0 when the model does not fit."""
    capacity = replica.kv_capacity_tokens()
    if capacity <= 0:
        return 0.0
    return float(min(math.floor(capacity / max(context_tokens, 1.0)), cal.batch_cap))


def _link_bytes_per_s(replica: Replica, cal: ServingCalibration) -> float:
    """Bytes/s a collective reaches on the node fabric (PCIe at its own efficiency)."""
    nvlink = replica.gpu.nvlink_gbytes_per_s
    is_pcie = math.isnan(nvlink) or replica.fabric_gbytes_per_s < nvlink / 2.0
    return replica.fabric_gbytes_per_s * 1e9 * (cal.pcie_efficiency if is_pcie
                                                else cal.network_efficiency)


def _collective_seconds(replica: Replica, tokens: float, cal: ServingCalibration) -> float:
    """Ring all-reduces of the hidden state across TP (two per layer; one when experts are
    split over EP ranks, whose combine replaces the MoE block's), the MoE all-to-all (dispatch
    + combine of each token's top-k copies) across EP, and each pipeline hop's activations;
    traffic between nodes goes at the nodes' scale-out bandwidth."""
    model = replica.model
    link = _link_bytes_per_s(replica, cal)
    network = (replica.inter_node_gbytes_per_s * 1e9 * cal.network_efficiency
               if replica.spans_nodes else link)
    is_ep = replica.ep > 1 and model.is_moe
    seconds = 0.0
    if replica.tp > 1:
        volume = 2.0 * (replica.tp - 1) / replica.tp * tokens * model.hidden_size * 2.0
        per_layer = 1 if is_ep else 2
        seconds += per_layer * model.n_layers * (cal.collective_latency_seconds + volume / link)
    if is_ep:
        copies = 2.0 * tokens * model.experts_per_token * model.hidden_size * 2.0
        local = min(replica.tp, replica.ep) if replica.spans_nodes else replica.ep
        # Share of a token's experts on other ranks of its node, and on other nodes.
        near, far = (local - 1) / replica.ep, (replica.ep - local) / replica.ep
        seconds += model.n_layers * (cal.collective_latency_seconds + copies * near / link
                                     + copies * far / network)
    if replica.pp > 1:
        hop = tokens * model.hidden_size * 2.0  # 16-bit activations to the next stage
        seconds += (replica.pp - 1) * (cal.collective_latency_seconds + hop / network)
    return seconds


def _params_read_per_stage_rank(replica: Replica, tokens: float) -> float:
    """Parameters a step reads, scaled to what one stage's `tp` ranks read in the same time:
    experts spread over more lanes than `tp` take tp / lanes of their time."""
    params = replica.model.weights_read_params(tokens)
    lanes = replica.expert_lanes
    if lanes > replica.tp:
        experts = params - replica.model.dense_params
        params -= experts * (1.0 - replica.tp / lanes)
    return params


def _active_params_per_stage_rank(replica: Replica) -> float:
    """Active parameters per token, scaled as _params_read_per_stage_rank scales reads."""
    model, lanes = replica.model, replica.expert_lanes
    if lanes <= replica.tp:
        return model.params_active
    experts = model.experts_per_token * model.expert_params
    return model.params_active - experts * (1.0 - replica.tp / lanes)


def prefill_seconds(replica: Replica, tokens: float, prompt_tokens: float,
                    cal: ServingCalibration) -> float:
    """Time to prefill `tokens` prompt tokens made of prompts `prompt_tokens` long.

    FLOPs: 2 x active params per token + causal attention 2 x layers x s^2 x width per prompt;
    plus one read of the weights the chunk routes to, and the TP collectives.
    """
    model = replica.model
    n_prompts = tokens / max(prompt_tokens, 1.0)
    flops = (2.0 * model.params_active * tokens
             + 2.0 * model.n_layers * prompt_tokens**2 * model.attention_width * n_prompts)
    eff = cal.compute_efficiency * _framework_factor(replica, cal) * _math_factor(replica, cal)
    compute = flops / (replica.peak_flops() * eff)
    read = (_params_read_per_stage_rank(replica, tokens) * WEIGHT_BYTES[replica.precision]
            / replica.tp / (replica.gpu.memory_bandwidth_gbytes_per_s * 1e9))
    return max(compute, read) + _collective_seconds(replica, tokens, cal)


def decode_step_seconds(replica: Replica, batch: float, context_tokens: float,
                        cal: ServingCalibration) -> float:
    """One decode step of `batch` sequences whose KV holds `context_tokens` each on average.

    Roofline: a p-norm of bytes / (bandwidth x efficiency) and FLOPs / (peak x efficiency)
    (p = roofline_sharpness; p -> infinity is the sharp max, real kernels overlap the two only
    partly, so time rises smoothly past the ridge) across the
    replica's TP ranks (pipeline stages run one after another, so pp does not divide time),
    plus collectives and the per-step and per-layer overheads.
    """
    model = replica.model
    batch = max(batch, 1.0)
    factor = _framework_factor(replica, cal)
    weights = _params_read_per_stage_rank(replica, batch) * WEIGHT_BYTES[replica.precision]
    # Every rank reads its own KV (replicated heads when tp > KV heads, an MLA latent per rank).
    kv = (batch * context_tokens * model.kv_values_per_token_per_gpu(replica.tp) * replica.tp
          * replica.kv_bytes)
    bandwidth = replica.gpu.memory_bandwidth_gbytes_per_s * 1e9 * replica.tp
    memory = (weights + kv) / (bandwidth * cal.memory_efficiency * factor)
    flops = (2.0 * _active_params_per_stage_rank(replica) * batch
             + 4.0 * model.n_layers * context_tokens * model.attention_width * batch)
    compute = flops / (replica.peak_flops() / replica.pp * cal.decode_compute_efficiency
                       * factor * _math_factor(replica, cal))
    overhead = cal.step_overhead_seconds + model.n_layers * cal.layer_overhead_seconds
    p = cal.roofline_sharpness
    ridge = max(memory, compute)
    joined = ridge * (1.0 + (min(memory, compute) / ridge) ** p) ** (1.0 / p)
    return float(joined + _collective_seconds(replica, batch, cal) + overhead)
