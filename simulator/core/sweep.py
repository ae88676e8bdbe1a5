"""Vectorized sweep of one workload over a hardware catalog × node counts × layouts.

Three numpy stages, no per-configuration Python:
1. validity of every (node count, layout) pair per GPUs-per-node value (divisibility, batch);
2. memory per GPU of every valid pair (independent of the GPU model apart from capacity),
   compared against every instance type's capacity at once;
3. step time only for the configurations that fit.
Time it with `time.perf_counter()` around `sweep(...)`; `SweepResult.n_configurations` is the
number of (instance type, node count, layout) combinations examined.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
import pandas as pd

from simulator.core.arrays import ConfigArrays, hardware_columns, workload_columns
from simulator.core.calibration import Calibration, band_group
from simulator.core.domain import assess_many
from simulator.core.envelope import params_per_gpu
from simulator.core.goodput import (
    GoodputAssumptions,
    failure_goodput,
    goodput_fraction,
    whole_run_goodput,
)
from simulator.core.hardware import (
    GpuSpec,
    Hardware,
    cuda_core_rate_note,
    lookup_gpu,
    rate_precision,
)
from simulator.core.layout import (
    RECOMPUTE_MODES,
    bytes_per_value,
    searched_zero_stages,
    tp_gather_bytes,
)
from simulator.core.memory import GIB, memory_breakdown
from simulator.core.timing import step_time
from simulator.core.workloads import TrainingGoal, Workload

INSTANCE_COLUMNS = ("instance_key", "gpu", "gpus_per_node", "intra_node_gbytes_per_s",
                    "inter_node_gbits_per_s")
OUTPUT_COLUMNS = [
    "instance_key", "gpu", "nodes", "gpus", "tp", "pp", "dp", "cp", "zero_stage", "recompute",
    "micro_batch", "grad_accum", "virtual_stages", "precision", "step_seconds",
    "samples_per_second", "tokens_per_second", "time_to_train_hours", "time_to_train_p10_hours",
    "time_to_train_p90_hours", "gpu_hours", "energy_kwh", "memory_per_gpu_gib", "mfu",
    "steady_state_hours", "goodput_fraction", "failure_goodput_fraction", "calibration_status",
    "rate_note", "envelope_note", "envelope"]


@dataclass(frozen=True)
class SweepResult:
    """Feasible configurations (OUTPUT_COLUMNS) and how many combinations were examined."""

    configurations: pd.DataFrame
    n_configurations: int
    n_feasible: int


# Model chunks per pipeline stage the sweep tries (interleaved 1F1B, Megatron-LM).
SWEEP_VIRTUAL_STAGES = (1, 2, 4)


def layout_grid(workload: Workload, max_tp: int = 8, max_pp: int = 16,
                micro_batches: Sequence[int] = (1, 2, 4, 8),
                zero_stages: Sequence[int] | None = None) -> pd.DataFrame:
    """Candidate layouts without dp: columns tp, pp, cp, zero_stage, recompute, micro_batch,
    virtual_stages.

    Powers of two; TP divides the head count, PP is at most the layer count (stages may hold
    unequal layer counts: the busiest sets the pace); a pipeline may interleave v model chunks
    per stage (interleaved 1F1B, bubble (pp-1)/(v·m)) of at least one layer each.
    Non-transformers get tp = pp = 1 and no selective recomputation.
    ZeRO stages: `zero_stages`, or by default those that run as themselves at each pipeline
    degree (layout.searched_zero_stages: 0-3 without a pipeline, 0-1 with one); a caller that
    fixes stage 2 or 3 passes it and keeps its pipeline layouts.
    """
    tps = [t for t in (1, 2, 4, 8, 16) if t <= max_tp and _divides(t, workload.n_heads)]
    # Stages may hold unequal layer counts (the busiest sets the pace: stage_layer_share).
    pps = [p for p in (1, 2, 4, 8, 16, 32) if p <= min(max_pp, workload.n_layers)]
    if not workload.is_transformer:
        tps, pps = [1], [1]
    modes = [i for i, m in enumerate(RECOMPUTE_MODES)
             if workload.is_transformer or m != "selective"]
    stages = [(p, v) for p in pps for v in SWEEP_VIRTUAL_STAGES
              if v == 1 or (p > 1 and v <= workload.n_layers // p)]
    zeros = {p: tuple(zero_stages) if zero_stages is not None else searched_zero_stages(p)
             for p in pps}
    rows = [(t, p, 1, z, m, b, v) for t, (p, v), m, b in
            itertools.product(tps, stages, modes, micro_batches) for z in zeros[p]]
    return pd.DataFrame(rows, columns=["tp", "pp", "cp", "zero_stage", "recompute", "micro_batch",
                                       "virtual_stages"])


def _divides(d: int, n: int) -> bool:
    return n > 0 and n % d == 0


def _pairs(layouts: pd.DataFrame, node_counts: np.ndarray, gpus_per_node: int,
           global_batch: int) -> dict[str, np.ndarray]:
    """Valid (node count, layout) pairs for one GPUs-per-node value, with dp and grad_accum."""
    nodes = np.repeat(node_counts, len(layouts))
    cols = cast(dict[str, np.ndarray],
                {k: np.tile(layouts[k].to_numpy(dtype=float), len(node_counts)) for k in layouts})
    gpus = nodes * gpus_per_node
    model = cols["tp"] * cols["pp"] * cols["cp"]
    dp = gpus / model
    ok = (np.mod(gpus, model) == 0) & (cols["tp"] <= gpus_per_node) & (dp <= global_batch)
    ok &= (dp > 1) | (cols["zero_stage"] == 0)
    per_replica = np.ceil(global_batch / np.maximum(dp, 1.0))
    ok &= cols["micro_batch"] <= per_replica
    accum = np.ceil(per_replica / cols["micro_batch"])
    # Interleaving needs the pipeline's micro-batches in multiples of its stages.
    virtual = cols.get("virtual_stages", np.ones(len(nodes)))
    ok &= (virtual == 1) | (np.mod(accum, cols["pp"]) == 0)
    out = {k: v[ok] for k, v in cols.items()}
    out.update(nodes=nodes[ok], dp=dp[ok], grad_accum=accum[ok])
    return out


def _layout_columns(pairs: dict[str, np.ndarray], precision: str
                    ) -> dict[str, np.ndarray | float]:
    act, weight, grad, optimizer = bytes_per_value(precision)
    rowwise = np.asarray(pairs.get("fp8_rowwise", 0.0)) > 0
    return {**{k: pairs[k] for k in ("tp", "pp", "dp", "cp", "zero_stage", "recompute",
                                     "micro_batch", "grad_accum")},
            "virtual_stages": pairs.get("virtual_stages", 1.0), "is_flash_attention": 1.0,
            "tp_comm_overlap": pairs.get("tp_comm_overlap", 0.0),
            "tp_gather_value_bytes": np.where(rowwise, tp_gather_bytes(precision, True),
                                              tp_gather_bytes(precision)),
            "is_fp8_rowwise": np.where(rowwise, 1.0, 0.0) if precision == "fp8" else 0.0,
            "activation_value_bytes": act,
            "weight_bytes": weight, "grad_bytes": grad, "optimizer_bytes": optimizer}


def _hardware_table(instances: pd.DataFrame, gpus: Mapping[str, GpuSpec],
                    precision: str | None) -> pd.DataFrame:
    """One row per instance with ConfigArrays hardware columns; unusable rows dropped."""
    rows: list[dict[str, Any]] = []
    for record in cast(list[dict[str, Any]], instances.to_dict("records")):
        try:
            gpu = lookup_gpu(dict(gpus), str(record["gpu"]))
        except ValueError:
            continue
        chosen = precision or next((p for p in ("bf16", "fp16", "fp32") if gpu.supports(p)), "")
        if not chosen or not gpu.supports(chosen):
            continue
        hardware = Hardware(gpu, int(record["gpus_per_node"]), 1, "unknown",
                            float(record["intra_node_gbytes_per_s"]),
                            float(record["inter_node_gbits_per_s"]))
        rows.append({**record, **hardware_columns(hardware, chosen), "precision": chosen,
                     "architecture": gpu.architecture, "gpu_name": gpu.name,
                     "assessed_precision": rate_precision(gpu, chosen),
                     "rate_note": cuda_core_rate_note(gpu, chosen)})
    return pd.DataFrame(rows)


HARDWARE_FIELDS = (
    "peak_tflops", "gemm_peak_tflops", "peak_16bit_tflops", "is_simt", "efficiency_class",
    "is_pcie_card",
    "memory_bandwidth_gbytes_per_s", "memory_gib", "intra_gbytes_per_s", "inter_gbytes_per_s",
    "gpus_per_node", "tdp_watts")


def _fitting_pairs(workload: Workload, group: pd.DataFrame, pairs: dict[str, np.ndarray],
                   precision: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(instance index, pair index, memory bytes) of every configuration that fits."""
    first = {k: group[k].iloc[0] for k in HARDWARE_FIELDS}
    layout = _layout_columns(pairs, precision)
    total = memory_breakdown(ConfigArrays.from_columns(
        {**workload_columns(workload), **first, **layout})).total
    capacity = group["memory_gib"].to_numpy(dtype=float) * GIB
    hw_index, pair_index = np.nonzero(total[None, :] <= capacity[:, None])
    return hw_index, pair_index, total[pair_index]


