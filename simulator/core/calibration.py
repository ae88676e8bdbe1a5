"""Calibrated efficiency parameters of the time model (fitted by `fitting.fit_calibration`)."""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any

import numpy as np

from simulator.core.arrays import ConfigArrays, FloatArray, derived
from simulator.core.domain import BAND_GROUPS, CalibrationDomain, band_group
from simulator.core.envelope import metric_kind

__all__ = ["BAND_CLASSES", "BAND_GROUPS", "Calibration", "band_class", "band_group",
           "expert_gemm_efficiency", "gemm_efficiency", "load_calibration", "save_calibration"]

# Band classes: the model groups' throughput bands, plus benchmark times to train (MLPerf) and
# whole production runs (whole_runs.csv, and every plan), each banded by its own out-of-family
# residuals (Mondrian split-conformal): a whole run is further from the throughput tables than
# any throughput row is, so it gets the width its own out-of-family errors show.
# fp8 throughput is a class of its own: its recipes (per-tensor delayed or current scaling,
# amax reductions, fp8 weight all-gathers) vary between stacks in ways no column records, and
# out of family its rows err the most at scale (H100 at 65-512 GPUs: 11 % too slow, half of
# them outside the llm band), so its width comes from its own out-of-family errors.
BAND_CLASSES: tuple[str, ...] = (*BAND_GROUPS, "fp8", "time", "whole_run")


def band_class(workload_kind: str, metric: str = "", precision: str = "") -> str:
    """BAND_CLASSES entry of a prediction: whole_run for whole-run GPU-hours, time for
    benchmark times to train, fp8 for throughput at fp8, else the workload's model group
    (band_group). The first two are the figure's envelope.metric_kind."""
    kind = metric_kind(metric)
    if kind != "steady":
        return kind
    return "fp8" if precision == "fp8" else band_group(workload_kind)

MAX_GEMM_EFFICIENCY = 0.98

# FP32 GEMMs on CUDA cores (no tensor cores) run close to peak: cuBLAS SGEMM reaches ~85-90%.
SIMT_EFFICIENCY = 0.85


