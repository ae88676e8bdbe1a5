"""Shared fixtures for the simulator core tests: repository data files, read once."""

from __future__ import annotations

import pandas as pd
import pytest

from simulator.core import Calibration, GpuSpec, load_calibration
from tests.simulator.core import fits
from tests.simulator.core.fits import ROOT, RUNS_CSV

CALIBRATION_JSON = ROOT / "simulator" / "data" / "calibration.json"


@pytest.fixture(scope="session")
def gpu_specs() -> dict[str, GpuSpec]:
    return fits.gpu_specs()


@pytest.fixture(scope="session")
def runs() -> pd.DataFrame:
    return pd.read_csv(RUNS_CSV)


@pytest.fixture(scope="session")
def all_runs() -> pd.DataFrame:
    """reference_runs.csv followed by reference_runs_additions.csv (the shipped fit's rows)."""
    return fits.all_runs()


@pytest.fixture(scope="session")
def calibration() -> Calibration:
    return load_calibration(str(CALIBRATION_JSON))