def _best_per_instance_and_nodes(hw_index: np.ndarray, nodes: np.ndarray,
                                 step_seconds: np.ndarray) -> np.ndarray:
    """Indices of the fastest configuration for each (instance, node count)."""
    key = hw_index * (nodes.max() + 1.0) + nodes
    best = pd.Series(step_seconds).groupby(key, sort=False).idxmin()
    return best.to_numpy(dtype=np.intp)


def _sweep_group(workload: Workload, goal: TrainingGoal, group: pd.DataFrame,
                 node_counts: np.ndarray, layouts: pd.DataFrame, calibration: Calibration,
                 keep: str, goodput: GoodputAssumptions,
                 band_goodput: GoodputAssumptions | None = None) -> dict[str, Any] | None:
    """OUTPUT_COLUMNS of the group's fitting configurations; None when nothing fits."""
    gpus_per_node, precision = int(group["gpus_per_node"].iloc[0]), str(group["precision"].iloc[0])
    pairs = _pairs(layouts, node_counts, gpus_per_node, goal.global_batch(workload))
    hw_index, pair_index, memory = _fitting_pairs(workload, group, pairs, precision)
    if len(hw_index) == 0:
        return None
    columns = {**workload_columns(workload),
               **{k: group[k].to_numpy(dtype=float)[hw_index] for k in HARDWARE_FIELDS},
               **{k: np.asarray(v)[pair_index] if np.ndim(v) else v
                  for k, v in _layout_columns(pairs, precision).items()}}
    c = ConfigArrays.from_columns(columns)
    times = step_time(c, calibration)
    rows = np.arange(len(hw_index))
    if keep == "best":
        rows = _best_per_instance_and_nodes(hw_index, pairs["nodes"][pair_index], times.step)
    # A fixed knob is one grid column (simulator.services.constrained_grid): all rows alike.
    rowwise = bool(np.any(c.is_fp8_rowwise))
    instances = {k: group[k].to_numpy()[hw_index[rows]] for k in INSTANCE_FIELDS}
    return _output_columns(workload, goal, calibration, instances, c.take(rows),
                           times.step[rows], memory[rows], precision, goodput, rowwise,
                           band_goodput)


