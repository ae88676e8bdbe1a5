"""The sweep holds a pool the rule may buy: when the buying rule buys nothing at the chosen
price (a 3-year term or owned hardware on 60 days of history), the grid holds the pool of 0
GPUs, so the sweep recommends everything in the cloud instead of failing."""

from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from planner.capacity import services
from planner.capacity.models import CapacityRun
from planner.purchase_mix import services as mix_services
from planner.purchase_mix.models import History
from tests.planner.capacity.conftest import steady_csv


@pytest.fixture
def sixty_days(user: Any, loaded_catalog: None, eager_celery: None,
               django_capture_on_commit_callbacks: Any) -> History:
    data = steady_csv(days=60)
    upload = SimpleUploadedFile("steady60.csv", data, content_type="text/csv")
    with django_capture_on_commit_callbacks(execute=True):
        outcome = mix_services.history_create(
            owner_id=user.pk, upload=upload, name="steady60.csv", size_bytes=len(data),
            options=mix_services.ParseOptions(fmt="generic"))
    assert outcome.run is not None
    outcome.run.refresh_from_db()
    assert outcome.run.status == "done", outcome.run.error
    assert outcome.history is not None
    return outcome.history


@pytest.mark.parametrize("pool_price", ["reserved_3y", "owned"])
def test_a_price_the_rule_will_not_buy_yet_recommends_the_cloud(
        sixty_days: History, pool_price: str, django_capture_on_commit_callbacks: Any) -> None:
    raw = {"pool_gpus": [16, 32], "max_wait_hours": [2], "pool_price": pool_price}
    with django_capture_on_commit_callbacks(execute=True):
        run = services.capacity_create(history=sixty_days, raw=raw)
    run.refresh_from_db()
    assert run.status == CapacityRun.Status.DONE, run.error
    result = run.result
    assert result["is_commitment_allowed"] is False
    assert result["recommended"]["pool_gpus"] == 0
    assert result["purchase"]["lines"] == []
    assert "3-year terms need at least 90 days" in " ".join(result["purchase"]["reasons"])
    assert result["headline"].startswith("Commit nothing")
