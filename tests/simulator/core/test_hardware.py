"""GPU specs from gpus.csv, aliases and the A30 datasheet row."""

from __future__ import annotations

import math

import pytest

from simulator.core import lookup_gpu, make_hardware


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
