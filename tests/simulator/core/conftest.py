"""Shared fixtures for the simulator core tests: repository data files, read once."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from simulator.core import Calibration, GpuSpec, load_calibration, load_gpu_specs
from simulator.core.runs import load_reference_runs

ROOT = Path(__file__).resolve().parents[3]
RUNS_CSV = ROOT / "simulator" / "data" / "reference_runs.csv"
ADDITIONS_CSV = ROOT / "simulator" / "data" / "reference_runs_additions.csv"
GPUS_CSV = ROOT / "pricing" / "data" / "gpus.csv"
CALIBRATION_JSON = ROOT / "simulator" / "data" / "calibration.json"


@pytest.fixture(scope="session")
def gpu_specs() -> dict[str, GpuSpec]:
    return load_gpu_specs(str(GPUS_CSV))


@pytest.fixture(scope="session")
def runs() -> pd.DataFrame:
    return pd.read_csv(RUNS_CSV)


@pytest.fixture(scope="session")
def all_runs() -> pd.DataFrame:
    """reference_runs.csv followed by reference_runs_additions.csv (the shipped fit's rows)."""
    return load_reference_runs(str(RUNS_CSV), str(ADDITIONS_CSV))


@pytest.fixture(scope="session")
def calibration() -> Calibration:
    return load_calibration(str(CALIBRATION_JSON))
