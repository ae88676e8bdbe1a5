"""An analysed Philly history (the Chronus sample, V100) for the capacity tests."""

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from planner.purchase_mix import services as mix_services
from planner.purchase_mix.models import History
from tests.planner.conftest import PHILLY, PHILLY_MAP, file_upload

PHILLY_OPTIONS = mix_services.ParseOptions(
    fmt="mapped", column_map=dict(item.split("=") for item in PHILLY_MAP.split(",")),
    time_unit="min", origin="2017-10-01", default_gpu_type="V100")
SMALL_SWEEP = {"pool_gpus": [0, 96, 200, 352], "max_wait_hours": [2]}


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


def steady_csv(days: int = 150) -> bytes:
    """Firm A100-80GB jobs on whole 8-GPU instances, aligned to hours: 16 GPUs all the time, 8
    more three days in four, 16 more for 6 h every other day. The purchase mix buys a 3-year
    and a 1-year reservation for it (so a pool priced at one term is not its purchase)."""
    origin = datetime(2026, 6, 1, tzinfo=UTC)
    rows = ["job_id,start,end,gpu_type,gpu_count,interruptible"]

    def add(name: str, start_h: int, hours: int, gpus: int) -> None:
        start = origin + timedelta(hours=start_h)
        end = start + timedelta(hours=hours)
        rows.append(f"{name},{start:%Y-%m-%dT%H:%M:%SZ},{end:%Y-%m-%dT%H:%M:%SZ},A100-80GB,"
                    f"{gpus},false")

    for chain in range(2):
        for week in range(days // 7):
            add(f"s{chain}-{week}", week * 168, 168, 8)
    for k in range(days // 4):
        add(f"m{k}", k * 96, 72, 8)
    for k in range(days // 2):
        add(f"b{k}", k * 48 + 10, 6, 16)
    return ("\n".join(rows) + "\n").encode()


@pytest.fixture
def steady_analysed(user: Any, loaded_catalog: None, eager_celery: None,
                    django_capture_on_commit_callbacks: Any) -> History:
    data = steady_csv()
    upload = SimpleUploadedFile("steady.csv", data, content_type="text/csv")
    with django_capture_on_commit_callbacks(execute=True):
        outcome = mix_services.history_create(
            owner_id=user.pk, upload=upload, name="steady.csv", size_bytes=len(data),
            options=mix_services.ParseOptions(fmt="generic"))
    assert outcome.history is not None and outcome.run is not None
    outcome.run.refresh_from_db()
    assert outcome.run.status == "done", outcome.run.error
    return outcome.history
