"""Fit the serving calibration to published runs: MAP with physical priors (scipy).

Residuals are log(predicted / measured) of every measured metric of every case except server
runs held to latency limits (MLPerf Server): their rate and latencies come from the goodput
search (predict._server), too slow inside the optimiser, so they only validate the fit. Each is
weighted 1/sqrt(rows of its source), so a source of 48 rows weighs about 7 single-row sources,
not 48, and scaled by a 25 % noise sd. Priors are Gaussian in transformed coordinates (logit for
fractions, log for positive scales). The loss is soft-L1 (one odd row cannot drag the fit, as
in the training calibration's robust loss), minimised with scipy's derivative-free Powell
method: predictions have kinks (the scheduler cap, the KV capacity, clipped misses) that stall
gradient methods.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace

import numpy as np
from scipy.optimize import minimize

from simulator.core.hardware import GpuSpec
from simulator.core.serving.engine import ServingCalibration
from simulator.core.serving.predict import predict_case
from simulator.core.serving.runs import ServingCase
from simulator.core.serving.targets import Targets

# (field, transform, prior, prior sd in transformed units) and why:
# compute: prefill GEMMs at 50-60 % of the dense peak (TRT-LLM/vLLM kernels at 1-4k tokens),
# decode GEMMs with M = batch (tens to hundreds of rows) near a third of it;
# memory: decode reads at 70-85 % of HBM bandwidth (memory-bound GEMV/attention kernels);
# vLLM/ROCm 2024 builds ran 10-30 % behind TensorRT-LLM on the same GPUs; overheads: ~1 ms per
# step (scheduler, sampling) and ~10 us per layer (launches) without CUDA graphs; NCCL
# all-reduce ~10 us latency and ~70 % of link bandwidth (PCIe peer traffic, which crosses host
# bridges and shares them, about half); scheduler caps (prior 1,024) from 256 (vLLM
# max_num_seqs default) to a few thousand (TRT-LLM max_batch_size) sequences; memory and
# compute time of a step overlap only partly (p-norm p ~ 1.5: MLPerf
# and TRT-LLM sweeps show step time growing almost linearly with batch); queueing as M/D/1
# and Poisson per-request spread (factors 1); fp8 GEMMs reach ~70-80 % of the 16-bit efficiency
# on their doubled peak (the end-to-end fp8 speedup published for Hopper is 1.4-1.6x, not 2x).
PRIORS: tuple[tuple[str, str, float, float], ...] = (
    ("compute_efficiency", "logit", 0.55, 0.5),
    ("decode_compute_efficiency", "logit", 0.35, 0.5),
    ("memory_efficiency", "logit", 0.80, 0.5),
    ("vllm_factor", "logit", 0.80, 0.5),
    ("step_overhead_seconds", "log", 1.0e-3, 1.0),
    ("layer_overhead_seconds", "log", 8.0e-6, 1.0),
    ("collective_latency_seconds", "log", 1.0e-5, 1.0),
    ("network_efficiency", "logit", 0.70, 0.5),
    ("pcie_efficiency", "logit", 0.50, 0.5),
    ("batch_cap", "log", 1024.0, 1.0),
    ("roofline_sharpness", "log", 1.5, 0.3),
    ("queue_factor", "log", 1.0, 0.5),
    ("tail_factor", "log", 1.0, 0.5),
    ("fp8_efficiency_ratio", "logit", 0.75, 0.5),
)
# A prediction that cannot run (unstable, does not fit) counts as a factor-of-e^3 miss.
MAX_LOG_ERROR = 3.0
# Spread of a published figure around what any model of its setup can know (software version,
# tuning): a 25 % log-sd; residuals beyond it count linearly (soft L1), not quadratically.
NOISE_SD = 0.25
MAX_EVALUATIONS = 1500


def _forward(transform: str, value: float) -> float:
    return math.log(value / (1.0 - value)) if transform == "logit" else math.log(value)


def _backward(transform: str, value: float) -> float:
    return 1.0 / (1.0 + math.exp(-value)) if transform == "logit" else math.exp(value)


def to_vector(cal: ServingCalibration) -> np.ndarray:
    return np.array([_forward(t, float(getattr(cal, f))) for f, t, _, _ in PRIORS])


def from_vector(vector: np.ndarray, base: ServingCalibration) -> ServingCalibration:
    values = {f: _backward(t, float(v)) for (f, t, _, _), v in zip(PRIORS, vector, strict=True)}
    return replace(base, **values)


def log_error(predicted: float, measured: float) -> float:
    """log(predicted / measured), clipped to +-MAX_LOG_ERROR (NaN/inf predictions clip)."""
    if not (predicted > 0 and math.isfinite(predicted)):
        return MAX_LOG_ERROR
    return float(np.clip(math.log(predicted / measured), -MAX_LOG_ERROR, MAX_LOG_ERROR))


def fit_targets(cases: Sequence[ServingCase]) -> list[tuple[ServingCase, str, float]]:
    """(case, metric, weight) of every residual the fit uses."""
    per_source = Counter(c.source for c in cases)
    targets = []
    for case in cases:
        weight = 1.0 / math.sqrt(per_source[case.source])
        if case.load_kind == "rate" and Targets(case.ttft_limit_s, case.tpot_limit_s,
                                                case.e2e_limit_s).is_bounded:
            continue
        for metric, value in case.measured:
            if value <= 0:
                continue
            targets.append((case, metric, weight))
    return targets


def fit_serving(cases: Sequence[ServingCase], gpus: dict[str, GpuSpec],
                start: ServingCalibration | None = None) -> ServingCalibration:
    """The MAP calibration for `cases`; deterministic for the same inputs. ValueError when no
    case has a measured metric."""
    base = start or ServingCalibration()
    targets = fit_targets(cases)
    if not targets:
        raise ValueError("no measured metric to fit")
    prior_mean = np.array([_forward(t, p) for _, t, p, _ in PRIORS])
    prior_sd = np.array([sd for *_, sd in PRIORS])

    def objective(vector: np.ndarray) -> float:
        cal = from_vector(vector, base)
        cache: dict[str, dict[str, float]] = {}
        total = 0.0
        for case, metric, weight in targets:
            if case.row_id not in cache:
                cache[case.row_id] = predict_case(case, gpus, cal)
            predicted = cache[case.row_id].get(metric, math.nan)
            z = log_error(predicted, case.measured_value(metric)) / NOISE_SD
            total += weight * (math.sqrt(1.0 + z * z) - 1.0)
        return total + 0.5 * float(np.sum(((vector - prior_mean) / prior_sd) ** 2))

    result = minimize(objective, prior_mean.copy(), method="Powell",
                      options={"maxfev": MAX_EVALUATIONS, "xtol": 1e-3, "ftol": 1e-6})
    return from_vector(result.x, base)
