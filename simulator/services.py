"""Simulation services: validate and store requests, run them, calibrations, validation files."""

import copy
import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from django.db import transaction

from planner.core.layout_knobs import LAYOUT_KNOBS
from planner.core.providers import MAX_CLUSTER_NODES
from planner.fair_shares import creation_check
from planner.runs import Attempt, run_enqueue, run_execute, run_progress
from pricing.catalog_cache import catalog_cached, catalog_memo
from pricing.catalog_sources import GPUS_CSV
from pricing.models import Accelerator, InstanceType
from simulator.accuracy import ACCURACY_FILE, write_accuracy
from simulator.core import (
    Calibration,
    best_layout,
    gpu_specs_from_frame,
    layout_grid,
    load_calibration,
    load_reference_runs,
    save_calibration,
    summarize_errors,
    sweep,
    validate,
)
from simulator.core.crossval import calibrate_and_validate, cross_validate
from simulator.core.hardware import GpuSpec
from simulator.core.layout import RECOMPUTE_MODES, LayoutConstraints
from simulator.core.search import candidate_layouts
from simulator.hardware_adapter import gpu_spec, hardware, is_simulatable
from simulator.models import SimulationRun, UserCalibration
from simulator.requests import (
    GOODPUT_INPUTS,
    SimulationInputs,
    inputs_from_request,
    without_time,
)

DATA_DIR = Path(__file__).resolve().parent / "data"
# The runs the shipped calibration is fitted on (validate_simulator --write-calibration).
REFERENCE_RUNS_FILES = (
    DATA_DIR / "reference_runs.csv", DATA_DIR / "reference_runs_additions.csv",
    DATA_DIR / "whole_runs.csv",
)
SWEEP_NODE_COUNTS = (1, 2, 4, 8, 16, 32, 64, 128)
# The layout knobs that decide whether a layout of a GPU count and batch exists at all.
LAYOUT_SHAPE = ("tp", "pp", "dp", "cp", "micro_batch", "virtual_stages")


@cache
def shipped_calibration() -> Calibration:
    return load_calibration(str(DATA_DIR / "calibration.json"))


def catalog_gpu_specs() -> dict[str, GpuSpec]:
    """GPU specs keyed "<model> <variant>" from the catalog's Accelerator rows, simulatable
    ones only: the one source of sweeps (plans) and single simulations, so an accelerator
    edited in the admin changes both."""
    return dict(catalog_cached("catalog_gpu_specs", lambda: {
        a.name: gpu_spec(a) for a in Accelerator.objects.all() if is_simulatable(a)}))


@cache
def shipped_gpu_specs() -> dict[str, GpuSpec]:
    """GPU specs from the shipped gpus.csv (plus core extras for reference-run GPUs): what
    calibrations are fitted and validated on, independent of catalog edits."""
    return gpu_specs_from_frame(pd.read_csv(GPUS_CSV))


@dataclass(frozen=True)
class Simulator:
    """A simulation request checked once, with the calibration it runs under: what the
    simulation and plan tasks sweep and re-simulate (built by simulator_for)."""

    inputs: SimulationInputs
    calibration: Calibration
    # Which calibration, in words: results say it, since one user's own calibration and the
    # shipped one give the same inputs different numbers (calibration_used).
    calibration_used: str = ""


def simulator_for(*, request: dict[str, Any], owner_id: int | None) -> Simulator:
    """The simulator of a request (JSON, see simulator.requests) under the owner's
    calibration; ValueError names a bad field."""
    calibration, used = _calibration_and_words(owner_id)
    return Simulator(inputs_from_request(request), calibration, used)


