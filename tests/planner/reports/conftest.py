"""A finished plan, computed once per module on the loaded catalog, stored per test."""

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.utils import timezone

from planner.models import PlanScenario
from planner.plans import services
from planner.plans.scenario import scenario_from_input
from tests.clients import signed_in

LLAMA = {"workload": "llama2-7b", "tokens": 1e12, "providers": ["aws", "gcp"],
         "purchase_options": ["on_demand", "spot"], "deadline_days": 30,
         "name": "=HYPERLINK(\"http://example.com\",\"x\") Llama run"}


@pytest.fixture(scope="module")
def plan_document(loaded_catalog: None, django_db_blocker: Any) -> dict[str, Any]:
    with django_db_blocker.unblock():
        scenario = scenario_from_input(LLAMA, today=timezone.now().date())
        return {"inputs": scenario.data,
                "result": services.plan_compute(scenario=scenario, owner_id=None)}


@pytest.fixture
def ana(db: None) -> User:
    return User.objects.create_user("ana", password="pw-ana-123")


@pytest.fixture
def ana_client(ana: User) -> Client:
    return signed_in(ana)


@pytest.fixture
def bob_client(db: None) -> Client:
    return signed_in(User.objects.create_user("bob", password="pw-bob-123"))


@pytest.fixture
def done_plan(ana: User, plan_document: dict[str, Any]) -> PlanScenario:
    return PlanScenario.objects.create(
        owner=ana, name=LLAMA["name"], inputs=plan_document["inputs"],
        result=plan_document["result"], status=PlanScenario.Status.DONE, progress_pct=100)


def pdf_text(content: bytes, tmp_path: Path) -> str:
    if shutil.which("pdftotext") is None:
        pytest.skip("pdftotext is missing: apt-get install poppler-utils (.ci/run does)")
    path = tmp_path / "report.pdf"
    path.write_bytes(content)
    done = subprocess.run(["pdftotext", "-layout", str(path), "-"], capture_output=True,
                          check=True, timeout=60)
    return done.stdout.decode()
