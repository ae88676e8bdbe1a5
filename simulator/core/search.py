"""Layout search: enumerate practitioner-style layouts, keep those that fit, take the fastest.

Rules: tensor parallelism stays inside a node and divides the head count, pipeline stages
number at most the layers and may hold unequal layer counts (the busiest stage sets the pace:
arrays.stage_layer_share), context parallelism only for sequences of 16k tokens or more.
Pipelines may interleave 1-4 model chunks of at least one layer per stage (Megatron-LM).
Rows that ask for ZeRO without a PP degree keep pp=1 when it fits. Among layouts within 0.5%
of the best throughput the simplest wins (no PP, then small TP, low ZeRO stage, least
recomputation).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from simulator.core.arrays import ConfigArrays, hardware_columns, layout_columns, workload_columns
from simulator.core.calibration import Calibration
from simulator.core.hardware import Hardware
from simulator.core.layout import (
    RECOMPUTE_MODES,
    Layout,
    LayoutConstraints,
    searched_zero_stages,
)
from simulator.core.memory import memory_breakdown
from simulator.core.simulate import SimulationResult, result_from_arrays
from simulator.core.timing import step_time
from simulator.core.workloads import TrainingGoal, Workload

LONG_SEQUENCE_TOKENS = 16384
TIE_TOLERANCE = 0.005
INTERLEAVE_OPTIONS = (1, 2, 3, 4)


@dataclass(frozen=True)
class LayoutChoice:
    """The chosen layout's simulation; `is_fit` False means nothing fits (least overflow)."""

    result: SimulationResult
    is_fit: bool
    n_candidates: int


def default_precision(hardware: Hardware) -> str:
    """bf16 where supported, else fp16, else fp32."""
    for precision in ("bf16", "fp16", "fp32"):
        if hardware.gpu.supports(precision):
            return precision
    raise ValueError(f"{hardware.gpu.name} has no usable training precision")


def _powers_of_two(limit: int) -> list[int]:
    return [2**k for k in range(int(math.log2(max(limit, 1))) + 1)]


def _tp_options(workload: Workload, hardware: Hardware, fixed: int | None) -> list[int]:
    if fixed is not None:
        return [fixed]
    if not workload.is_transformer:
        return [1]
    return [t for t in _powers_of_two(hardware.gpus_per_node) if workload.n_heads % t == 0]


def _cp_options(workload: Workload, fixed: int | None) -> list[int]:
    if fixed is not None:
        return [fixed]
    is_long = workload.is_transformer and workload.seq_len >= LONG_SEQUENCE_TOKENS
    return [1, 2, 4, 8] if is_long else [1]


def _pp_options(workload: Workload, model_gpus: int, fixed: int | None) -> list[int]:
    if fixed is not None:
        return [fixed]
    if not workload.is_transformer:
        return [1]
    # Stages may hold unequal layer counts (the busiest sets the pace: stage_layer_share).
    return [p for p in range(1, min(model_gpus, workload.n_layers) + 1) if model_gpus % p == 0]


def _micro_batches(per_replica: int, fixed: int | None) -> list[int]:
    if fixed is not None:
        return [fixed]
    return sorted({*_powers_of_two(per_replica), per_replica})


