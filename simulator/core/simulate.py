"""Simulate one configuration: memory verdict, step time, throughput, time and energy."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

from simulator.core.arrays import ConfigArrays, config_arrays
from simulator.core.calibration import Calibration, band_class, band_group
from simulator.core.domain import DomainPoint, assess
from simulator.core.envelope import params_per_gpu
from simulator.core.goodput import GoodputAssumptions, goodput_fraction, whole_run_goodput
from simulator.core.hardware import Hardware, cuda_core_rate_note, rate_precision
from simulator.core.layout import Layout
from simulator.core.memory import GIB, MemoryArrays, memory_breakdown
from simulator.core.timing import TimeArrays, step_time
from simulator.core.workloads import TrainingGoal, Workload

SECONDS_PER_HOUR = 3600.0


@dataclass(frozen=True)
class MemoryReport:
    """GiB per GPU by component; `is_fit` when total <= capacity."""

    weights_gib: float
    gradients_gib: float
    optimizer_gib: float
    activations_gib: float
    overhead_gib: float
    total_gib: float
    capacity_gib: float
    is_fit: bool
    overflow_message: str


@dataclass(frozen=True)
class TimeReport:
    """Seconds per optimizer step; comm and bubble parts are the exposed (non-overlapped) time,
    overhead the fixed per-step time and any input-pipeline wait; the parts add up to the step."""

    compute_seconds: float
    tp_comm_seconds: float
    pp_comm_seconds: float
    dp_comm_seconds: float
    dp_comm_total_seconds: float
    bubble_seconds: float
    optimizer_seconds: float
    step_seconds: float
    overhead_seconds: float = 0.0


@dataclass(frozen=True)
class SimulationResult:
    """Everything predicted for one configuration. MFU/HFU are fractions of dense peak.

    time_to_train_* are whole-run: steady_state_hours / goodput_fraction plus the run overhead.
    calibration_status is "calibrated", "extrapolated" or "uncalibrated" (see domain), with
    calibration_note saying why; *_p10/*_p90 are the band around the point prediction.
    rate_note says when the speed rests on the FP32 CUDA-core rate of a GPU whose tensor-core
    rates are unpublished (hardware.cuda_core_rate_note), else "". envelope_note says when the
    configuration is outside the calibration envelope and why (domain.assess), else "";
    envelope lists the envelope.AXES it is outside (empty inside) and envelope_group the
    ENVELOPE_GROUPS entry whose out-of-family width its band has.
    """

    workload_name: str
    gpu_name: str
    n_gpus: int
    layout: Layout
    memory: MemoryReport
    time: TimeReport
    samples_per_second: float
    tokens_per_second: float
    tokens_per_second_per_gpu: float
    mfu: float
    hfu: float
    time_to_train_seconds: float
    time_to_train_hours: float
    time_to_train_days: float
    time_to_train_p10_hours: float
    time_to_train_p90_hours: float
    gpu_hours: float
    energy_kwh: float
    tokens_per_second_p10: float
    tokens_per_second_p90: float
    steady_state_hours: float
    goodput_fraction: float
    goodput_assumptions: GoodputAssumptions
    calibration_status: str
    calibration_note: str
    rate_note: str = ""
    envelope_note: str = ""
    envelope: tuple[str, ...] = ()
    envelope_group: str = "inside"

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe nested dict (floats, ints, bools, strings)."""
        return asdict(self)


def memory_report(mem: MemoryArrays, i: int = 0) -> MemoryReport:
    """MemoryReport of entry `i`, naming the largest components when it overflows."""
    parts = {"weights": mem.weights[i], "gradients": mem.gradients[i],
             "optimizer states": mem.optimizer[i], "activations": mem.activations[i],
             "overhead": mem.overhead[i]}
    total, capacity = float(mem.total[i]), float(mem.capacity[i])
    is_fit = total <= capacity
    message = ""
    if not is_fit:
        biggest = sorted(parts.items(), key=lambda kv: -kv[1])[:3]
        listed = ", ".join(f"{name} {value / GIB:.1f} GiB" for name, value in biggest)
        message = (f"does not fit: needs {total / GIB:.1f} GiB per GPU, capacity "
                   f"{capacity / GIB:.1f} GiB (over by {(total - capacity) / GIB:.1f} GiB; "
                   f"largest: {listed})")
    gib = {k: float(v) / GIB for k, v in parts.items()}
    return MemoryReport(gib["weights"], gib["gradients"], gib["optimizer states"],
                        gib["activations"], gib["overhead"], total / GIB, capacity / GIB,
                        is_fit, message)


def time_report(t: TimeArrays, i: int = 0) -> TimeReport:
    """TimeReport of entry `i`."""
    return TimeReport(float(t.compute[i]), float(t.tp_comm[i]), float(t.pp_comm[i]),
                      float(t.dp_comm[i]), float(t.dp_comm_total[i]), float(t.bubble[i]),
                      float(t.optimizer[i]), float(t.step[i]), float(t.overhead[i]))


def simulate(workload: Workload, hardware: Hardware, layout: Layout, goal: TrainingGoal,
             calibration: Calibration,
             goodput: GoodputAssumptions | None = None) -> SimulationResult:
    """Predict memory, step time, throughput and time/GPU-hours/energy to reach `goal`.

    The layout must use exactly hardware.n_gpus GPUs and a precision the GPU supports.
    `goodput` defaults to a whole production run's (goodput.whole_run_goodput with the
    calibration's production overhead). Raises ValueError otherwise.
    """
    _check_inputs(workload, hardware, layout)
    c = config_arrays(workload, hardware, layout)
    return result_from_arrays(c, 0, workload, hardware, layout, goal, calibration, goodput)


def _check_inputs(workload: Workload, hardware: Hardware, layout: Layout) -> None:
    if layout.n_gpus != hardware.n_gpus:
        raise ValueError(f"layout uses {layout.n_gpus} GPUs, hardware has {hardware.n_gpus}")
    if not hardware.gpu.supports(layout.precision):
        raise ValueError(f"{hardware.gpu.name} does not support {layout.precision}")
    if not workload.is_transformer and (layout.tp > 1 or layout.pp > 1 or layout.cp > 1):
        raise ValueError("tensor/pipeline/context parallelism needs a transformer workload")


def speed_band(calibration: Calibration, workload_kind: str,
               band_scale: float, precision: str = "") -> tuple[float, float]:
    """(low, high) multipliers of predicted speed for its P10-P90 band (low <= 1 <= high):
    the throughput band class of the workload at that precision (band_class)."""
    low, high = calibration.band_quantiles(band_class(workload_kind, "", precision))
    return math.exp(low * band_scale), math.exp(high * band_scale)


def result_from_arrays(c: ConfigArrays, i: int, workload: Workload, hardware: Hardware,
                       layout: Layout, goal: TrainingGoal, calibration: Calibration,
                       goodput: GoodputAssumptions | None = None) -> SimulationResult:
    """Assemble the SimulationResult of entry `i` of evaluated ConfigArrays."""
    assumptions = goodput or whole_run_goodput(calibration.production_overhead_fraction)
    times = step_time(c, calibration)
    samples_s = float(times.samples_per_second[i])
    tokens_s = samples_s * workload.tokens_per_sample
    n_gpus = layout.n_gpus
    peak = hardware.gpu.peak_tflops(layout.precision) * 1e12 * n_gpus
    steady = goal.total_samples(workload) / samples_s
    fraction = float(goodput_fraction(n_gpus, steady, assumptions))
    seconds = steady / fraction + calibration.run_overhead_seconds
    hours = seconds / SECONDS_PER_HOUR
    verdict = assess(calibration.domain, DomainPoint(
        hardware.gpu.name, hardware.gpu.architecture,
        rate_precision(hardware.gpu, layout.precision), n_gpus,
        workload.tokens_per_sample, band_group(workload.kind),
        goal.global_batch_samples is None, layout.is_fp8_rowwise, float(layout.pp),
        float(params_per_gpu(workload.params, layout.tp, layout.pp)), metric_kind="whole_run"))
    slow, fast = speed_band(calibration, workload.kind, verdict.band_scale, layout.precision)
    run_low, run_high = calibration.band_quantiles("whole_run")
    # A whole run's time band is the whole-run class's (its out-of-family errors are wider).
    run_slow, run_fast = (math.exp(run_low * verdict.band_scale),
                          math.exp(run_high * verdict.band_scale))
    return SimulationResult(
        workload.name, hardware.gpu.name, n_gpus, layout, memory_report(memory_breakdown(c), i),
        time_report(times, i), samples_s, tokens_s, tokens_s / n_gpus,
        float(c.model_flops[i]) * samples_s / peak,
        float(times.hardware_flops_per_sample[i]) * samples_s / peak,
        seconds, hours, hours / 24.0, hours / run_fast, hours / run_slow,
        hours * n_gpus, hours * n_gpus * hardware.gpu.tdp_watts / 1000.0,
        tokens_s * slow, tokens_s * fast, steady / SECONDS_PER_HOUR, fraction, assumptions,
        verdict.status, verdict.reason, cuda_core_rate_note(hardware.gpu, layout.precision),
        verdict.envelope_note, verdict.envelope, verdict.envelope_group,
    )
