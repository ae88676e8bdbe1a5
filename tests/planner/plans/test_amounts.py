"""Tokens as the page prints them (issue 38): "2T", "500B" and "1.5e12" are accepted by the
form, the API and the plan command alike; nonsense is a 4xx naming the field."""

import json
from io import StringIO
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.test import Client

from planner.core.formatting import parse_amount
from planner.plans.forms import PlanForm
from planner.plans.models import PlanScenario

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(("text", "value"), [
    ("2T", 2e12), ("2.0 T tokens", 2e12), ("500B", 5e11), ("1.5e12", 1.5e12),
    ("2,000,000", 2e6), ("7M", 7e6), ("3k", 3e3)])
def test_amounts_read_as_people_write_them(text: str, value: float) -> None:
    assert parse_amount(text) == value


def test_the_form_api_and_command_take_2t(client_ana: Client, user: Any,
                                           eager_celery: None) -> None:
    form = PlanForm(data={"workload": "llama2-7b", "tokens": "2T"})
    assert form.is_valid(), form.errors
    assert form.cleaned_data["tokens"] == 2e12
    bad = PlanForm(data={"workload": "llama2-7b", "tokens": "2X"})
    assert not bad.is_valid() and "tokens" in bad.errors

    response = client_ana.post("/api/plans", json.dumps(
        {"workload": "llama2-7b", "tokens": "500B", "providers": ["aws"]}),
        content_type="application/json")
    assert response.status_code == 201, response.content
    assert PlanScenario.objects.get(id=response.json()["id"]).inputs["tokens"] == 5e11
    refused = client_ana.post("/api/plans", json.dumps(
        {"workload": "llama2-7b", "tokens": "lots"}), content_type="application/json")
    assert refused.status_code in (400, 422) and b"tokens" in refused.content

    out = StringIO()
    call_command("plan", "--workload", "llama2-7b", "--tokens", "1.5e12", "--providers", "aws",
                 "--json", stdout=out)
    assert json.loads(out.getvalue())["inputs"]["tokens"] == 1.5e12
    with pytest.raises(CommandError, match="tokens"):
        call_command("plan", "--workload", "llama2-7b", "--tokens", "2X", stdout=StringIO())
