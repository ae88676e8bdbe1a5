"""Redis is optional for reading: with the page cache's Redis gone (a port nobody listens on,
the broker too), every page and sign-in still answers, the cache serves from per-process memory
and /healthz says so, and sign-in throttling (database counters) still locks."""

import io
import json
import socket
from collections.abc import Iterator
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.cache import cache
from django.test import Client

from planner import cache as resilient
from planner.models import AnalysisRun, History
from planner.plans.models import PlanScenario
from planner.purchase_mix import services as mix_services
from simulator.models import SimulationRun
from tests.clients import signed_in
from tests.planner.conftest import GENERIC_CSV

pytestmark = pytest.mark.django_db
PLAN = {"workload": "llama2-7b", "tokens": 1e11, "providers": ["aws"],
        "purchase_options": ["on_demand"]}


def _dead_redis_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"redis://127.0.0.1:{port}/0"  # closed again: nothing listens there


@pytest.fixture
def redis_gone(settings: Any) -> Iterator[str]:
    url = _dead_redis_url()
    settings.CACHES = {"default": {"BACKEND": "planner.cache.ResilientRedisCache",
                                   "LOCATION": url}}
    settings.CELERY_BROKER_URL = url
    resilient._mark_up()
    yield url
    resilient._mark_up()


def test_every_page_and_sign_in_answer_with_redis_gone(
    redis_gone: str, loaded_catalog: None, eager_celery: None, settings: Any, tmp_path: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    settings.MEDIA_ROOT = str(tmp_path)
    ana = User.objects.create_user("ana", password="pw-ana-123")
    client = signed_in(ana)
    with django_capture_on_commit_callbacks(execute=True):
        created = client.post("/api/plans", json.dumps(PLAN), content_type="application/json")
        upload = mix_services.history_create(
            owner_id=ana.pk, upload=io.BytesIO(GENERIC_CSV.encode()),
            name="jobs.csv", size_bytes=len(GENERIC_CSV),
            options=mix_services.ParseOptions(fmt="generic"),
            run_options=mix_services.RunOptions())
    assert created.status_code == 201, created.content
    plan = PlanScenario.objects.get()
    assert plan.status == "done" and upload.history is not None
    assert AnalysisRun.objects.get().status == "done"
    history = History.objects.get()
    simulation = SimulationRun.objects.create(owner=ana, request={})
    pages = ["/", "/gpus/", "/prices/", "/plans/", f"/plans/{plan.pk}", "/plans/new",
             "/history/", f"/history/{history.pk}", "/history/upload", "/simulations/",
             f"/simulations/{simulation.pk}", "/reports/", "/api/", "/plans/example",
             "/instances/aws/p4d.24xlarge/", "/simulations/accuracy"]
    for page in pages:
        response = client.get(page)
        assert response.status_code < 500, (page, response.status_code)
        assert response.status_code in (200, 302), (page, response.status_code)
        # a second time: served from the per-process cache where the page caches
        assert client.get(page).status_code == response.status_code, page
    assert "degraded" in resilient.cache_state()

    anonymous = Client()
    for page in ["/", "/gpus/", "/prices/", "/accounts/login/", "/accounts/signup/"]:
        assert anonymous.get(page).status_code == 200, page
    signed = anonymous.post("/accounts/login/", {"username": "ana", "password": "pw-ana-123"})
    assert signed.status_code == 302 and "_auth_user_id" in anonymous.session
    health = Client().get("/healthz").json()
    assert health["cache"].startswith("degraded: Redis unavailable")
    assert health["broker"].startswith("error") and health["database"] == "ok"


def test_sign_in_throttling_works_without_redis(redis_gone: str) -> None:
    User.objects.create_user("ana", password="pw-ana-123")
    client = Client()
    for _ in range(5):
        assert client.post("/accounts/login/",
                           {"username": "ana", "password": "wrong"}).status_code == 200
    locked = client.post("/accounts/login/", {"username": "ana", "password": "pw-ana-123"})
    assert "Too many failed sign-ins for this account" in locked.content.decode()
    assert "_auth_user_id" not in client.session
    cache.clear()  # nothing of the lock lives in the cache
    again = client.post("/accounts/login/", {"username": "ana", "password": "pw-ana-123"})
    assert "Too many failed sign-ins" in again.content.decode()
