"""A case's predicted metrics: throughput (output tokens/s, the row's basis), TTFT and TPOT (ms,
at the row's statistic). Server rows with latency limits (MLPerf Server) predict throughput as
the goodput capacity: the highest request rate whose predicted P99 TTFT/TPOT (or P99 end-to-end
latency) stay within the limits, the figure MLPerf reports, and their latencies at that rate (the
benchmark's own procedure).
"""

from __future__ import annotations

import math
from dataclasses import replace

from simulator.core.hardware import GpuSpec, fabric_gbytes_per_s
from simulator.core.serving.engine import Replica, ServingCalibration
from simulator.core.serving.models import SERVING_PRESETS
from simulator.core.serving.queueing import (
    LoadPoint,
    Traffic,
    at_concurrency,
    at_rate,
    burst,
    offline_tokens_per_s,
    saturated,
    static_batch,
)
from simulator.core.serving.runs import ServingCase
from simulator.core.serving.targets import Targets, goodput_rate

MS = 1e3


def replica_of(case: ServingCase, gpus: dict[str, GpuSpec]) -> Replica:
    gpu = gpus[case.gpu_name]
    return Replica(SERVING_PRESETS[case.model_key], gpu, case.tp, case.precision,
                   case.kv_bytes, fabric_gbytes_per_s(gpu, "unknown"), case.pp,
                   min(case.ep, case.tp * case.pp), case.framework)


def _latency(point: LoadPoint, stat: str) -> tuple[float, float]:
    if stat == "p99":
        return point.ttft_p99_s * MS, point.tpot_p99_s * MS
    return point.ttft_mean_s * MS, point.tpot_mean_s * MS


def _server(case: ServingCase, replica: Replica, traffic: Traffic,
            cal: ServingCalibration) -> dict[str, float]:
    """Poisson arrivals. With latency limits (MLPerf Server) the benchmark raises the rate until
    a P99 limit binds and reports that rate with the latencies measured at it, so the model does
    the same: its own highest passing rate, and its latencies there (the measured rate sits a
    few % below saturation, where latency hinges on a capacity error of a few %). Without
    limits, the latencies at the offered rate."""
    replicas = case.replicas
    limits = Targets(case.ttft_limit_s, case.tpot_limit_s, case.e2e_limit_s)
    out: dict[str, float] = {}
    if limits.is_bounded:
        rate = goodput_rate(replica, traffic, limits, cal)
        out["throughput_tokens_per_s"] = rate * traffic.output_tokens * replicas
        if rate > 0:
            out["ttft_ms"], out["tpot_ms"] = _latency(at_rate(replica, traffic, rate, cal),
                                                      case.latency_stat)
            return out
    point = at_rate(replica, traffic, case.load / replicas, cal)
    if not point.is_stable:
        point = saturated(replica, traffic, case.load / replicas, cal,
                          int(case.n_requests / replicas))
    out["ttft_ms"], out["tpot_ms"] = _latency(point, case.latency_stat)
    if not limits.is_bounded:
        capacity = offline_tokens_per_s(replica, traffic, cal)
        out["throughput_tokens_per_s"] = min(point.output_tokens_per_s, capacity) * replicas
    return out


def predict_case(case: ServingCase, gpus: dict[str, GpuSpec],
                 cal: ServingCalibration) -> dict[str, float]:
    """metric -> predicted value for the metrics the case's load defines (NaN if it cannot
    run, e.g. the weights do not fit)."""
    replica = replica_of(case, gpus)
    if case.is_batch_tuned:
        cal = replace(cal, batch_cap=math.inf)
    has_output = not math.isnan(case.output_tokens)
    traffic = Traffic(case.prompt_tokens, case.output_tokens if has_output else 1.0, case.beams)
    replicas = case.replicas
    scale = 1.0 / case.n_gpus if case.is_per_gpu else 1.0
    out: dict[str, float] = {}
    if not replica.fits():
        return {"throughput_tokens_per_s": math.nan}
    kind = case.load_kind
    if kind == "offline":
        out["throughput_tokens_per_s"] = offline_tokens_per_s(replica, traffic, cal) * replicas
    elif kind == "static":
        point = static_batch(replica, traffic, case.load, cal)
        out["ttft_ms"] = point.ttft_mean_s * MS
        if has_output:
            out["throughput_tokens_per_s"] = point.output_tokens_per_s * replicas
    elif kind == "concurrency":
        point = at_concurrency(replica, traffic, case.load / replicas, cal)
        out["ttft_ms"], out["tpot_ms"] = _latency(point, case.latency_stat)
        out["throughput_tokens_per_s"] = point.output_tokens_per_s * replicas
    elif kind == "burst":
        point = burst(replica, traffic, int(case.load / replicas), cal)
        out["ttft_ms"], out["tpot_ms"] = _latency(point, "mean")
        out["throughput_tokens_per_s"] = point.output_tokens_per_s * replicas
    else:
        out.update(_server(case, replica, traffic, cal))
    if "throughput_tokens_per_s" in out:
        out["throughput_tokens_per_s"] *= scale
    return out
