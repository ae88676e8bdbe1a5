"""Struct-of-arrays form of (workload, hardware, layout) configurations.

Every physics function in `memory` and `timing` takes a ConfigArrays, so one code path serves
a single simulation (arrays of length 1), validation (one entry per reference run) and the
vectorized catalog sweep (millions of entries).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields, replace
from typing import TYPE_CHECKING, Any, TypeVar, cast

import numpy as np
import numpy.typing as npt

from planner.core.layout_knobs import zero_stage_as_run
from simulator.core.hardware import (
    EFFICIENCY_CLASSES,
    Hardware,
    efficiency_class,
    rate_precision,
)
from simulator.core.layout import RECOMPUTE_MODES, Layout, bytes_per_value, tp_gather_bytes
from simulator.core.workloads import Workload

if TYPE_CHECKING:
    import pandas as pd

FloatArray = npt.NDArray[np.float64]
_T = TypeVar("_T")
KIND_INDEX: dict[str, int] = {"llm": 0, "llm_moe": 0, "llm_lora": 0, "generic": 0,
                              "bert": 1, "resnet50": 2}


@dataclass(frozen=True)
class ConfigArrays:
    """One float64 array per quantity; all arrays share one shape. Units in comments."""

    params: FloatArray
    trainable_params: FloatArray
    n_layers: FloatArray
    hidden_size: FloatArray
    n_heads: FloatArray
    seq_len: FloatArray  # tokens per sample (1 for non-transformers)
    vocab_size: FloatArray
    is_transformer: FloatArray  # 0/1
    kind_index: FloatArray  # 0 llm-like, 1 bert, 2 resnet50
    linear_train_flops: FloatArray  # per sample, forward + backward
    linear_recompute_flops: FloatArray  # per sample, layers' forward without the head
    head_train_flops: FloatArray  # per sample, output projection forward + backward
    attention_fwd_flops: FloatArray  # per sample
    model_flops: FloatArray  # per sample, PaLM convention
    traffic_bytes: FloatArray  # per sample, 16-bit activation bytes of one forward
    activation_bytes: FloatArray  # per sample, non-transformers only
    gemm_rows: FloatArray  # per sample
    expert_gemm_share: FloatArray  # share of matmul FLOPs in MoE expert FFNs (0 dense)
    expert_ffn: FloatArray  # MoE expert FFN width (0 dense)
    expert_token_fraction: FloatArray  # top-k / experts: tokens per expert GEMM (1 dense)
    is_fused_cnn: FloatArray  # 0/1, CNN with fused conv epilogues (less activation traffic)
    is_nchw_cnn: FloatArray  # 0/1, CNN with NCHW activations (tensor-core convs transpose them)
    peak_tflops: FloatArray  # nominal dense peak at the layout precision (for MFU)
    gemm_peak_tflops: FloatArray  # peak the weight GEMMs run at (fp8 for fp8 runs)
    peak_16bit_tflops: FloatArray  # for attention cores
    is_simt: FloatArray  # 0/1, fp32 math without tensor cores
    efficiency_class: FloatArray  # index into hardware.EFFICIENCY_CLASSES
    is_pcie_card: FloatArray  # 0/1, PCIe add-in card (lower power limit than SXM/OAM parts)
    memory_bandwidth_gbytes_per_s: FloatArray
    memory_gib: FloatArray
    intra_gbytes_per_s: FloatArray  # per GPU per direction
    inter_gbytes_per_s: FloatArray  # per GPU per direction
    gpus_per_node: FloatArray
    tdp_watts: FloatArray
    tp: FloatArray
    pp: FloatArray
    dp: FloatArray
    cp: FloatArray
    zero_stage: FloatArray
    recompute: FloatArray  # 0 none, 1 selective, 2 full
    micro_batch: FloatArray
    grad_accum: FloatArray
    virtual_stages: FloatArray
    is_flash_attention: FloatArray
    tp_comm_overlap: FloatArray  # 0/1, TP collectives chunked under the GEMMs
    tp_gather_value_bytes: FloatArray  # bytes per value of TP all-gathers (1 at fp8 tensorwise)
    is_fp8_rowwise: FloatArray  # 0/1, fp8 GEMMs with row-wise scaling (see Layout.fp8_rowwise)
    activation_value_bytes: FloatArray
    weight_bytes: FloatArray
    grad_bytes: FloatArray
    optimizer_bytes: FloatArray

    @classmethod
    def from_columns(cls, columns: Mapping[str, Any] | pd.DataFrame) -> ConfigArrays:
        """Build from a mapping (dict or DataFrame) with one entry per field.

        Scalars stay 0-d and broadcast in the formulas (no copies); arrays must share a shape.
        """
        names = [f.name for f in fields(cls)]
        missing = [n for n in names if n not in columns]
        if missing:
            raise ValueError(f"missing configuration columns: {missing}")
        arrays = {n: np.asarray(columns[n], dtype=np.float64) for n in names}
        shapes = {a.shape for a in arrays.values() if a.ndim}
        if len(shapes) > 1:
            raise ValueError(f"configuration arrays differ in shape: {sorted(shapes)}")
        return cls(**arrays)

    def take(self, index: npt.NDArray[Any]) -> ConfigArrays:
        """Subset every non-scalar array by a boolean mask or integer index."""
        return ConfigArrays(**{f.name: _take(getattr(self, f.name), index) for f in fields(self)})

    def keeping_derived(self) -> ConfigArrays:
        """A copy that keeps what `derived` computes from it, for arrays predicted many times
        over: a calibration fit evaluates the same rows thousands of times, each with a new
        calibration, and most of the time model does not depend on the calibration. Other
        arrays keep nothing (a sweep's large arrays are predicted once)."""
        copy = replace(self)
        copy.__dict__["_derived"] = {}
        return copy

    @property
    def n_gpus(self) -> FloatArray:
        return self.tp * self.pp * self.dp * self.cp

    @property
    def global_batch(self) -> FloatArray:
        return self.micro_batch * self.dp * self.grad_accum


def _take(values: FloatArray, index: npt.NDArray[Any]) -> FloatArray:
    return values if values.ndim == 0 else values[index]


def workload_columns(workload: Workload) -> dict[str, float]:
    """Per-sample workload quantities for ConfigArrays."""
    recompute = workload.linear_forward_flops_per_sample()
    if workload.is_transformer:
        recompute -= workload.head_forward_flops_per_sample()
    return {
        "params": workload.params, "trainable_params": workload.trainable_params,
        "n_layers": float(workload.n_layers), "hidden_size": float(workload.hidden_size),
        "n_heads": float(workload.n_heads), "seq_len": float(workload.tokens_per_sample),
        "vocab_size": float(workload.vocab_size),
        "is_transformer": float(workload.is_transformer),
        "kind_index": float(KIND_INDEX[workload.kind]),
        "linear_train_flops": workload.linear_training_flops_per_sample(),
        "linear_recompute_flops": recompute,
        "head_train_flops": workload.head_training_flops_per_sample(),
        "attention_fwd_flops": workload.attention_forward_flops_per_sample(),
        "model_flops": workload.model_flops_per_sample(),
        "traffic_bytes": workload.traffic_bytes_per_sample(),
        "activation_bytes": workload.activation_bytes_per_sample,
        "gemm_rows": workload.gemm_rows_per_sample,
        "expert_gemm_share": workload.expert_gemm_share(),
        "expert_ffn": float(workload.expert_ffn_hidden_size),
        "expert_token_fraction": workload.expert_token_fraction(),
        "is_fused_cnn": float(workload.has_fused_epilogues and not workload.is_transformer),
        "is_nchw_cnn": float(not workload.is_channels_last and not workload.is_transformer),
    }


def hardware_columns(hardware: Hardware, precision: str) -> dict[str, float]:
    """Per-GPU hardware quantities for ConfigArrays at `precision` (NaN peak = unsupported)."""
    gpu = hardware.gpu
    peak = gpu.peak_tflops(precision)
    peak16 = gpu.peak_tflops("bf16") if gpu.supports("bf16") else gpu.peak_tflops("fp16")
    is_simt = rate_precision(gpu, precision) == "fp32"
    return {
        "peak_tflops": peak, "gemm_peak_tflops": peak,
        "peak_16bit_tflops": peak if is_simt else peak16,
        "is_simt": float(is_simt),
        "efficiency_class": float(EFFICIENCY_CLASSES.index(efficiency_class(gpu, precision))),
        "is_pcie_card": float("PCIe" in gpu.name),
        "memory_bandwidth_gbytes_per_s": gpu.memory_bandwidth_gbytes_per_s,
        "memory_gib": gpu.memory_gib,
        "intra_gbytes_per_s": hardware.intra_node_gbytes_per_s,
        "inter_gbytes_per_s": hardware.inter_node_gbytes_per_s_per_gpu,
        "gpus_per_node": float(hardware.gpus_per_node), "tdp_watts": gpu.tdp_watts,
    }


def layout_columns(layout: Layout) -> dict[str, float]:
    """Layout quantities for ConfigArrays."""
    act, weight, grad, optimizer = bytes_per_value(layout.precision)
    return {
        "tp": layout.tp, "pp": layout.pp, "dp": layout.dp, "cp": layout.cp,
        "zero_stage": layout.zero_stage,
        "recompute": float(RECOMPUTE_MODES.index(layout.recompute)),
        "micro_batch": layout.micro_batch, "grad_accum": layout.grad_accum,
        "virtual_stages": layout.virtual_stages,
        "is_flash_attention": float(layout.is_flash_attention),
        "tp_comm_overlap": float(layout.tp_comm_overlap),
        "tp_gather_value_bytes": tp_gather_bytes(layout.precision, layout.fp8_rowwise),
        "is_fp8_rowwise": float(layout.is_fp8_rowwise),
        "activation_value_bytes": act, "weight_bytes": weight, "grad_bytes": grad,
        "optimizer_bytes": optimizer,
    }


def config_arrays(workload: Workload, hardware: Hardware, layout: Layout) -> ConfigArrays:
    """ConfigArrays of length 1 for one configuration."""
    columns = {**workload_columns(workload), **hardware_columns(hardware, layout.precision),
               **layout_columns(layout)}
    return ConfigArrays.from_columns({k: [v] for k, v in columns.items()})


def derived(c: ConfigArrays, compute: Callable[[ConfigArrays], _T]) -> _T:
    """compute(c), a quantity of the arrays alone (no calibration): computed once and kept
    on arrays made by ConfigArrays.keeping_derived, computed each time on others. The arrays
    are never written to, so a kept value stays what `compute` would give."""
    kept: dict[Callable[[ConfigArrays], Any], Any] | None = c.__dict__.get("_derived")
    if kept is None:
        return compute(c)
    if compute not in kept:
        kept[compute] = compute(c)
    return cast(_T, kept[compute])


def stage_layer_share(c: ConfigArrays) -> FloatArray:
    """Share of the layers on the busiest pipeline stage (1 without pipelining).

    Stages need not split the layers evenly (Megatron-Core uneven pipelines; Llama 3 405B ran
    126 layers on 16 stages): the busiest device holds v chunks of ceil(layers / (pp·v))
    layers, v = virtual_stages.
    """
    return derived(c, _stage_layer_share)


def _stage_layer_share(c: ConfigArrays) -> FloatArray:
    layers = np.maximum(c.n_layers, 1.0)
    chunks = c.pp * c.virtual_stages
    busiest = np.ceil(layers / chunks) * c.virtual_stages
    return cast(FloatArray, np.where(c.pp > 1, np.minimum(busiest, layers) / layers, 1.0))


def sharding_stage(c: ConfigArrays) -> FloatArray:
    """The ZeRO stage each configuration runs at (layout_knobs.zero_stage_as_run)."""
    return derived(c, _sharding_stage)


def _sharding_stage(c: ConfigArrays) -> FloatArray:
    return zero_stage_as_run(c.pp, c.zero_stage)


def stage_layers(c: ConfigArrays) -> FloatArray:
    """Layers on the busiest pipeline stage (all of them without pipelining; at least 1).

    The one count behind its compute, memory and per-layer collectives (TP all-reduces, ZeRO
    per-layer gathers): stage_layer_share × layers.
    """
    return derived(c, _stage_layers)


def _stage_layers(c: ConfigArrays) -> FloatArray:
    return stage_layer_share(c) * np.maximum(c.n_layers, 1.0)