@dataclass(frozen=True)
class Calibration:
    """Physical knobs of the time model, each with a prior (see fitting.PRIORS).

    - efficiency_<architecture>_<precision>: achievable fraction of dense peak of large GEMMs on
      that architecture at that precision (fp8 relative to the fp8 peak); efficiency_other
      (fixed prior, not fitted) is shared by every architecture/precision without its own
      parameter: below the calibrated NVIDIA stacks, for a less mature software stack.
    - fp8_rowwise_factor: fp8 GEMMs with row-wise scaling (torchao "rowwise") relative to
      per-tensor-scaled fp8 GEMMs: row-wise kernels apply a scale per row and per column in
      the epilogue, and every operand is cast once per scaling axis (the backward GEMMs
      need the transposed axis), where a per-tensor fp8 copy serves both.
    - pcie_card_factor: PCIe add-in cards relative to SXM parts of the same peak (lower power
      limit, lower sustained clocks under load).
    - encoder_factor, cnn_factor: BERT-style encoders and CNN convolutions relative to decoder
      GEMMs (kernel mix, padding, small convolutions).
    - attention_factor: flash-attention cores relative to GEMMs (softmax, masking, tiling);
      below that ceiling the cores follow a roofline at the flash-attention tile's arithmetic
      intensity (timing.attention_roofline).
    - ridge_multiple: GEMMs reach 1/sqrt(2) of the ceiling when their arithmetic intensity
      (FLOPs per byte) is this multiple of the GPU's ridge point (peak FLOP/s / HBM bytes/s).
    - traffic_factor: HBM bytes moved per byte of stored 16-bit activations (elementwise ops,
      forward and backward), priced at the GPU's memory bandwidth; cnn_traffic_factor the
      same for CNNs (batch norm and ReLU passes make them largely memory-bound);
      fused_cnn_traffic_ratio: CNN traffic of stacks that fuse those passes into the
      convolutions (MLPerf-tuned NHWC kernels) relative to unfused ones.
    - input_images_per_second_per_gpu: ceiling of the host input pipeline of vision models
      (fixed prior: DALI-class pipelines feed several thousand images/s per GPU).
    - network_efficiency: achieved bus-bandwidth fraction of link bandwidth in collectives.
    - tp_overlap_fraction: share of the tensor-parallel collectives hidden under the GEMMs
      when a run overlaps them (Megatron-Core --tp-comm-overlap, PyTorch async TP); runs
      without it expose all of their TP traffic.
    - overlap_fraction: share of compute time that hides data-parallel / ZeRO traffic;
      encoder_overlap_fraction the same for BERT-style encoders (fixed: the NVIDIA BERT
      pretraining and MLPerf BERT code all-reduce gradients once after accumulation, before
      the LAMB step, so nothing hides it).
    - step_overhead_seconds: fixed time per optimizer step (host synchronisation, optimizer and
      gradient-norm launches, small collectives' latency); it bounds tiny per-GPU batches.
    - hop_latency_us: per-hop latency of ring collectives, microseconds (fixed prior).
    - ring_full_bandwidth_nodes: sharded-state (ZeRO 2/3) rings keep every NIC of a node busy
      up to this many nodes; over k more nodes a GPU's share falls as this/k, down to one NIC.
    - run_overhead_seconds: fixed time per run outside steady state (fixed, 0 by default: MLPerf
      times exclude initialisation, and long-run losses are in goodput).
    - production_overhead_fraction: what a whole production run loses beyond failures,
      restarts, checkpoints and evaluation (data stalls, loss-spike rollbacks, slow nodes,
      ramp-up), as a share of steady-state time (goodput.whole_run_goodput); fitted on the
      published whole runs (whole_runs.csv), prior from reliability studies.
    - band_log_p10/p90 (decoder LLMs), band_encoder_log_p10/p90 (BERT-style), band_vision_log_
      p10/p90 (CNNs), band_time_log_p10/p90 (benchmark times to train), band_whole_run_log_
      p10/p90 (whole runs), band_fp8_log_p10/p90 (throughput at fp8): quantiles of
      log(reported / predicted speed) of out-of-family predictions of that band class,
      normalised by their band scale (Mondrian split-conformal; crossval).
    - domain: which GPU × precision and architecture × precision keys have calibration runs.
    """

    efficiency_volta_16bit: float = 0.60
    efficiency_ampere_16bit: float = 0.65
    efficiency_hopper_16bit: float = 0.60
    efficiency_hopper_fp8: float = 0.45
    efficiency_other: float = 0.45
    fp8_rowwise_factor: float = 0.9
    encoder_factor: float = 1.0
    pcie_card_factor: float = 0.85
    cnn_factor: float = 0.6
    attention_factor: float = 0.7
    ridge_multiple: float = 1.0
    traffic_factor: float = 4.0
    cnn_traffic_factor: float = 8.0
    fused_cnn_traffic_ratio: float = 0.6
    input_images_per_second_per_gpu: float = 6000.0
    network_efficiency: float = 0.7
    overlap_fraction: float = 0.8
    tp_overlap_fraction: float = 0.6
    encoder_overlap_fraction: float = 0.0
    hop_latency_us: float = 5.0
    step_overhead_seconds: float = 0.01
    ring_full_bandwidth_nodes: float = 4.0
    run_overhead_seconds: float = 0.0
    production_overhead_fraction: float = 0.25
    band_log_p10: float = -0.2
    band_log_p90: float = 0.2
    band_encoder_log_p10: float = -0.3
    band_encoder_log_p90: float = 0.3
    band_vision_log_p10: float = -0.4
    band_vision_log_p90: float = 0.4
    band_time_log_p10: float = -0.3
    band_time_log_p90: float = 0.3
    band_whole_run_log_p10: float = -0.4
    band_whole_run_log_p90: float = 0.4
    band_fp8_log_p10: float = -0.3
    band_fp8_log_p90: float = 0.3
    n_rows: int = 0
    domain: CalibrationDomain = field(default_factory=CalibrationDomain)

    def __post_init__(self) -> None:
        for name in _NUMBER_FIELDS:
            if not math.isfinite(getattr(self, name)):
                raise ValueError(f"calibration {name} must be finite")
        for group in BAND_CLASSES:
            low, high = self.band_quantiles(group)
            if not low <= 0.0 <= high:
                raise ValueError(f"{group} band quantiles must satisfy p10 <= 0 <= p90")

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe dict of all fields (domain as a nested dict)."""
        out: dict[str, Any] = {k: float(v) for k, v in asdict(self).items()
                               if k not in ("n_rows", "domain")}
        return {**out, "n_rows": int(self.n_rows), "domain": self.domain.to_dict()}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Calibration:
        """Inverse of to_dict. Raises ValueError on unknown keys."""
        known = {f.name for f in fields(cls)}
        unknown = set(data) - known
        if unknown:
            raise ValueError(f"unknown calibration keys: {sorted(unknown)}")
        domain = CalibrationDomain.from_dict(data.get("domain") or {})
        try:
            values = {k: int(v) if k == "n_rows" else float(v) for k, v in data.items()
                      if k in known and k != "domain"}
        except (TypeError, ValueError) as exc:
            raise ValueError(f"malformed calibration value: {exc}") from exc
        return cls(**values, domain=domain)  # type: ignore[arg-type]

    def band_quantiles(self, group: str) -> tuple[float, float]:
        """(P10, P90) of normalised log speed residuals for a BAND_CLASSES entry."""
        if group not in BAND_CLASSES:
            raise ValueError(f"unknown band group {group!r}")
        prefix = "band" if group == "llm" else f"band_{group}"
        return getattr(self, f"{prefix}_log_p10"), getattr(self, f"{prefix}_log_p90")

    def with_band_quantiles(self, group: str, low: float, high: float) -> Calibration:
        """Copy with the group's band quantiles set (clipped so p10 <= 0 <= p90)."""
        prefix = "band" if group == "llm" else f"band_{group}"
        values = {f"{prefix}_log_p10": min(low, 0.0), f"{prefix}_log_p90": max(high, 0.0)}
        return replace(self, **values)  # type: ignore[arg-type]

    def class_efficiencies(self) -> FloatArray:
        """Efficiencies indexed like hardware.EFFICIENCY_CLASSES."""
        return np.array([self.efficiency_volta_16bit, self.efficiency_ampere_16bit,
                         self.efficiency_hopper_16bit, self.efficiency_hopper_fp8,
                         self.efficiency_other])

    def kind_factors(self) -> FloatArray:
        """Workload-kind multipliers indexed like arrays.KIND_INDEX (llm, bert, resnet50)."""
        return np.array([1.0, self.encoder_factor, self.cnn_factor])