def _calibration_and_words(owner_id: int | None) -> tuple[Calibration, str]:
    if owner_id is not None:
        own = UserCalibration.objects.filter(owner_id=owner_id, is_active=True).first()
        if own is not None:
            return Calibration.from_dict(own.params), (
                f"your own calibration, fitted {own.fitted_at:%Y-%m-%d} on {own.n_runs} runs "
                "(the published reference runs and your measured runs)")
    shipped = shipped_calibration()
    return shipped, (f"the shipped calibration, fitted on {shipped.n_rows} published "
                     "training runs")


def calibration_for(owner_id: int | None) -> Calibration:
    """The owner's own active calibration, else the shipped one."""
    return _calibration_and_words(owner_id)[0]


def calibration_used(owner_id: int | None) -> str:
    """Which calibration predictions for `owner_id` use, in words ("the shipped calibration,
    fitted on 409 published training runs" or "your own calibration, fitted ...")."""
    return _calibration_and_words(owner_id)[1]


def _checked_request(kind: str, request: dict[str, Any]) -> SimulationInputs:
    inputs = inputs_from_request(request)
    if kind == SimulationRun.Kind.SINGLE:
        instance = _instance(request)
        nodes = request.get("nodes", 1)
        if not isinstance(nodes, int) or not 1 <= nodes <= MAX_CLUSTER_NODES:
            raise ValueError(f"nodes: must be between 1 and {MAX_CLUSTER_NODES}")
        if not is_simulatable(instance.accelerator):
            raise ValueError(f"instance_type: {instance.accelerator} has no published peak")
        _check_some_layout(inputs, instance, nodes)
    return inputs


def _check_some_layout(inputs: SimulationInputs, instance: InstanceType, nodes: int) -> None:
    """ValueError naming the layout (or the nodes) when no layout of the cluster's GPUs is
    consistent with the fixed knobs and the batch: refused before it is stored, not failed."""
    cluster = hardware(instance, nodes)
    batch = inputs.goal.global_batch(inputs.workload)
    if candidate_layouts(inputs.workload, cluster, batch, inputs.constraints):
        return
    fixed = [f"{name}={getattr(inputs.constraints, name)}" for name in LAYOUT_SHAPE
             if getattr(inputs.constraints, name) is not None]
    field = "layout" if fixed else "nodes"
    raise ValueError(
        f"{field}: no layout of {cluster.n_gpus} GPUs ({nodes} x {instance.name}) is "
        f"consistent with {', '.join(fixed) or 'the model'} and a global batch of {batch:,} "
        "sequences: change the layout, the node count or the batch")


def _instance(request: dict[str, Any]) -> InstanceType:
    try:
        return InstanceType.objects.select_related("accelerator", "provider").get(
            pk=int(request.get("instance_type_id") or 0)
        )
    except (InstanceType.DoesNotExist, ValueError):
        raise ValueError("instance_type_id: no such instance type") from None


def simulation_create(*, owner_id: int, kind: str, request: dict[str, Any]) -> SimulationRun:
    """Validate, store and enqueue a simulation; ValueError names the bad field."""
    if kind not in SimulationRun.Kind.values:
        raise ValueError(f"kind: must be one of {', '.join(SimulationRun.Kind.values)}")
    _checked_request(kind, request)
    creation_check(owner_id=owner_id, kind="simulation")
    with transaction.atomic():
        run = SimulationRun.objects.create(owner_id=owner_id, kind=kind, request=request)
        run_enqueue(run)
    return run


def simulation_delete(*, owner_id: int, run_id: int) -> SimulationRun | None:
    """Delete the owner's simulation (a worker still running it stores nothing); None when it
    is not theirs."""
    run = SimulationRun.objects.filter(owner_id=owner_id, pk=run_id).first()
    if run is not None:
        run.delete()
    return run


def _progress(run_id: int, pct: float, message: str) -> None:
    run_progress(SimulationRun, run_id, pct, message)