def candidate_layouts(workload: Workload, hardware: Hardware, global_batch: int,
                      constraints: LayoutConstraints) -> list[Layout]:
    """Every layout on hardware.n_gpus GPUs consistent with `constraints`."""
    k = constraints
    precision = k.precision or default_precision(hardware)
    modes = [k.recompute] if k.recompute else [m for m in RECOMPUTE_MODES
                                               if workload.is_transformer or m != "selective"]
    layouts: list[Layout] = []
    tps, cps = _tp_options(workload, hardware, k.tp), _cp_options(workload, k.cp)
    for tp, cp in itertools.product(tps, cps):
        if hardware.n_gpus % (tp * cp):
            continue
        for pp in _pp_options(workload, hardware.n_gpus // (tp * cp), k.pp):
            virtuals = _virtual_options(workload, pp)
            if k.virtual_stages is not None:
                virtuals = [v for v in virtuals if v == k.virtual_stages]
            layouts += _layouts_for(hardware.n_gpus, tp, pp, cp, global_batch, precision,
                                    list(searched_zero_stages(pp, k.zero_stage)), modes, k,
                                    virtuals)
    return layouts


def _virtual_options(workload: Workload, pp: int) -> list[int]:
    """Interleaved 1F1B (Megatron-LM): 1 to 4 model chunks per pipeline stage."""
    if pp == 1:
        return [1]
    per_stage = workload.n_layers // pp
    return [v for v in INTERLEAVE_OPTIONS if v <= per_stage]


def _layouts_for(n_gpus: int, tp: int, pp: int, cp: int, global_batch: int, precision: str,
                 zeros: list[int], modes: list[str], k: LayoutConstraints,
                 virtuals: list[int]) -> list[Layout]:
    dp, rest = divmod(n_gpus, tp * pp * cp)
    if rest or dp < 1 or (k.dp is not None and k.dp != dp) or global_batch < dp:
        return []
    per_replica = math.ceil(global_batch / dp)
    out = []
    micros = _micro_batches(per_replica, k.micro_batch)
    for zero, mode, micro, v in itertools.product(zeros, modes, micros, virtuals):
        accum = max(1, math.ceil(per_replica / micro))
        if (dp == 1 and zero > 0 and k.zero_stage is None) or (v > 1 and accum % pp):
            continue
        out.append(Layout(tp, pp, dp, cp, zero, mode, precision, micro, accum, v,
                          tp_comm_overlap=bool(k.tp_comm_overlap),
                          fp8_rowwise=bool(k.fp8_rowwise),
                          is_flash_attention=k.flash_attention is not False))
    return out


def _arrays_for(workload: Workload, hardware: Hardware, layouts: list[Layout]) -> ConfigArrays:
    frame = pd.DataFrame([layout_columns(layout) for layout in layouts])
    precision = layouts[0].precision
    fixed = {**workload_columns(workload), **hardware_columns(hardware, precision)}
    for key, value in fixed.items():
        frame[key] = value
    return ConfigArrays.from_columns(frame)


def pick_index(samples_per_second: np.ndarray, fits: np.ndarray, layouts: list[Layout]) -> int:
    """Fastest fitting entry; near-ties go to the simplest layout."""
    speed = np.where(fits, samples_per_second, -np.inf)
    near_best = speed >= speed.max() * (1.0 - TIE_TOLERANCE)
    simplicity = [(lo.pp, lo.tp, lo.cp, lo.zero_stage, RECOMPUTE_MODES.index(lo.recompute),
                   lo.virtual_stages, -lo.micro_batch) for lo in layouts]
    order = sorted(np.flatnonzero(near_best), key=lambda i: simplicity[i])
    return int(order[0])


def _prefer_no_pipeline(fits: np.ndarray, layouts: list[Layout],
                       constraints: LayoutConstraints) -> np.ndarray:
    """With ZeRO asked for and PP left open, keep only pp=1 layouts when one fits: ZeRO runs
    shard state across data parallelism instead of pipelining (practice up to ~2021)."""
    if constraints.pp is not None or not constraints.zero_stage:
        return fits
    no_pp = fits & np.array([lo.pp == 1 for lo in layouts])
    return no_pp if no_pp.any() else fits


def best_layout(workload: Workload, hardware: Hardware, goal: TrainingGoal,
                calibration: Calibration,
                constraints: LayoutConstraints | None = None) -> LayoutChoice:
    """Search layouts on all of hardware's GPUs and return the fastest that fits memory.

    When none fits, returns the layout with the least memory overflow and is_fit=False.
    Raises ValueError when no layout is consistent with the constraints.
    """
    layouts = candidate_layouts(workload, hardware, goal.global_batch(workload),
                                constraints or LayoutConstraints())
    if not layouts:
        raise ValueError("no layout is consistent with the GPU count, batch and constraints")
    c = _arrays_for(workload, hardware, layouts)
    memory = memory_breakdown(c)
    fits = _prefer_no_pipeline(memory.total <= memory.capacity, layouts,
                               constraints or LayoutConstraints())
    if fits.any():
        speed = step_time(c, calibration).samples_per_second
        if not np.isfinite(speed[fits]).any():
            raise ValueError(f"{hardware.gpu.name} has no published {layouts[0].precision} "
                             "rate to predict a speed from")
        i = pick_index(speed, fits & np.isfinite(speed), layouts)
    else:
        i = int(np.argmin(memory.total - memory.capacity))
    result = result_from_arrays(c, i, workload, hardware, layouts[i], goal, calibration)
    return LayoutChoice(result, bool(fits.any()), len(layouts))
