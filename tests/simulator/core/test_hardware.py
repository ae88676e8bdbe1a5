"""GPU specs from gpus.csv, aliases, the A30 datasheet row and the A10G's CUDA-core rate."""

from __future__ import annotations

import math

import pytest

from simulator.core import lookup_gpu, make_hardware
from simulator.core.hardware import cuda_core_rate_note, has_tensor_rates, rate_precision


@pytest.mark.parametrize(("name", "precision", "tflops"), [
    ("A100 SXM4-80GB", "bf16", 312.0), ("A100 SXM4-80GB", "tf32", 156.0),
    ("H100 SXM5-80GB", "fp8", 1979.0), ("V100 SXM2-16GB", "tf32", 15.7),
    ("A30 PCIe-24GB", "fp16", 165.0), ("V100 SXM3-32GB 450W", "fp16", 130.0),
])
def test_peak_per_precision(gpu_specs, name, precision, tflops):
    assert lookup_gpu(gpu_specs, name).peak_tflops(precision) == pytest.approx(tflops)


def test_v100_has_no_bf16(gpu_specs):
    assert not gpu_specs["V100 SXM2-32GB"].supports("bf16")
    assert math.isnan(gpu_specs["V100 SXM2-32GB"].peak_tflops("bf16"))


def test_unknown_gpu_raises(gpu_specs):
    with pytest.raises(ValueError):
        lookup_gpu(gpu_specs, "Z9000")


def test_default_bandwidths(gpu_specs):
    hw = make_hardware(gpu_specs["A100 SXM4-80GB"], gpus_per_node=8, n_nodes=2,
                       intra_node="nvswitch")
    assert hw.intra_node_gbytes_per_s == 300.0
    assert hw.inter_node_gbits_per_s == 1600.0
    assert hw.inter_node_gbytes_per_s_per_gpu == 25.0


def test_a10g_has_its_published_specs_and_no_tensor_rates(gpu_specs):
    a10g = gpu_specs["A10G PCIe-24GB"]
    assert (a10g.memory_gib, a10g.memory_bandwidth_gbytes_per_s) == (24.0, 600.0)
    assert (a10g.fp32_tflops, a10g.tdp_watts, a10g.pcie_gen) == (31.52, 300.0, 4)
    assert not has_tensor_rates(a10g) and has_tensor_rates(gpu_specs["A10 PCIe-24GB"])
    assert not a10g.supports("bf16") and not a10g.supports("fp16")


@pytest.mark.parametrize(("name", "precision", "expected"), [
    ("A10G PCIe-24GB", "tf32", "fp32"), ("A10G PCIe-24GB", "fp32", "fp32"),
    ("V100 SXM2-16GB", "tf32", "fp32"), ("A100 SXM4-80GB", "tf32", "tf32"),
    ("A100 SXM4-80GB", "bf16", "bf16"),
])
def test_rate_precision_is_fp32_where_tf32_falls_back_to_cuda_cores(
        gpu_specs, name, precision, expected):
    assert rate_precision(gpu_specs[name], precision) == expected


@pytest.mark.parametrize(("name", "precision", "has_note"), [
    ("A10G PCIe-24GB", "fp32", True), ("A10G PCIe-24GB", "tf32", True),
    ("A10G PCIe-24GB", "bf16", False),  # never planned: no rate
    ("A10 PCIe-24GB", "fp32", False), ("V100 SXM2-16GB", "tf32", False),
    ("H100 SXM5-80GB", "fp32", False),
])
def test_only_a_gpu_without_tensor_rates_gets_the_cuda_core_note(
        gpu_specs, name, precision, has_note):
    note = cuda_core_rate_note(gpu_specs[name], precision)
    assert bool(note) is has_note
    if has_note:
        assert note == ("planned at the FP32 CUDA-core rate (31.52 TFLOPS) because its "
                        "tensor-core rates (TF32, FP16, BF16) are unpublished: a lower bound "
                        "on speed")
