import pytest

from planner.purchase_mix.core.upload.gpu_names import CatalogGpu, match_accelerators

CATALOG = [
    CatalogGpu("a100-pcie-40gb", "A100", "PCIe-40GB", 40),
    CatalogGpu("a100-sxm4-40gb", "A100", "SXM4-40GB", 40),
    CatalogGpu("a100-sxm4-80gb", "A100", "SXM4-80GB", 80),
    CatalogGpu("a10-pcie-24gb", "A10", "PCIe-24GB", 24),
    CatalogGpu("h100-sxm5-80gb", "H100", "SXM5-80GB", 80),
    CatalogGpu("h100-pcie-80gb", "H100", "PCIe-80GB", 80),
    CatalogGpu("l4-pcie-24gb", "L4", "PCIe-24GB", 24),
    CatalogGpu("l40s-pcie-48gb", "L40S", "PCIe-48GB", 48),
    CatalogGpu("t4-pcie-16gb", "T4", "PCIe-16GB", 16),
    CatalogGpu("v100-sxm2-32gb", "V100", "SXM2-32GB", 32),
    CatalogGpu("geforce-rtx-4090-pcie-24gb", "GeForce RTX 4090", "PCIe-24GB", 24),
    CatalogGpu("instinct-mi300x-oam-192gb", "Instinct MI300X", "OAM-192GB", 192),
]


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("A100", ("a100-pcie-40gb", "a100-sxm4-40gb", "a100-sxm4-80gb")),
        ("a100-80gb", ("a100-sxm4-80gb",)),
        ("A100-80GB", ("a100-sxm4-80gb",)),
        ("A100 SXM4 40GB", ("a100-sxm4-40gb",)),
        ("a100-sxm4-80gb", ("a100-sxm4-80gb",)),
        ("H100", ("h100-sxm5-80gb", "h100-pcie-80gb")),
        ("h100_pcie", ("h100-pcie-80gb",)),
        ("A10", ("a10-pcie-24gb",)),
        ("L4", ("l4-pcie-24gb",)),
        ("l40s", ("l40s-pcie-48gb",)),
        ("T4", ("t4-pcie-16gb",)),
        ("Tesla V100-SXM2-32GB", ("v100-sxm2-32gb",)),
        ("RTX4090", ("geforce-rtx-4090-pcie-24gb",)),
        ("MI300X", ("instinct-mi300x-oam-192gb",)),
        ("A100-999GB", ("a100-pcie-40gb", "a100-sxm4-40gb", "a100-sxm4-80gb")),
        ("P100", ()),
        ("", ()),
    ],
)
def test_match_accelerators(name, expected):
    assert match_accelerators(name, CATALOG) == expected