def _single(run: SimulationRun, simulator: Simulator) -> dict[str, Any]:
    inputs, cal = simulator.inputs, simulator.calibration
    instance = _instance(run.request)
    nodes = int(run.request.get("nodes") or 1)
    choice = best_layout(
        inputs.workload, hardware(instance, nodes), inputs.goal, cal, inputs.constraints
    )
    counts = sorted({n for n in SWEEP_NODE_COUNTS if n <= max(4 * nodes, 8)} | {nodes})
    scaling = []
    for index, count in enumerate(counts):
        _progress(run.id, 10 + 85 * index / len(counts), f"scaling point {count} node(s)")
        try:
            point = best_layout(
                inputs.workload, hardware(instance, count), inputs.goal, cal, inputs.constraints
            )
        except ValueError:  # the fixed layout needs more GPUs than `count` nodes have
            continue
        scaling.append(without_time(_scaling_point(count * instance.gpu_count, point), inputs))
    return {
        "instance_type": {
            "id": instance.id,
            "name": instance.name,
            "provider": instance.provider.slug,
            "gpu": instance.accelerator.name,
            "gpus_per_node": instance.gpu_count,
            "network_gbps": instance.network_gbps,
        },
        "nodes": nodes,
        "calibration_used": simulator.calibration_used,
        "is_fit": choice.is_fit,
        "n_candidates": choice.n_candidates,
        "simulation": without_time(choice.result.to_dict(), inputs),
        "scaling": scaling,
    }


def _scaling_point(gpus: int, choice: Any) -> dict[str, Any]:
    result = choice.result
    return {
        "gpus": gpus,
        "is_fit": choice.is_fit,
        "tokens_per_second": result.tokens_per_second,
        "samples_per_second": result.samples_per_second,
        "time_to_train_hours": result.time_to_train_hours,
        "mfu": result.mfu,
        "calibration_status": result.calibration_status,
    }


def catalog_instances_frame(
    *, gpus: list[str] | None = None, providers: list[str] | None = None
) -> pd.DataFrame:
    """Simulatable instance types (optionally of some GPU slugs / providers), sweep columns."""
    frame = catalog_cached("catalog_instances_frame", _simulatable_instances)
    keep = np.ones(len(frame), dtype=bool)
    if gpus:
        keep &= frame["gpu_slug"].isin(gpus).to_numpy()
    if providers:
        keep &= frame["provider_slug"].isin(providers).to_numpy()
    return frame[keep].drop(columns=["gpu_slug", "provider_slug"]).reset_index(drop=True)


def _simulatable_instances() -> pd.DataFrame:
    """Every simulatable instance type (in the catalog's order), sweep columns and slugs."""
    rows = []
    for instance in InstanceType.objects.select_related("accelerator", "provider"):
        if not is_simulatable(instance.accelerator):
            continue
        hw = hardware(instance, 1)
        rows.append({
            "instance_key": instance.id,
            "gpu": instance.accelerator.name,
            "gpus_per_node": instance.gpu_count,
            "intra_node_gbytes_per_s": hw.intra_node_gbytes_per_s,
            "inter_node_gbits_per_s": hw.inter_node_gbits_per_s,
            "memory_capacity_gib": float(instance.accelerator.memory_gb),
            "gpu_slug": instance.accelerator.slug,
            "provider_slug": instance.provider.slug,
        })
    return pd.DataFrame(rows, columns=[
        "instance_key", "gpu", "gpus_per_node", "intra_node_gbytes_per_s",
        "inter_node_gbits_per_s", "memory_capacity_gib", "gpu_slug", "provider_slug"])


