"""The slow fits of the simulator core tests, as functions of the shipped data files alone, so
that tests/background.py can run them in a second process while the suite runs."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from simulator.core import Calibration, GpuSpec, fit_calibration, load_gpu_specs
from simulator.core.crossval import cross_validate
from simulator.core.reference_runs import load_reference_runs

ROOT = Path(__file__).resolve().parents[3]
RUNS_CSV = ROOT / "simulator" / "data" / "reference_runs.csv"
ADDITIONS_CSV = ROOT / "simulator" / "data" / "reference_runs_additions.csv"
WHOLE_RUNS_CSV = ROOT / "simulator" / "data" / "whole_runs.csv"
GPUS_CSV = ROOT / "pricing" / "data" / "gpus.csv"


def gpu_specs() -> dict[str, GpuSpec]:
    return load_gpu_specs(str(GPUS_CSV))


def all_runs() -> pd.DataFrame:
    """reference_runs.csv, reference_runs_additions.csv and whole_runs.csv (the shipped fit's
    rows)."""
    return load_reference_runs(str(RUNS_CSV), str(ADDITIONS_CSV), str(WHOLE_RUNS_CSV))


def shipped_refit() -> Calibration:
    """The shipped calibration's fit, redone on every reference run (about 10 s)."""
    return fit_calibration(all_runs(), gpu_specs())


def family_cross_validation() -> pd.DataFrame:
    """Leave-one-family-out validation on the three reference files (a refit per family, a
    few minutes)."""
    return cross_validate(all_runs(), gpu_specs(), group_by="family")