# The instance columns the output reads (one array each, not a frame per group).
INSTANCE_FIELDS = ("instance_key", "gpu", "gpu_name", "architecture", "assessed_precision",
                   "rate_note")


def _assessments(cal: Calibration, instances: Mapping[str, np.ndarray], c: ConfigArrays,
                 seq_len: float, group: str, is_batch_default: bool, is_fp8_rowwise: bool
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(calibration status, band scale, envelope note, envelope axes) per output row,
    vectorized per GPU model, judged at the precision each GPU runs at (a CUDA-core fallback
    is judged as fp32), as whole runs (what the sweep's times are)."""
    names = instances["gpu_name"]
    archs = instances["architecture"]
    assessed = instances["assessed_precision"]
    per_gpu = params_per_gpu(c.params, c.tp, c.pp) * np.ones(len(names))
    pp = c.pp * np.ones(len(names))
    status = np.empty(len(names), dtype=object)
    scale = np.empty(len(names), dtype=float)
    notes = np.empty(len(names), dtype=object)
    axes = np.empty(len(names), dtype=object)
    for name in pd.unique(names):
        rows = names == name
        first = np.argmax(rows)
        many = assess_many(cal.domain, str(name), str(archs[first]), str(assessed[first]),
                           c.n_gpus[rows], seq_len, group, is_batch_default, is_fp8_rowwise,
                           pp=pp[rows], params_per_gpu=per_gpu[rows], metric_kind="whole_run")
        status[rows], scale[rows], notes[rows], axes[rows] = (many.status, many.band_scale,
                                                              many.notes, many.envelope)
    return status, scale, notes, axes


def _output_columns(workload: Workload, goal: TrainingGoal, cal: Calibration,
                    instances: Mapping[str, np.ndarray], c: ConfigArrays, step: np.ndarray,
                    memory: np.ndarray, precision: str, goodput: GoodputAssumptions,
                    is_fp8_rowwise: bool, band_goodput: GoodputAssumptions | None = None
                    ) -> dict[str, Any]:
    samples = c.global_batch / step
    gpus = c.n_gpus
    steady = goal.total_samples(workload) / samples
    fraction = goodput_fraction(gpus, steady, goodput)
    hours = (steady / fraction + cal.run_overhead_seconds) / 3600.0
    group = band_group(workload.kind)
    status, scale, notes, axes = _assessments(cal, instances, c, workload.tokens_per_sample,
                                              group, goal.global_batch_samples is None,
                                              is_fp8_rowwise)
    # Every swept time is a whole run: banded by the whole-run class's out-of-family errors.
    low, high = cal.band_quantiles("whole_run")
    slow, fast = np.exp(low * scale), np.exp(high * scale)
    p10, p90 = hours / fast, hours / slow
    if band_goodput is not None:  # the band covers the other goodput profile's time too
        other = (steady / goodput_fraction(gpus, steady, band_goodput)
                 + cal.run_overhead_seconds) / 3600.0
        p10, p90 = np.minimum(p10, other), np.maximum(p90, other)
    return {
        "instance_key": instances["instance_key"], "gpu": instances["gpu"],
        "nodes": gpus / c.gpus_per_node, "gpus": gpus, "tp": c.tp, "pp": c.pp, "dp": c.dp,
        "cp": c.cp, "zero_stage": c.zero_stage,
        "recompute": np.asarray(RECOMPUTE_MODES)[c.recompute.astype(np.intp)],
        "micro_batch": c.micro_batch, "grad_accum": c.grad_accum,
        "virtual_stages": c.virtual_stages * np.ones(len(gpus)), "precision": precision,
        "step_seconds": step, "samples_per_second": samples,
        "tokens_per_second": samples * workload.tokens_per_sample,
        "time_to_train_hours": hours,
        "time_to_train_p10_hours": p10, "time_to_train_p90_hours": p90,
        "gpu_hours": hours * gpus, "energy_kwh": hours * gpus * c.tdp_watts / 1000.0,
        "memory_per_gpu_gib": memory / GIB,
        "mfu": c.model_flops * samples / (gpus * c.peak_tflops * 1e12),
        "steady_state_hours": steady / 3600.0, "goodput_fraction": fraction,
        "failure_goodput_fraction": failure_goodput(gpus, steady, goodput),
        "calibration_status": status, "rate_note": instances["rate_note"],
        "envelope_note": notes, "envelope": axes}


def sweep(workload: Workload, goal: TrainingGoal, instances_df: pd.DataFrame,
          node_counts: Sequence[int], calibration: Calibration,
          gpus: Mapping[str, GpuSpec], *, precision: str | None = None,
          layouts: pd.DataFrame | None = None, keep: str = "best",
          goodput: GoodputAssumptions | None = None,
          band_goodput: GoodputAssumptions | None = None) -> SweepResult:
    """Evaluate `workload` on every instance type × node count × layout, vectorized.

    instances_df columns: instance_key, gpu ("<model> <variant>" key of `gpus`),
    gpus_per_node, intra_node_gbytes_per_s (per GPU per direction, GB/s),
    inter_node_gbits_per_s (per node, Gbit/s). `layouts` defaults to layout_grid(workload).
    keep="best" returns the fastest fitting layout per (instance, nodes); "all" every fitting
    configuration. Precision defaults to bf16, else fp16, else fp32 per GPU. Times are
    whole-run (goodput, default goodput.whole_run_goodput with the calibration's production
    overhead); every row has its calibration_status. With `band_goodput` (another goodput
    profile) each P10-P90 band also covers that profile's time.
    """
    missing = [k for k in INSTANCE_COLUMNS if k not in instances_df]
    if missing or keep not in ("best", "all") or not len(node_counts) or min(node_counts) < 1:
        raise ValueError(f"bad sweep input (missing columns {missing}, keep={keep!r})")
    grid = layouts if layouts is not None else layout_grid(workload)
    nodes = np.unique(np.asarray(node_counts, dtype=float))
    table = _hardware_table(instances_df, gpus, precision)
    assumptions = goodput or whole_run_goodput(calibration.production_overhead_fraction)
    parts = [_sweep_group(workload, goal, group, nodes, grid, calibration, keep, assumptions,
                          band_goodput)
             for _, group in table.groupby(["gpus_per_node", "precision"])] if len(table) else []
    found = [p for p in parts if p is not None]
    # One frame from the groups' columns joined end to end (a frame per group costs more).
    result = pd.DataFrame({
        name: np.concatenate([np.broadcast_to(p[name], len(p["step_seconds"])) for p in found])
        for name in OUTPUT_COLUMNS}) if found else pd.DataFrame(columns=OUTPUT_COLUMNS)
    return SweepResult(result, len(instances_df) * len(nodes) * len(grid), len(result))