def simulator_sweep(
    simulator: Simulator,
    *,
    node_counts: tuple[int, ...] = SWEEP_NODE_COUNTS,
    instances: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Fastest fitting layout per instance type and node count (whole catalog by default)."""
    inputs = simulator.inputs
    frame = catalog_instances_frame() if instances is None else instances
    if frame.empty:
        return pd.DataFrame()

    def run() -> pd.DataFrame:
        grid = constrained_grid(inputs)
        if grid.empty:
            return pd.DataFrame()
        return sweep(
            inputs.workload, inputs.goal, frame, list(node_counts), simulator.calibration,
            catalog_gpu_specs(), precision=inputs.constraints.precision, layouts=grid,
            goodput=inputs.goodput_assumptions(simulator.calibration.production_overhead_fraction),
            band_goodput=inputs.band_goodput(simulator.calibration.production_overhead_fraction),
        ).configurations

    # Everything the sweep reads besides the catalog (GPU specs): kept per catalog version.
    key = _simulator_key(simulator, repr(sorted(node_counts)).encode(),
                         pd.util.hash_pandas_object(frame, index=False).to_numpy().tobytes(),
                         frame.columns.str.cat(sep=",").encode())
    return catalog_memo("simulator_sweep", key, run).copy(deep=False)


def _simulator_key(simulator: Simulator, *parts: bytes) -> str:
    """A digest of the simulator's inputs and calibration, and `parts`."""
    return hashlib.sha256(b"\0".join([
        repr(simulator.inputs).encode(), _calibration_digest(simulator.calibration),
        *parts])).hexdigest()


@lru_cache(maxsize=16)
def _calibration_digest(calibration: Calibration) -> bytes:
    """The calibration as canonical JSON, digested once per calibration (a frozen value: a
    user's own fit or the shipped one), not on every plan."""
    return hashlib.sha256(json.dumps(calibration.to_dict(), sort_keys=True,
                                     default=str).encode()).digest()


def simulator_goodput(simulator: Simulator, *, given: set[str]) -> dict[str, Any]:
    """The whole-run goodput assumptions a sweep used (in the plan-field units of
    requests.GOODPUT_INPUTS, each marked default unless its name is in `given`) and the
    sequence-length and batch defaults that filled blanks, in words."""
    used = simulator.inputs.goodput_assumptions(simulator.calibration.production_overhead_fraction)
    values = {name: getattr(used, field) / factor
              for name, (field, factor) in GOODPUT_INPUTS.items()}
    return {"goodput_assumptions": {name: {"value": value, "is_default": name not in given}
                                    for name, value in values.items()},
            "run_defaults": list(simulator.inputs.defaults)}


def simulator_grid_size(simulator: Simulator) -> int:
    """Layouts swept per instance type and node count (the user's fixed knobs applied)."""
    return len(constrained_grid(simulator.inputs))


def simulator_layout_memory(simulator: Simulator, *, instance_key: int, nodes: int,
                            layout: Mapping[str, Any]) -> dict[str, Any] | None:
    """Memory breakdown (GiB per GPU) of one swept configuration (a row with its layout
    knobs), re-simulated; None when its GPU lacks the rate (run load_catalog)."""
    fixed = LayoutConstraints(**{
        k.name: int(layout[k.name]) if k.kind == "integer" else str(layout[k.name])
        for k in LAYOUT_KNOBS if k.kind != "flag" and k.name in layout})

    def run() -> dict[str, Any] | None:
        instance = InstanceType.objects.select_related("accelerator").get(pk=instance_key)
        try:
            choice = best_layout(simulator.inputs.workload, hardware(instance, nodes),
                                 simulator.inputs.goal, simulator.calibration, fixed)
        except ValueError:
            return None
        memory: dict[str, Any] = choice.result.to_dict()["memory"]
        return memory

    # Kept like sweeps: a what-if whose pick is the same configuration re-simulates nothing.
    key = _simulator_key(simulator, repr((instance_key, nodes, fixed)).encode())
    return copy.deepcopy(catalog_memo("simulator_layout_memory", key, run))


def gpus_without_rate(names: list[str], precision: str) -> bool:
    """True when none of the catalog GPUs `names` has a published `precision` rate."""
    specs = catalog_gpu_specs()
    return bool(names) and not any(specs[name].supports(precision) for name in names
                                   if name in specs)


def constrained_grid(inputs: SimulationInputs) -> pd.DataFrame:
    """The sweep's layout grid with the user's fixed layout fields applied."""
    fixed = inputs.constraints
    grid = layout_grid(inputs.workload, zero_stages=(
        None if fixed.zero_stage is None else (fixed.zero_stage,)))
    for knob in LAYOUT_KNOBS:
        value = getattr(fixed, knob.name)
        if knob.kind == "flag" and value:
            grid = grid.assign(**{knob.name: 1})  # a column the sweep reads when present
        elif value is None or knob.name not in grid.columns:
            continue  # searched, or not a grid column (dp follows; precision is per GPU)
        elif knob.name == "recompute":  # the grid codes modes by their index
            grid = grid[grid["recompute"] == RECOMPUTE_MODES.index(value)]
        else:
            grid = grid[grid[knob.name] == value]
    return grid.reset_index(drop=True)


def _sweep(run: SimulationRun, simulator: Simulator) -> dict[str, Any]:
    inputs = simulator.inputs
    _progress(run.id, 20, "sweeping every instance type x node count x layout")
    # Without a goal time is not predicted: the fastest configurations come first instead.
    order = ("samples_per_second", False) if inputs.missing else ("time_to_train_hours", True)
    frame = simulator_sweep(simulator).sort_values(order[0], ascending=order[1])
    names = dict(InstanceType.objects.values_list("id", "name"))
    frame = frame.assign(instance_type=frame["instance_key"].map(names))
    rows = [without_time(r, inputs) for r in frame.head(200).to_dict("records")]
    note = without_time({}, inputs).get("not_predicted")
    return {"n_feasible": int(len(frame)), "configurations": rows,
            "calibration_used": simulator.calibration_used,
            **({"not_predicted": note} if note else {})}


def _compute(run: SimulationRun) -> dict[str, Any]:
    compute = _single if run.kind == SimulationRun.Kind.SINGLE else _sweep
    return compute(run, simulator_for(request=run.request, owner_id=run.owner_id))


def simulation_execute(*, run_id: int, attempt: Attempt) -> None:
    """Run a stored simulation once; a second call on a claimed or finished run does nothing."""
    run_execute(SimulationRun, run_id, _compute, attempt=attempt)


@dataclass(frozen=True)
class ValidationReport:
    predictions: pd.DataFrame
    summary: pd.DataFrame


def simulator_validate_file(
    *,
    path: Path | None = None,
    paths: list[Path] | None = None,
    loso: bool = False,
    cv: str | None = None,
    calibration: Calibration | None = None,
) -> ValidationReport:
    """Predict every row of one or more reference-runs CSVs.

    `cv="family"` (or `loso`, i.e. "source") refits leaving out one group at a time, so every
    figure is out-of-group; otherwise the shipped (or given) calibration predicts every row.
    """
    files = [str(p) for p in (paths or [])] + ([str(path)] if path is not None else [])
    runs = load_reference_runs(*files)
    specs = shipped_gpu_specs()
    group_by = cv or ("source" if loso else None)
    if group_by is not None:
        predictions = cross_validate(runs, specs, group_by=group_by)
    else:
        predictions = validate(runs, specs, calibration or shipped_calibration())
    return ValidationReport(predictions, summarize_errors(predictions))


def simulator_calibration_refit(*, paths: list[Path], out_path: Path) -> Calibration:
    """Refit the shipped calibration on reference-runs CSVs, with out-of-family bands, and
    write it to `out_path` (simulator/data/calibration.json), with the leave-one-family-out
    predictions it was banded on beside it (accuracy.ACCURACY_FILE, the accuracy page)."""
    runs = load_reference_runs(*[str(p) for p in paths])
    fitted, predictions = calibrate_and_validate(runs, shipped_gpu_specs())
    save_calibration(fitted, str(out_path))
    write_accuracy(predictions, out_path.with_name(ACCURACY_FILE))
    return fitted
