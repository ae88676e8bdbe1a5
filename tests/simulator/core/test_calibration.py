"""Calibration serialization, legacy files, priors and reproducibility of the shipped fit."""

from __future__ import annotations

import numpy as np
import pytest

from simulator.core import Calibration
from simulator.core.fitting import PRIORS, nelder_mead
from tests import background


def test_calibration_round_trips_through_a_dict(calibration):
    assert Calibration.from_dict(calibration.to_dict()) == calibration


@pytest.mark.parametrize("data", [{"nonsense": 1.0}, {"efficiency_other": "x"},
                                  {"efficiency_other": float("nan")},
                                  {"band_log_p10": 0.5}])
def test_bad_calibration_dicts_raise(data):
    with pytest.raises(ValueError):
        Calibration.from_dict(data)


def test_legacy_calibration_files_still_load():
    legacy = {"efficiency_llm": 0.6, "simt_factor": 2.0, "log_residual_p10": -0.2,
              "network_efficiency": 0.7}
    assert Calibration.from_dict(legacy).network_efficiency == 0.7


def test_defaults_are_the_priors():
    defaults = Calibration()
    for name, _, value, _ in PRIORS:
        assert getattr(defaults, name) == value, name


def test_nelder_mead_finds_a_quadratic_minimum():
    x = nelder_mead(lambda v: float(np.sum((v - np.array([1.0, -2.0])) ** 2)), np.zeros(2))
    assert x == pytest.approx([1.0, -2.0], abs=1e-3)


def test_refit_reproduces_shipped_calibration(calibration):
    refit = background.result("tests.simulator.core.fits:shipped_refit")  # fit_calibration
    for name, *_ in PRIORS:
        assert getattr(refit, name) == pytest.approx(getattr(calibration, name), rel=1e-3), name
    assert refit.domain == calibration.domain
