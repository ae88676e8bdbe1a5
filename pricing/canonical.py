"""Map providers' accelerator and instance names to one catalog accelerator and node fabric.

Pure functions, no Django: importers call them while parsing. Each provider names GPUs its own
way (SkyPilot "A100-80GB", AWS "NVIDIA A100" with 40 or 80 GB, GCP "a2-ultragpu", Azure
"NC24ads_A100_v4" which is the PCIe card), so the instance name decides the variant.
"""

import re
from dataclasses import dataclass

# Accelerator slugs are slugify("<model> <variant>") of gpus.csv rows.
A100_SXM_40 = "a100-sxm4-40gb"
A100_SXM_80 = "a100-sxm4-80gb"
A100_PCIE_40 = "a100-pcie-40gb"
A100_PCIE_80 = "a100-pcie-80gb"
H100_SXM = "h100-sxm5-80gb"
H100_PCIE = "h100-pcie-80gb"
H100_NVL = "h100-nvl-94gb"
V100_SXM_16 = "v100-sxm2-16gb"
V100_SXM_32 = "v100-sxm2-32gb"
V100_PCIE_16 = "v100-pcie-16gb"
V100_PCIE_32 = "v100-pcie-32gb"

_SIMPLE = {
    "H200": "h200-sxm-141gb",
    "B200": "b200-hgx-180gb",
    "L4": "l4-pcie-24gb",
    "L40S": "l40s-pcie-48gb",
    "T4": "t4-pcie-16gb",
    "A10G": "a10g-pcie-24gb",
    "A10": "a10-pcie-24gb",
    "MI300X": "instinct-mi300x-oam-192gb",
    "MI250X": "instinct-mi250x-oam-128gb",
    "MI250": "instinct-mi250-oam-128gb",
    "GAUDI2": "gaudi2-oam-96gb",
    "RTX4090": "geforce-rtx-4090-pcie-24gb",
}

# Name normalisation: AWS price files write "NVIDIA A100", SkyPilot "A100-80GB", Vast "H100".
_ALIASES = {
    "NVIDIA A100": "A100",
    "NVIDIA A10G": "A10G",
    "NVIDIA H100": "H100",
    "NVIDIA H200": "H200",
    "NVIDIA L4": "L4",
    "NVIDIA L40S": "L40S",
    "NVIDIA T4": "T4",
    "NVIDIA V100": "V100",
    "NVIDIA B200 BLACKWELL": "B200",
    "H100-MEGA": "H100",
    "H100-80GB": "H100",
    "A100-40GB": "A100",
    "AMD INSTINCT MI300X": "MI300X",
    "GEFORCE RTX 4090": "RTX4090",
}


_MARKETPLACE_LISTING = re.compile(r"^\d+X-", re.IGNORECASE)


def is_marketplace_listing(instance_type: str) -> bool:
    """Vast-style names ("2x-A100_SXM4-32-65536"): one host rented from its owner."""
    return bool(_MARKETPLACE_LISTING.match(instance_type))


def _normalise(name: str) -> str:
    key = name.strip().upper()
    return _ALIASES.get(key, key)


def _a100(instance: str, memory_mib: float | None) -> str:
    is_80 = (
        "80" in instance
        or "ULTRAGPU" in instance
        or "P4DE" in instance
        or (memory_mib is not None and memory_mib > 50_000)
    )
    is_pcie = ("_A100_V4" in instance and instance.startswith("STANDARD_NC")) or "PCIE" in instance
    # Lambda's gpu_{1,2,4}x_a100 without "sxm4" are PCIe cards; its 8x boxes are HGX SXM4.
    if instance.startswith("GPU_") and "SXM" not in instance and not instance.startswith("GPU_8X"):
        is_pcie = True
    if is_pcie:
        return A100_PCIE_80 if is_80 else A100_PCIE_40
    return A100_SXM_80 if is_80 else A100_SXM_40


def _h100(instance: str, memory_mib: float | None) -> str:
    if "NVL" in instance or (instance.startswith("STANDARD_NC") and "H100" in instance):
        return H100_NVL
    if memory_mib is not None and memory_mib > 90_000:
        return H100_NVL
    if "PCIE" in instance:
        return H100_PCIE
    return H100_SXM


def _v100(name: str, instance: str, memory_mib: float | None) -> str:
    # AWS lists p3dn's 32 GB per GPU where other rows give the instance total.
    is_32 = (
        name.endswith("32GB")
        or instance.startswith("P3DN")
        or (memory_mib is not None and memory_mib > 20_000)
    )
    if instance.startswith("STANDARD_NC") and instance.endswith("_V3"):
        return V100_PCIE_16
    # A marketplace listing ("2x-Tesla_V100-...") that does not say SXM is a PCIe card.
    if is_marketplace_listing(instance) and "SXM" not in instance:
        return V100_PCIE_32 if is_32 else V100_PCIE_16
    return V100_SXM_32 if is_32 else V100_SXM_16


def canonical_accelerator(
    provider_name: str, instance_type: str, memory_mib_per_gpu: float | None = None
) -> str | None:
    """The catalog slug for a provider's accelerator name, or None when it is not in the catalog.

    `memory_mib_per_gpu` disambiguates marketplace offers that give no variant.
    """
    raw = provider_name.strip().upper()
    name = _normalise(provider_name)
    instance = instance_type.strip().upper()
    if name == "A100" or raw == "A100-80GB":
        return _a100(instance if raw != "A100-80GB" else instance + "-80", memory_mib_per_gpu)
    if name == "H100":
        return _h100(instance, memory_mib_per_gpu)
    if name.startswith("V100"):
        return _v100(raw, instance, memory_mib_per_gpu)
    return _SIMPLE.get(name)


