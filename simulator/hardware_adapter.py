"""Turn catalog rows (pricing models) into the simulator core's GpuSpec and Hardware."""

import math

from pricing.models import Accelerator, InstanceType
from simulator.core.hardware import GpuSpec, Hardware

# Scale-out bandwidth assumed when a provider publishes none for an instance (Gbit/s per node):
# the "up to 25 Gigabit" class of general GPU instances.
ASSUMED_NETWORK_GBITS_PER_S = 25.0
_INTRA = {
    "nvswitch": "nvswitch",
    "nvlink": "nvlink",
    "xgmi": "xgmi",
    "pcie": "pcie",
    "none": "pcie",
}


def _nan(value: float | None) -> float:
    return math.nan if value is None else float(value)


def gpu_spec(accelerator: Accelerator) -> GpuSpec:
    return GpuSpec(
        name=accelerator.name,
        architecture=accelerator.architecture,
        memory_gib=float(accelerator.memory_gb),
        memory_bandwidth_gbytes_per_s=_nan(accelerator.memory_bandwidth_gbps),
        fp32_tflops=_nan(accelerator.fp32_tflops),
        tf32_tflops=_nan(accelerator.tf32_tflops_dense),
        fp16_tflops=_nan(accelerator.fp16_tflops_dense),
        bf16_tflops=_nan(accelerator.bf16_tflops_dense),
        fp8_tflops=_nan(accelerator.fp8_tflops_dense),
        nvlink_gbytes_per_s=_nan(accelerator.interconnect_bandwidth_gbps),
        pcie_gen=accelerator.pcie_gen or 4,
        tdp_watts=_nan(accelerator.tdp_watts),
    )


def is_simulatable(accelerator: Accelerator) -> bool:
    """The core needs a memory bandwidth and at least one published peak."""
    peaks = (accelerator.fp32_tflops, accelerator.fp16_tflops_dense, accelerator.bf16_tflops_dense)
    return accelerator.memory_bandwidth_gbps is not None and any(p for p in peaks)


def hardware(instance: InstanceType, n_nodes: int) -> Hardware:
    """A cluster of `n_nodes` identical instances; catalog GB/s are bidirectional."""
    intra_gbytes = instance.intra_node_bandwidth_gbps
    per_direction = intra_gbytes / 2.0 if intra_gbytes else 16.0
    return Hardware(
        gpu=gpu_spec(instance.accelerator),
        gpus_per_node=instance.gpu_count,
        n_nodes=n_nodes,
        intra_node=_INTRA[instance.intra_node_interconnect],
        intra_node_gbytes_per_s=per_direction,
        inter_node_gbits_per_s=instance.network_gbps or ASSUMED_NETWORK_GBITS_PER_S,
    )
