"""Stored user calibrations written before knobs were dropped still load: migration 0004
removes the dropped keys, so Calibration.from_dict keeps refusing unknown ones."""

import importlib

import pytest
from django.apps import apps
from django.contrib.auth.models import User

from simulator.core import Calibration
from simulator.models import UserCalibration

pytestmark = pytest.mark.django_db
MIGRATION = importlib.import_module("simulator.migrations.0004_drop_legacy_calibration_keys")


def test_a_stored_calibration_with_dropped_knobs_loads_after_the_migration() -> None:
    owner = User.objects.create_user("ana", password="pw-ana-123")
    UserCalibration.objects.create(owner=owner, n_runs=3, params={
        "efficiency_llm": 0.6, "simt_factor": 2.0, "log_residual_p10": -0.2,
        "network_efficiency": 0.7})
    with pytest.raises(ValueError, match="unknown calibration keys"):
        Calibration.from_dict(UserCalibration.objects.get().params)
    MIGRATION.drop_legacy_keys(apps, None)
    assert Calibration.from_dict(UserCalibration.objects.get().params).network_efficiency == 0.7
