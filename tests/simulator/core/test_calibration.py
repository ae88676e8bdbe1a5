"""Calibration serialization and reproducibility of the shipped fit."""

from __future__ import annotations

import numpy as np
import pytest

from simulator.core import Calibration, fit_calibration
from simulator.core.fitting import nelder_mead


def test_calibration_round_trips_through_a_dict(calibration):
    assert Calibration.from_dict(calibration.to_dict()) == calibration


@pytest.mark.parametrize("data", [{"nonsense": 1.0}, {"efficiency_llm": "x"},
                                  {"efficiency_llm": float("nan")}])
def test_bad_calibration_dicts_raise(data):
    with pytest.raises(ValueError):
        Calibration.from_dict(data)


def test_nelder_mead_finds_a_quadratic_minimum():
    x = nelder_mead(lambda v: float(np.sum((v - np.array([1.0, -2.0])) ** 2)), np.zeros(2))
    assert x == pytest.approx([1.0, -2.0], abs=1e-3)


def test_refit_reproduces_shipped_calibration(runs, gpu_specs, calibration):
    refit = fit_calibration(runs, gpu_specs)
    for key, value in calibration.to_dict().items():
        assert refit.to_dict()[key] == pytest.approx(value, rel=1e-3, abs=1e-6), key
