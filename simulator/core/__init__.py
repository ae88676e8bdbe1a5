"""GPU training simulator core: Django-free, numpy/pandas only.

Public API (frozen dataclasses and DataFrames in and out; bad input raises ValueError):

Inputs
    Workload, TrainingGoal, PRESETS, dense_llm, llm_from_params, moe_llm, lora, bert,
    resnet50, generic                        -- what to train and how much
    GpuSpec, Hardware, make_hardware, load_gpu_specs, gpu_specs_from_frame, lookup_gpu
                                             -- GPUs (from gpus.csv) and clusters
    Layout, LayoutConstraints                -- TP/PP/DP/CP, ZeRO, recompute, precision, batch
    Calibration, load_calibration, save_calibration
                                             -- fitted efficiency parameters (JSON round-trip)
Single configuration
    simulate(workload, hardware, layout, goal, calibration) -> SimulationResult
    best_layout(workload, hardware, goal, calibration, constraints=None) -> LayoutChoice
Catalog sweep (vectorized)
    sweep(workload, goal, instances_df, node_counts, calibration, gpus, *, precision=None,
          layouts=None, keep="best") -> SweepResult;  layout_grid(workload)
Calibration and validation against reference_runs.csv
    load_reference_runs(path), fit_calibration(runs_df, gpus, initial=None) -> Calibration
    validate(runs_df, gpus, calibration) -> DataFrame (run_id, metric, reported, predicted,
        predicted_p10, predicted_p90, abs_pct_error, note, + grouping/baseline/layout columns)
    summarize_errors(predictions) -> DataFrame (simulator vs 40%-of-peak rule of thumb)
    leave_one_source_out(runs_df, gpus, initial=None) -> DataFrame

The shipped calibration is simulator/data/calibration.json, produced by
`save_calibration(fit_calibration(load_reference_runs(runs_csv), load_gpu_specs(gpus_csv)), path)`.
"""

from simulator.core.calibration import Calibration, load_calibration, save_calibration
from simulator.core.fitting import fit_calibration
from simulator.core.hardware import (
    GpuSpec,
    Hardware,
    gpu_specs_from_frame,
    load_gpu_specs,
    lookup_gpu,
    make_hardware,
)
from simulator.core.layout import Layout, LayoutConstraints
from simulator.core.runs import load_reference_runs
from simulator.core.search import LayoutChoice, best_layout
from simulator.core.simulate import MemoryReport, SimulationResult, TimeReport, simulate
from simulator.core.sweep import SweepResult, layout_grid, sweep
from simulator.core.validation import leave_one_source_out, summarize_errors, validate
from simulator.core.workloads import (
    PRESETS,
    TrainingGoal,
    Workload,
    bert,
    dense_llm,
    generic,
    llm_from_params,
    lora,
    moe_llm,
    resnet50,
)

__all__ = [
    "PRESETS", "Calibration", "GpuSpec", "Hardware", "Layout", "LayoutChoice",
    "LayoutConstraints", "MemoryReport", "SimulationResult", "SweepResult", "TimeReport",
    "TrainingGoal", "Workload", "bert", "best_layout", "dense_llm", "fit_calibration", "generic",
    "gpu_specs_from_frame", "layout_grid", "leave_one_source_out", "llm_from_params",
    "load_calibration", "load_gpu_specs", "load_reference_runs", "lookup_gpu", "lora",
    "make_hardware", "moe_llm", "resnet50", "save_calibration", "simulate",
    "summarize_errors", "sweep", "validate",
]