# Every field but the domain: each must be finite (a fit builds thousands of calibrations).
_NUMBER_FIELDS: tuple[str, ...] = tuple(f.name for f in fields(Calibration) if f.name != "domain")


def expert_gemm_efficiency(c: ConfigArrays, cal: Calibration) -> FloatArray:
    """gemm_efficiency of a mixture of experts' expert FFN GEMMs: each expert multiplies only
    its top-k / experts share of the micro-batch's tokens, with N = expert width / tp, so
    fine-grained experts (e.g. 512 wide) sit lower on the roofline than the dense GEMMs."""
    return _roofline(c, cal, derived(c, _expert_gemm_size))


def _expert_gemm_size(c: ConfigArrays) -> FloatArray:
    rows = c.micro_batch * c.gemm_rows / c.cp * c.expert_token_fraction
    inv = (1.0 / np.maximum(rows, 1.0) + 1.0 / np.maximum(c.hidden_size, 1.0)
           + c.tp / np.maximum(c.expert_ffn, 1.0))
    return np.asarray(1.0 / inv)


@dataclass(frozen=True)
class _RooflineRows:
    """What _roofline needs that the calibration does not change."""

    kind: np.ndarray  # index into Calibration.kind_factors
    efficiency_class: np.ndarray  # index into Calibration.class_efficiencies
    is_pcie_card: np.ndarray
    is_fp8_rowwise: np.ndarray
    is_simt: np.ndarray
    ridge: FloatArray  # GEMM peak FLOP/s per HBM byte/s