@dataclass(frozen=True)
class NodeFabric:
    """How GPUs inside one instance talk, and the scale-out network of the instance."""

    interconnect: str  # nvswitch, nvlink, xgmi, pcie or none
    bandwidth_gbps: float | None  # GB/s per GPU
    network_gbps: float | None  # Gbit/s per node; None = not published


# Bidirectional GB/s of an x16 link per PCIe generation.
PCIE_GBPS = {3: 32.0, 4: 64.0, 5: 128.0}

# Scale-out network per instance (Gbit/s), from the providers' instance pages.
_NETWORK_GBPS = {
    "p4d.24xlarge": 400,
    "p4de.24xlarge": 400,
    "p5.48xlarge": 3200,
    "p5e.48xlarge": 3200,
    "p5en.48xlarge": 3200,
    "p5.4xlarge": 100,
    "p6-b200.48xlarge": 3200,
    "p3dn.24xlarge": 100,
    "p3.16xlarge": 25,
    "p3.8xlarge": 10,
    "p3.2xlarge": 10,
    "g5.48xlarge": 100,
    "g5.24xlarge": 50,
    "g5.12xlarge": 40,
    "g6.48xlarge": 100,
    "g6.24xlarge": 50,
    "g6.12xlarge": 40,
    "g6e.48xlarge": 400,
    "g6e.24xlarge": 200,
    "g6e.12xlarge": 100,
    "g4dn.metal": 100,
    "g4dn.12xlarge": 50,
    "g4dn.16xlarge": 50,
    "Standard_ND96asr_v4": 1600,
    "Standard_ND96amsr_A100_v4": 1600,
    "Standard_ND96isr_H100_v5": 3200,
    "Standard_ND96isr_H200_v5": 3200,
    "Standard_ND96isr_MI300X_v5": 3200,
    "Standard_ND40rs_v2": 100,
    "Standard_NC24rs_v3": 56,
    "a2-highgpu-8g": 100,
    "a2-megagpu-16g": 100,
    "a2-ultragpu-8g": 100,
    "a3-highgpu-8g": 1000,
    "a3-edgegpu-8g": 800,
    "a3-megagpu-8g": 1800,
    "a3-ultragpu-8g": 3600,
    "a4-highgpu-8g": 3600,
    "g2-standard-96": 100,
    "gpu_8x_h100_sxm5": 3200,
    "gpu_8x_b200_sxm6": 3200,
}

_HGX = {A100_SXM_40, A100_SXM_80, H100_SXM, "h200-sxm-141gb", "b200-hgx-180gb"}


def network_gbps(instance_type: str) -> float | None:
    base = instance_type.removesuffix("-nolssd")
    value = _NETWORK_GBPS.get(base)
    return float(value) if value is not None else None


def node_fabric(
    instance_type: str,
    accelerator_slug: str,
    gpu_count: int,
    interconnect_bandwidth_gbps: float | None,
    pcie_gen: int | None,
) -> NodeFabric:
    """Intra-node fabric from the accelerator's form factor and the GPU count of the instance."""
    network = network_gbps(instance_type)
    if gpu_count <= 1:
        return NodeFabric("none", None, network)
    if is_marketplace_listing(instance_type):
        # A marketplace host: NVLink only if the listing says SXM; no NVSwitch is assumed.
        if "SXM" in instance_type.upper():
            return NodeFabric("nvlink", interconnect_bandwidth_gbps, network)
        return NodeFabric("pcie", PCIE_GBPS.get(pcie_gen or 4), network)
    if accelerator_slug in _HGX:
        return NodeFabric("nvswitch", interconnect_bandwidth_gbps, network)
    if accelerator_slug.startswith("instinct-"):
        return NodeFabric("xgmi", interconnect_bandwidth_gbps, network)
    if accelerator_slug.startswith("v100-sxm"):
        return NodeFabric("nvlink", interconnect_bandwidth_gbps, network)
    if accelerator_slug == H100_NVL and gpu_count == 2:
        return NodeFabric("nvlink", interconnect_bandwidth_gbps, network)
    return NodeFabric("pcie", PCIE_GBPS.get(pcie_gen or 4), network)


_GPU_SUFFIX = re.compile(r"-(\d+)g(?:-nolssd)?$")
_G2_GPUS = {"g2-standard-24": 2, "g2-standard-48": 4, "g2-standard-96": 8}
_GCP_FAMILY_GPU = {
    "a2-highgpu": "A100",
    "a2-megagpu": "A100",
    "a2-ultragpu": "A100-80GB",
    "a3-highgpu": "H100",
    "a3-edgegpu": "H100",
    "a3-megagpu": "H100-MEGA",
    "a3-ultragpu": "H200",
    "a4-highgpu": "B200",
}


def gcp_bundled_gpus(machine_type: str) -> tuple[str, int] | None:
    """The (SkyPilot accelerator name, count) a GCP accelerator-optimized type comes with."""
    if machine_type.startswith("g2-standard-"):
        return "L4", _G2_GPUS.get(machine_type, 1)
    family = "-".join(machine_type.split("-")[:2])
    match = _GPU_SUFFIX.search(machine_type)
    if family in _GCP_FAMILY_GPU and match:
        return _GCP_FAMILY_GPU[family], int(match.group(1))
    return None


# GCP N1 hosts that T4/V100 attach to: n1-highmem with 8 vCPUs per GPU, as SkyPilot defaults.
GCP_ATTACHABLE = {"T4": (1, 2, 4), "V100": (1, 2, 4, 8)}


def gcp_n1_host(gpu_count: int) -> str:
    return f"n1-highmem-{8 * gpu_count}"
