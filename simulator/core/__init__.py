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
    simulate(workload, hardware, layout, goal, calibration, goodput=None) -> SimulationResult
        (whole-run times over goodput; calibration_status and P10-P90 bands)
    best_layout(workload, hardware, goal, calibration, constraints=None) -> LayoutChoice
Catalog sweep (vectorized)
    sweep(workload, goal, instances_df, node_counts, calibration, gpus, *, precision=None,
          layouts=None, keep="best", goodput=None) -> SweepResult;  layout_grid(workload)
Calibration and validation against reference_runs.csv
    load_reference_runs(*paths), fit_calibration(runs_df, gpus, initial=None) -> Calibration
    validate(runs_df, gpus, calibration) -> DataFrame (run_id, metric, reported, predicted,
        predicted_p10, predicted_p90, abs_pct_error, note, + grouping/baseline/layout columns)
    summarize_errors(predictions) -> DataFrame (simulator vs 40%-of-peak rule of thumb)
Cross-validation (simulator.core.crossval, imports scikit-learn, so not re-exported here)
    cross_validate(runs_df, gpus, group_by="family"|"source") -> DataFrame (out-of-group)
    leave_one_source_out(runs_df, gpus) -> DataFrame;  calibrate(runs_df, gpus) -> Calibration
Uncertainty and goodput
    CalibrationDomain, STATUSES (calibrated / extrapolated / uncalibrated), GoodputAssumptions,
    goodput_fraction(n_gpus, steady_seconds, assumptions)

The shipped calibration is simulator/data/calibration.json, produced by `validate_simulator
simulator/data/reference_runs.csv simulator/data/reference_runs_additions.csv
--write-calibration simulator/data/calibration.json` (crossval.calibrate on both files).
"""

from simulator.core.calibration import Calibration, load_calibration, save_calibration
from simulator.core.domain import STATUSES, CalibrationDomain
from simulator.core.fitting import fit_calibration
from simulator.core.goodput import GoodputAssumptions, goodput_fraction
from simulator.core.hardware import (
    GpuSpec,
    Hardware,
    gpu_specs_from_frame,
    load_gpu_specs,
    lookup_gpu,
    make_hardware,
)
from simulator.core.layout import Layout, LayoutConstraints
from simulator.core.reference_runs import load_reference_runs
from simulator.core.search import LayoutChoice, best_layout
from simulator.core.simulate import MemoryReport, SimulationResult, TimeReport, simulate
from simulator.core.sweep import SweepResult, layout_grid, sweep
from simulator.core.validation import summarize_errors, validate
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
    "PRESETS", "STATUSES", "Calibration", "CalibrationDomain", "GoodputAssumptions", "GpuSpec",
    "Hardware", "Layout", "LayoutChoice", "LayoutConstraints", "MemoryReport", "SimulationResult",
    "SweepResult", "TimeReport",
    "TrainingGoal", "Workload", "bert", "best_layout", "dense_llm", "fit_calibration", "generic",
    "goodput_fraction", "gpu_specs_from_frame", "layout_grid", "llm_from_params",
    "load_calibration", "load_gpu_specs", "load_reference_runs", "lookup_gpu", "lora",
    "make_hardware", "moe_llm", "resnet50", "save_calibration", "simulate",
    "summarize_errors", "sweep", "validate",
]
