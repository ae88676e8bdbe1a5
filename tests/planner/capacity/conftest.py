"""An analysed Philly history (the Chronus sample, V100) for the capacity tests."""

from typing import Any

import pytest

from planner.purchase_mix import services as mix_services
from planner.purchase_mix.models import History
from tests.planner.conftest import PHILLY, PHILLY_MAP, file_upload

PHILLY_OPTIONS = mix_services.ParseOptions(
    fmt="mapped", column_map=dict(item.split("=") for item in PHILLY_MAP.split(",")),
    time_unit="min", origin="2017-10-01", default_gpu_type="V100")
SMALL_SWEEP = {"pool_gpus": [0, 100, 200, 350], "max_wait_hours": [2]}


@pytest.fixture
def analysed(user: Any, loaded_catalog: None, eager_celery: None,
             django_capture_on_commit_callbacks: Any) -> History:
    upload = file_upload(PHILLY)
    with django_capture_on_commit_callbacks(execute=True):
        outcome = mix_services.history_create(
            owner_id=user.pk, upload=upload, name=PHILLY.name, size_bytes=upload.size or 0,
            options=PHILLY_OPTIONS)
    assert outcome.history is not None and outcome.run is not None
    outcome.run.refresh_from_db()
    assert outcome.run.status == "done", outcome.run.error
    return outcome.history
