"""GPU specs and cluster hardware: peak FLOP rates per precision, memory and interconnect.

Units: TFLOP/s dense, memory in GiB (vendors' HBM "GB" are binary: nvidia-smi shows 81920 MiB
for an 80 GB A100), memory bandwidth in GB/s (1e9 bytes/s), inter-node bandwidth in Gbit/s.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

import pandas as pd

PRECISIONS: tuple[str, ...] = ("fp32", "tf32", "fp16", "bf16", "fp8")
INTRA_NODE_KINDS: tuple[str, ...] = ("nvlink", "nvswitch", "pcie", "xgmi", "unknown")
# Per-direction PCIe x16 bandwidth by generation, GB/s.
PCIE_GBYTES_PER_S: dict[int, float] = {3: 16.0, 4: 32.0, 5: 64.0}
# Default scale-out NIC rate per GPU when a node's network is not given, Gbit/s
# (DGX-1/2 EDR 100, DGX A100 HDR 200, DGX H100 NDR 400).
DEFAULT_NIC_GBITS_PER_GPU: dict[str, float] = {"Volta": 100.0, "Ampere": 200.0}
DEFAULT_NIC_GBITS_FALLBACK = 400.0
# GEMM-efficiency classes with a fitted parameter each (architecture|precision class); every
# other architecture or precision shares the "other" class and its prior.
EFFICIENCY_CLASSES: tuple[str, ...] = ("Volta|16bit", "Ampere|16bit", "Hopper|16bit",
                                       "Hopper|fp8", "other")


@dataclass(frozen=True)
class GpuSpec:
    """One accelerator variant. TFLOP/s are dense; NaN means the precision is unsupported."""

    name: str
    architecture: str
    memory_gib: float
    memory_bandwidth_gbytes_per_s: float
    fp32_tflops: float
    tf32_tflops: float
    fp16_tflops: float
    bf16_tflops: float
    fp8_tflops: float
    nvlink_gbytes_per_s: float  # total bidirectional GB/s per GPU; NaN without NVLink
    pcie_gen: int
    tdp_watts: float

    def peak_tflops(self, precision: str) -> float:
        """Dense peak TFLOP/s at `precision`; NaN when the GPU cannot run it."""
        if precision not in PRECISIONS:
            raise ValueError(f"unknown precision {precision!r}")
        value = float(getattr(self, f"{precision}_tflops"))
        if precision == "tf32" and math.isnan(value):
            return self.fp32_tflops  # no TF32 tensor cores: TF32 math falls back to FP32
        return value

    def supports(self, precision: str) -> bool:
        """Whether the GPU has a published peak for `precision`."""
        return not math.isnan(self.peak_tflops(precision))


@dataclass(frozen=True)
class Hardware:
    """A cluster of identical nodes.

    `intra_node_gbytes_per_s` is the per-GPU, per-direction bandwidth inside a node (GB/s);
    `inter_node_gbits_per_s` is the node's total scale-out bandwidth (Gbit/s, all NICs).
    """

    gpu: GpuSpec
    gpus_per_node: int
    n_nodes: int
    intra_node: str
    intra_node_gbytes_per_s: float
    inter_node_gbits_per_s: float

    def __post_init__(self) -> None:
        if self.gpus_per_node < 1 or self.n_nodes < 1:
            raise ValueError("gpus_per_node and n_nodes must be >= 1")
        if self.intra_node not in INTRA_NODE_KINDS:
            raise ValueError(f"unknown intra-node fabric {self.intra_node!r}")
        if self.intra_node_gbytes_per_s <= 0 or self.inter_node_gbits_per_s <= 0:
            raise ValueError("bandwidths must be positive")

    @property
    def n_gpus(self) -> int:
        return self.gpus_per_node * self.n_nodes

    @property
    def inter_node_gbytes_per_s_per_gpu(self) -> float:
        """Scale-out bandwidth share of one GPU, GB/s per direction."""
        return self.inter_node_gbits_per_s / 8.0 / self.gpus_per_node


# NVIDIA A30 Tensor Core GPU datasheet (nvidia.com/en-us/data-center/products/a30-gpu):
# 165 TFLOPS FP16/BF16 dense, 82 TF32, 10.3 FP32, 24 GB HBM2 at 933 GB/s, 165 W,
# NVLink bridge 200 GB/s, PCIe Gen4.
EXTRA_GPU_SPECS: tuple[GpuSpec, ...] = (
    GpuSpec("A30 PCIe-24GB", "Ampere", 24.0, 933.0, 10.3, 82.0, 165.0, 165.0, math.nan,
            200.0, 4, 165.0),
)
# Same chip as the SXM2 part; DGX-2H's 450 W variant clocks higher: the Megatron-LM 2019
# paper implies ~130 TFLOP/s fp16 against 125 listed (factor 1.04).
# torchtitan's Grand Teton H100 is a 500 W SXM part whose peak the source puts "between SXM and
# NVL": the midpoint of the H100 SXM5 (989) and NVL (835) bf16 dense peaks.
GPU_ALIASES: dict[str, tuple[str, float, float]] = {
    "V100 SXM3-32GB": ("V100 SXM2-32GB", 1.0, 350.0),
    "V100 SXM3-32GB 450W": ("V100 SXM2-32GB", 130.0 / 125.0, 450.0),
    "H100 SXM 500W (Grand Teton)": ("H100 SXM5-80GB", (989.0 + 835.0) / 2.0 / 989.0, 500.0),
}


def _float(value: Any) -> float:
    return math.nan if value is None or pd.isna(value) else float(value)


# Tensor-core precisions: a GPU with none of them published runs only on its CUDA cores here.
TENSOR_PRECISIONS: tuple[str, ...] = ("tf32", "fp16", "bf16")


def rate_precision(gpu: GpuSpec, precision: str) -> str:
    """The precision whose peak `gpu` runs `precision` math at: "fp32" for TF32 on a GPU
    without a TF32 rate (CUDA cores, as GpuSpec.peak_tflops falls back), else `precision`.
    Calibration status is judged on this one (a CUDA-core run says nothing of tensor cores)."""
    if precision == "tf32" and math.isnan(gpu.tf32_tflops):
        return "fp32"
    return precision


def has_tensor_rates(gpu: GpuSpec) -> bool:
    """Whether any tensor-core peak (TF32, FP16 or BF16) of `gpu` is published."""
    return any(not math.isnan(float(getattr(gpu, f"{p}_tflops"))) for p in TENSOR_PRECISIONS)


def cuda_core_rate_note(gpu: GpuSpec, precision: str) -> str:
    """What a plan of `gpu` at `precision` must say when its speed comes from the FP32
    CUDA-core rate because no tensor-core rate is published (the A10G); "" otherwise.

    The speed is then a lower bound: the GPU has tensor cores, only their rates are unknown.
    """
    if precision not in ("fp32", "tf32") or has_tensor_rates(gpu) or math.isnan(gpu.fp32_tflops):
        return ""
    return (f"planned at the FP32 CUDA-core rate ({gpu.fp32_tflops:g} TFLOPS) because its "
            "tensor-core rates (TF32, FP16, BF16) are unpublished: a lower bound on speed")


def gpu_spec_from_row(row: pd.Series) -> GpuSpec:
    """Build a GpuSpec from one gpus.csv row (columns as in pricing/data/gpus.csv)."""
    pcie = _float(row.get("pcie_gen"))
    return GpuSpec(
        name=f"{row['model']} {row['variant']}",
        architecture=str(row.get("architecture", "")),
        memory_gib=_float(row["memory_gb"]),
        memory_bandwidth_gbytes_per_s=_float(row["memory_bandwidth_gbps"]),
        fp32_tflops=_float(row["fp32_tflops"]),
        tf32_tflops=_float(row["tf32_tflops_dense"]),
        fp16_tflops=_float(row["fp16_tflops_dense"]),
        bf16_tflops=_float(row["bf16_tflops_dense"]),
        fp8_tflops=_float(row["fp8_tflops_dense"]),
        nvlink_gbytes_per_s=_float(row["nvlink_bandwidth_gbps"]),
        pcie_gen=4 if math.isnan(pcie) else int(pcie),
        tdp_watts=_float(row["tdp_watts"]),
    )


def gpu_specs_from_frame(gpus_df: pd.DataFrame) -> dict[str, GpuSpec]:
    """Map "<model> <variant>" -> GpuSpec for every usable row (needs memory and a peak)."""
    specs: dict[str, GpuSpec] = {}
    for _, row in gpus_df.iterrows():
        spec = gpu_spec_from_row(row)
        has_peak = any(spec.supports(p) for p in PRECISIONS)
        if has_peak and not math.isnan(spec.memory_bandwidth_gbytes_per_s):
            specs[spec.name] = spec
    for extra in EXTRA_GPU_SPECS:
        specs.setdefault(extra.name, extra)
    return specs


def load_gpu_specs(path: str) -> dict[str, GpuSpec]:
    """Read a gpus.csv file at `path` into GpuSpecs (see gpu_specs_from_frame)."""
    return gpu_specs_from_frame(pd.read_csv(path))


def lookup_gpu(specs: dict[str, GpuSpec], name: str) -> GpuSpec:
    """Find `name` in `specs`, resolving the DGX-2 V100 SXM3 aliases. Raises ValueError."""
    if name in specs:
        return specs[name]
    if name in GPU_ALIASES:
        base, clock_factor, tdp_watts = GPU_ALIASES[name]
        if base in specs:
            return _scaled(specs[base], name, clock_factor, tdp_watts)
    raise ValueError(f"unknown GPU {name!r}")


def _scaled(spec: GpuSpec, name: str, factor: float, tdp_watts: float) -> GpuSpec:
    return replace(
        spec, name=name, tdp_watts=tdp_watts, fp32_tflops=spec.fp32_tflops * factor,
        tf32_tflops=spec.tf32_tflops * factor, fp16_tflops=spec.fp16_tflops * factor,
        bf16_tflops=spec.bf16_tflops * factor, fp8_tflops=spec.fp8_tflops * factor,
    )


def fabric_gbytes_per_s(gpu: GpuSpec, intra_node: str) -> float:
    """Per-GPU per-direction bandwidth of the node fabric, GB/s.

    NVLink/NVSwitch/Infinity Fabric use half the listed bidirectional figure; PCIe (and NVLink
    bridges, which only pair two GPUs) use the PCIe x16 rate of the GPU's generation.
    """
    pcie = PCIE_GBYTES_PER_S.get(gpu.pcie_gen, 32.0)
    if intra_node == "pcie" or math.isnan(gpu.nvlink_gbytes_per_s):
        return pcie
    if intra_node == "unknown" and "PCIe" in gpu.name:
        return pcie
    return gpu.nvlink_gbytes_per_s / 2.0


def default_inter_node_gbits_per_s(gpu: GpuSpec, gpus_per_node: int) -> float:
    """Typical scale-out bandwidth of a training node with this GPU, Gbit/s (one NIC per GPU)."""
    per_gpu = DEFAULT_NIC_GBITS_PER_GPU.get(gpu.architecture, DEFAULT_NIC_GBITS_FALLBACK)
    return per_gpu * gpus_per_node


def make_hardware(
    gpu: GpuSpec, *, gpus_per_node: int, n_nodes: int, intra_node: str = "unknown",
    intra_node_gbytes_per_s: float | None = None, inter_node_gbits_per_s: float | None = None,
) -> Hardware:
    """Hardware with documented defaults for missing bandwidths."""
    intra = intra_node_gbytes_per_s or fabric_gbytes_per_s(gpu, intra_node)
    inter = inter_node_gbits_per_s or default_inter_node_gbits_per_s(gpu, gpus_per_node)
    return Hardware(gpu, gpus_per_node, n_nodes, intra_node, intra, inter)



def precision_class(precision: str) -> str:
    """fp16 and bf16 share tensor-core peaks and kernels: one class "16bit"; others as given."""
    if precision not in PRECISIONS:
        raise ValueError(f"unknown precision {precision!r}")
    return "16bit" if precision in ("fp16", "bf16") else precision


def efficiency_class(gpu: GpuSpec, precision: str) -> str:
    """The EFFICIENCY_CLASSES entry of `gpu` at `precision`.

    TF32 runs on the same tensor cores as 16-bit math (efficiency relative to the TF32 peak).
    """
    return efficiency_class_of(gpu.architecture, precision)


def efficiency_class_of(architecture: str, precision: str) -> str:
    """efficiency_class from an architecture name (as in gpus.csv) and a precision."""
    pclass = "16bit" if precision == "tf32" else precision_class(precision)
    key = f"{architecture}|{pclass}"
    return key if key in EFFICIENCY_CLASSES else "other"