def _roofline_rows(c: ConfigArrays) -> _RooflineRows:
    return _RooflineRows(c.kind_index.astype(np.intp), c.efficiency_class.astype(np.intp),
                         c.is_pcie_card > 0, c.is_fp8_rowwise > 0, c.is_simt > 0,
                         c.gemm_peak_tflops * 1e12 / (c.memory_bandwidth_gbytes_per_s * 1e9))


def _roofline(c: ConfigArrays, cal: Calibration, size: FloatArray) -> FloatArray:
    """Ceiling / sqrt(1 + (ridge_multiple·ridge / size)²), capped (see gemm_efficiency)."""
    rows = derived(c, _roofline_rows)
    kind = cal.kind_factors()[rows.kind]
    tensor = cal.class_efficiencies()[rows.efficiency_class]
    card = np.where(rows.is_pcie_card, cal.pcie_card_factor, 1.0)
    rowwise = np.where(rows.is_fp8_rowwise, cal.fp8_rowwise_factor, 1.0)
    ceiling = np.where(rows.is_simt, SIMT_EFFICIENCY, tensor) * kind * card * rowwise
    ratio = cal.ridge_multiple * rows.ridge / size
    efficiency = ceiling / np.sqrt(1.0 + ratio**2)
    return np.asarray(np.minimum(efficiency, MAX_GEMM_EFFICIENCY))


def gemm_efficiency(c: ConfigArrays, cal: Calibration) -> FloatArray:
    """Fraction of peak the GEMMs reach: ceiling / sqrt(1 + (ridge_multiple·ridge / I)²).

    The ceiling is the class efficiency × the workload-kind factor; the second factor is a
    smooth roofline (compute-bound for I >> ridge, bandwidth-bound I/ridge below).

    I = 1/(1/rows + 1/K + 1/N) is the 16-bit arithmetic intensity (FLOPs per byte) of the
    per-GPU GEMM, with rows = micro-batch tokens (or CNN output pixels), K = hidden and
    N = hidden/tp; ridge = peak FLOP/s / HBM bandwidth, so faster GPUs need bigger GEMMs.
    """
    return _roofline(c, cal, derived(c, _gemm_size))


def _gemm_size(c: ConfigArrays) -> FloatArray:
    rows = c.micro_batch * c.gemm_rows / c.cp
    is_tf = c.is_transformer > 0
    inv_k = np.where(is_tf, 1.0 / np.maximum(c.hidden_size, 1.0), 0.0)
    inv_n = np.where(is_tf, c.tp / np.maximum(c.hidden_size, 1.0), 0.0)
    return np.asarray(1.0 / (1.0 / rows + inv_k + inv_n))


def load_calibration(path: str) -> Calibration:
    """Read a Calibration from the JSON file at `path` (e.g. simulator/data/calibration.json)."""
    with open(path, encoding="utf-8") as handle:
        return Calibration.from_dict(json.load(handle))


def save_calibration(calibration: Calibration, path: str) -> None:
    """Write `calibration` as indented JSON to `path`."""
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(calibration.to_dict(), handle, indent=2, sort_keys=True)
        handle.write("\n")
