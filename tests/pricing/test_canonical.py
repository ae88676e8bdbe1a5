import pytest

from pricing.canonical import canonical_accelerator, gcp_bundled_gpus


@pytest.mark.parametrize(
    ("provider_name", "instance", "slug"),
    [
        ("A100", "p4d.24xlarge", "a100-sxm4-40gb"),
        ("NVIDIA A100", "p4d.24xlarge", "a100-sxm4-40gb"),
        ("A100-80GB", "p4de.24xlarge", "a100-sxm4-80gb"),
        ("A100", "p4de.24xlarge", "a100-sxm4-80gb"),
        ("A100-80GB", "Standard_NC24ads_A100_v4", "a100-pcie-80gb"),
        ("A100", "Standard_ND96asr_v4", "a100-sxm4-40gb"),
        ("A100-80GB", "Standard_ND96amsr_A100_v4", "a100-sxm4-80gb"),
        ("A100", "a2-highgpu-1g", "a100-sxm4-40gb"),
        ("A100", "a2-ultragpu-8g", "a100-sxm4-80gb"),
        ("A100-80GB", "a2-ultragpu-1g", "a100-sxm4-80gb"),
        ("A100", "gpu_1x_a100", "a100-pcie-40gb"),
        ("A100", "gpu_8x_a100", "a100-sxm4-40gb"),
        ("H100", "p5.48xlarge", "h100-sxm5-80gb"),
        ("H100", "Standard_ND96isr_H100_v5", "h100-sxm5-80gb"),
        ("H100", "Standard_NC40ads_H100_v5", "h100-nvl-94gb"),
        ("H100", "gpu_1x_h100_pcie", "h100-pcie-80gb"),
        ("H100", "gpu_8x_h100_sxm5", "h100-sxm5-80gb"),
        ("H100-MEGA", "a3-megagpu-8g", "h100-sxm5-80gb"),
        ("V100", "Standard_NC6s_v3", "v100-pcie-16gb"),
        ("V100-32GB", "Standard_ND40rs_v2", "v100-sxm2-32gb"),
        ("V100", "p3.2xlarge", "v100-sxm2-16gb"),
        ("V100", "p3dn.24xlarge", "v100-sxm2-32gb"),
        ("V100-32GB", "p3dn.24xlarge", "v100-sxm2-32gb"),
        ("H200", "p5e.48xlarge", "h200-sxm-141gb"),
        ("B200", "p6-b200.48xlarge", "b200-hgx-180gb"),
        ("NVIDIA A10G", "g5.xlarge", "a10g-pcie-24gb"),
        ("L4", "g2-standard-4", "l4-pcie-24gb"),
        ("L40S", "g6e.xlarge", "l40s-pcie-48gb"),
        ("T4", "Standard_NC4as_T4_v3", "t4-pcie-16gb"),
        ("MI300X", "Standard_ND96isr_MI300X_v5", "instinct-mi300x-oam-192gb"),
        ("Trainium", "trn1.2xlarge", None),
        ("T4g", "g5g.xlarge", None),
    ],
)
def test_canonical_accelerator(provider_name: str, instance: str, slug: str | None) -> None:
    assert canonical_accelerator(provider_name, instance) == slug


@pytest.mark.parametrize(
    ("memory_mib", "slug"), [(40960, "a100-sxm4-40gb"), (81920, "a100-sxm4-80gb")]
)
def test_marketplace_a100_variant_from_memory(memory_mib: float, slug: str) -> None:
    assert canonical_accelerator("A100", "1x-A100_SXM4-16-65536", memory_mib) == slug


@pytest.mark.parametrize(
    ("machine", "bundled"),
    [
        ("a2-highgpu-8g", ("A100", 8)), ("a2-ultragpu-1g", ("A100-80GB", 1)),
        ("a3-highgpu-8g", ("H100", 8)), ("g2-standard-24", ("L4", 2)),
        ("g2-standard-4", ("L4", 1)), ("n1-highmem-8", None),
    ],
)
def test_gcp_bundled_gpus(machine: str, bundled: tuple[str, int] | None) -> None:
    assert gcp_bundled_gpus(machine) == bundled


# --- marketplace listings (Vast) ----------------------------------------------------------

def test_vast_pcie_a100_is_a_pcie_card() -> None:
    from pricing.canonical import canonical_accelerator

    assert canonical_accelerator("A100", "2x-A100_PCIE-32-65536", 40960) == "a100-pcie-40gb"
    assert canonical_accelerator("A100", "1x-A100_SXM4-32-65536", 40960) == "a100-sxm4-40gb"
    assert canonical_accelerator("A100", "1x-A100_SXM4-32-65536", 81920) == "a100-sxm4-80gb"


def test_vast_v100_without_sxm_is_pcie_and_has_no_nvlink() -> None:
    from pricing.canonical import canonical_accelerator, node_fabric

    assert canonical_accelerator("V100", "2x-Tesla_V100-32-65536", 16384) == "v100-pcie-16gb"
    assert node_fabric("2x-Tesla_V100-32-65536", "v100-pcie-16gb", 2, None, 3).interconnect == (
        "pcie")
    assert node_fabric("2x-A100_SXM4-32-65536", "a100-sxm4-80gb", 2, 600.0, 4).interconnect == (
        "nvlink")


def test_vast_names_keep_40_and_80_gb_apart_and_regions_are_codes() -> None:
    from pricing.importers.skypilot import vast_instance_name, vast_region

    assert vast_instance_name("1x-A100_SXM4-32-65536", 40960.0) == "1x-A100_SXM4_40GB-32-65536"
    assert vast_instance_name("1x-A100_SXM4-32-65536", 81920.0) == "1x-A100_SXM4_80GB-32-65536"
    assert vast_region("Georgia, US, NA") == "us-georgia"
    assert vast_region(", CA, NA") == "ca"
    assert vast_region("The Netherlands, NL, EU") == "nl-the-netherlands"
