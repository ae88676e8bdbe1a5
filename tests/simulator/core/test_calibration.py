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


def test_keys_of_dropped_knobs_are_refused():
    # stored calibrations lost them in simulator migration 0004 (test_calibration_migration)
    with pytest.raises(ValueError, match="efficiency_llm"):
        Calibration.from_dict({"efficiency_llm": 0.6, "network_efficiency": 0.7})


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
    # The envelope tables are the fit's; the envelope groups' band multipliers come from the
    # leave-one-family-out residuals (test_crossval checks the shipped accuracy file).
    for table in ("gpus", "architectures", "groups"):
        assert getattr(refit.domain, table) == getattr(calibration.domain, table), table
