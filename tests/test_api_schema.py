"""schemathesis against /api/openapi.json, in-process on the WSGI app over https, as a user
signed in with an API token who owns a plan, a simulation and a job history: no operation
answers 5xx, and every response conforms to the schema it documents."""

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from django.conf import settings as django_settings
from django.contrib.auth.models import User
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
)

# Whitenoise, loaded with the WSGI handler at import, warns (an error here) without STATIC_ROOT.
Path(django_settings.STATIC_ROOT).mkdir(parents=True, exist_ok=True)

from planner.models import PlanScenario  # noqa: E402
from planner.tokens import token_create  # noqa: E402
from planner.wsgi import application  # noqa: E402
from simulator.models import SimulationRun  # noqa: E402

schema = schemathesis.openapi.from_wsgi("/api/openapi.json", application)
CHECKS = [not_a_server_error, response_schema_conformance, content_type_conformance]
# Bounded: examples per operation (SCHEMATHESIS_EXAMPLES for a longer hunt).
EXAMPLES = int(os.environ.get("SCHEMATHESIS_EXAMPLES", "25"))


@pytest.fixture
def bearer(db: None, loaded_catalog: None, settings: Any, tmp_path: Path
           ) -> Iterator[dict[str, str]]:
    settings.MEDIA_ROOT = str(tmp_path)
    # The raw WSGI handler closes the connection after each request (Django's test client
    # stops that too): the test's transaction must survive the calls.
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    ada = User.objects.create_user("ada-schema", password="pw-ada-123")
    # Her own objects under the first ids, so that generated small ids meet real rows.
    PlanScenario.objects.create(owner=ada, name="plan", inputs={})
    SimulationRun.objects.create(owner=ada, request={})
    # Schemathesis's WSGI transport asks for gzip but does not decode it (HTTP clients do;
    # compression itself is tested in tests/planner/plans/test_plans.py).
    yield {"Authorization": f"Bearer {token_create(owner_id=ada.pk, name='schema').token}",
           "Accept-Encoding": "identity"}
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


@schema.parametrize()
@settings(max_examples=EXAMPLES, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                 HealthCheck.filter_too_much])
def test_every_api_operation_answers_without_5xx_and_as_documented(
        case: schemathesis.Case, bearer: dict[str, str]) -> None:
    response = case.call(base_url="https://localhost", headers=bearer)
    case.validate_response(response, checks=CHECKS)


def _validated(path: str, method: str, bearer: dict[str, str], **parts: Any) -> Any:
    case = schema[path][method].Case(**parts)
    response = case.call(base_url="https://localhost", headers=bearer)
    case.validate_response(response, checks=CHECKS)
    return response


def test_the_success_answers_conform_to_the_schema_too(bearer: dict[str, str]) -> None:
    """Generated ids rarely meet a real row: the 200/201 answers, checked the same way."""
    created = _validated("/api/plans", "POST", bearer, body={
        "workload": "llama2-7b", "tokens": 1e12, "providers": ["aws"],
        "purchase_options": ["on_demand", "spot"]})
    assert created.status_code == 201
    plan = _validated("/api/plans/{scenario_id}", "GET", bearer,
                      path_parameters={"scenario_id": created.json()["id"]})
    assert plan.status_code == 200 and plan.json()["status"] == "queued"
    run = SimulationRun.objects.get()
    simulation = _validated("/api/simulations/{run_id}", "GET", bearer,
                            path_parameters={"run_id": run.pk})
    assert simulation.status_code == 200
    gpu = _validated("/api/gpus/{slug}", "GET", bearer, path_parameters={"slug": "h100-sxm5-80gb"})
    assert gpu.status_code == 200
