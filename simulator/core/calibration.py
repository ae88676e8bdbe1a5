"""Calibrated efficiency parameters of the time model (fitted by `fitting.fit_calibration`)."""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, fields
from typing import Any

import numpy as np

from simulator.core.arrays import ConfigArrays, FloatArray

MAX_GEMM_EFFICIENCY = 0.98


@dataclass(frozen=True)
class Calibration:
    """Physical knobs of the time model; a handful, each with a meaning.

    - efficiency_*: best fraction of dense peak the GEMMs of a workload kind reach.
    - ridge_multiple: GEMMs reach half the ceiling when their arithmetic intensity (FLOPs per
      byte) is this multiple of the GPU's ridge point (peak FLOP/s / HBM bytes/s).
    - traffic_factor: HBM bytes moved per byte of stored 16-bit activations (elementwise ops,
      forward and backward), priced at the GPU's memory bandwidth.
    - network_efficiency: achieved fraction of link bandwidth in collectives.
    - overlap_fraction: share of compute time that hides data-parallel / ZeRO traffic.
    - hop_latency_us: per-hop latency of ring collectives, microseconds.
    - ring_full_bandwidth_nodes: sharded-state (ZeRO 2/3) rings keep every NIC of a node busy
      up to this many nodes; over k more nodes a GPU's share falls as this/k, down to one NIC.
    - simt_factor: efficiency multiplier for fp32 math on CUDA cores (no tensor cores).
    - run_overhead_seconds: fixed time per training run (evaluation, warm-up, first steps).
    - log_residual_p10/p90: quantiles of log(reported / predicted throughput) on the
      calibration rows, used for P10-P90 bands.
    """

    efficiency_llm: float = 0.6
    efficiency_bert: float = 0.5
    efficiency_resnet: float = 0.5
    ridge_multiple: float = 1.0
    traffic_factor: float = 4.0
    network_efficiency: float = 0.7
    overlap_fraction: float = 0.8
    hop_latency_us: float = 5.0
    ring_full_bandwidth_nodes: float = 4.0
    simt_factor: float = 1.5
    run_overhead_seconds: float = 10.0
    log_residual_p10: float = -0.2
    log_residual_p90: float = 0.2
    n_rows: int = 0

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if not math.isfinite(value):
                raise ValueError(f"calibration {f.name} must be finite")
        if self.log_residual_p10 > self.log_residual_p90:
            raise ValueError("log_residual_p10 must be <= log_residual_p90")

    def to_dict(self) -> dict[str, float]:
        """JSON-safe dict of all fields."""
        return {k: float(v) if k != "n_rows" else int(v) for k, v in asdict(self).items()}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Calibration:
        """Inverse of to_dict. Raises ValueError on unknown or malformed keys."""
        known = {f.name for f in fields(cls)}
        unknown = set(data) - known
        if unknown:
            raise ValueError(f"unknown calibration keys: {sorted(unknown)}")
        try:
            values = {k: int(v) if k == "n_rows" else float(v) for k, v in data.items()}
        except (TypeError, ValueError) as exc:
            raise ValueError(f"malformed calibration value: {exc}") from exc
        return cls(**values)  # type: ignore[arg-type]

    def kind_efficiencies(self) -> FloatArray:
        """Efficiencies indexed like arrays.KIND_INDEX (llm, bert, resnet50)."""
        return np.array([self.efficiency_llm, self.efficiency_bert, self.efficiency_resnet])


def gemm_efficiency(c: ConfigArrays, cal: Calibration) -> FloatArray:
    """Fraction of peak the GEMMs reach: kind ceiling × I/(I + ridge_multiple·ridge).

    I = 1/(1/rows + 1/K + 1/N) is the 16-bit arithmetic intensity (FLOPs per byte) of the
    per-GPU GEMM, with rows = micro-batch tokens (or CNN output pixels), K = hidden and
    N = hidden/tp; ridge = peak FLOP/s / HBM bandwidth, so faster GPUs need bigger GEMMs.
    """
    rows = c.micro_batch * c.gemm_rows / c.cp
    is_tf = c.is_transformer > 0
    inv_k = np.where(is_tf, 1.0 / np.maximum(c.hidden_size, 1.0), 0.0)
    inv_n = np.where(is_tf, c.tp / np.maximum(c.hidden_size, 1.0), 0.0)
    size = 1.0 / (1.0 / rows + inv_k + inv_n)
    ceiling = cal.kind_efficiencies()[c.kind_index.astype(np.intp)]
    simt = np.where(c.is_simt > 0, cal.simt_factor, 1.0)
    ridge = c.gemm_peak_tflops * 1e12 / (c.memory_bandwidth_gbytes_per_s * 1e9)
    efficiency = ceiling * size / (size + cal.ridge_multiple * ridge) * simt
    return np.minimum(efficiency, MAX_GEMM_EFFICIENCY)


def load_calibration(path: str) -> Calibration:
    """Read a Calibration from the JSON file at `path` (e.g. simulator/data/calibration.json)."""
    with open(path, encoding="utf-8") as handle:
        return Calibration.from_dict(json.load(handle))


def save_calibration(calibration: Calibration, path: str) -> None:
    """Write `calibration` as indented JSON to `path`."""
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(calibration.to_dict(), handle, indent=2, sort_keys=True)
        handle.write("\n")
