"""One scenario field table: the form, the API schema, the template and the `plan` command
all carry every field, and nothing a client sends is dropped silently."""

import json
from datetime import date

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.core.management.base import CommandParser
from django.test import Client

from planner.management.commands.plan import Command as PlanCommand
from planner.models import PlanScenario
from planner.plans.core.fields import FIELDS_BY_NAME, SCENARIO_FIELDS
from planner.plans.forms import PlanForm
from planner.plans.scenario import scenario_from_input

pytestmark = pytest.mark.django_db
TODAY = date(2026, 11, 30)
LLAMA = {"workload": "llama2-7b", "tokens": 1e12, "providers": ["aws"],
         "purchase_options": ["on_demand", "spot"]}


@pytest.fixture
def client_ana(loaded_catalog: None) -> Client:
    client = Client()
    client.force_login(User.objects.create_user("ana", password="pw-ana-123"))
    return client


def test_the_form_has_every_field_of_the_table(loaded_catalog: None) -> None:
    assert list(PlanForm().fields) == [f.name for f in SCENARIO_FIELDS]


def test_the_template_shows_every_field_grouped(client_ana: Client) -> None:
    body = client_ana.get("/plans/new").content.decode()
    for field in SCENARIO_FIELDS:
        assert f'name="{field.name}"' in body, field.name
    assert body.count("<fieldset>") == 6


def test_the_api_schema_lists_every_field_with_its_range(client_ana: Client) -> None:
    schema = client_ana.get("/api/openapi.json").json()["components"]["schemas"]["PlanIn"]
    assert set(schema["properties"]) == {f.name for f in SCENARIO_FIELDS} | {"layout"}
    assert schema["additionalProperties"] is False
    max_nodes = json.dumps(schema["properties"]["max_nodes"])
    assert '"maximum": 512' in max_nodes and '"minimum": 1' in max_nodes


def test_the_plan_command_has_an_option_per_field() -> None:
    parser: CommandParser = PlanCommand().create_parser("manage.py", "plan")
    flags = {flag for action in parser._actions for flag in action.option_strings}
    for field in SCENARIO_FIELDS:
        assert f"--{field.name.replace('_', '-')}" in flags, field.name


def test_api_rejects_an_unknown_field_by_name(client_ana: Client) -> None:
    response = client_ana.post("/api/plans", json.dumps({**LLAMA, "tokenz": 5}),
                               content_type="application/json")
    assert response.status_code == 422
    assert "tokenz" in response.content.decode()
    assert not PlanScenario.objects.exists()


def test_api_keeps_spot_bands_architecture_and_checkpoint_speed(
    client_ana: Client, django_capture_on_commit_callbacks
) -> None:
    body = {"tokens": 1e11, "n_layers": 32, "hidden_size": 4096, "n_heads": 32,
            "seq_len": 4096, "ffn_hidden_size": 11008, "vocab_size": 32000,
            "spot_interruptions_pct_per_month": {"aws": 12},
            "checkpoint_write_gbytes_per_s": 4, "providers": ["aws"], "tp": 2}
    response = client_ana.post("/api/plans", json.dumps(body), content_type="application/json")
    assert response.status_code == 201, response.content
    inputs = PlanScenario.objects.get().inputs
    assert inputs["spot_interruptions_pct_per_month"] == {"aws": 12.0}
    assert inputs["checkpoint_write_gbytes_per_s"] == 4.0
    assert (inputs["n_layers"], inputs["ffn_hidden_size"]) == (32, 11008)
    assert inputs["layout"] == {"tp": 2}


@pytest.mark.parametrize(("field", "value"), [
    ("tokens", 1e308), ("seq_len", 2**70), ("max_nodes", 10**9), ("deadline_days", 1e30),
    ("commitment_reuse_fraction", 5), ("max_nodes", 0), ("budget_usd", -1),
])
def test_api_refuses_absurd_values_naming_the_field(client_ana: Client, field: str,
                                                      value: float) -> None:
    response = client_ana.post("/api/plans", json.dumps({**LLAMA, field: value}),
                               content_type="application/json")
    assert response.status_code in (400, 422)
    assert field in response.content.decode()
    assert not PlanScenario.objects.exists()


def test_api_refuses_infinity_without_a_500(client_ana: Client) -> None:
    response = client_ana.post("/api/plans", '{"workload": "llama2-7b", "tokens": Infinity}',
                               content_type="application/json")
    assert 400 <= response.status_code < 500
    assert not PlanScenario.objects.exists()


@pytest.mark.parametrize(("raw", "message"), [
    ({**LLAMA, "colour": "red"}, "colour: unknown field"),
    ({**LLAMA, "layout": {"tpp": 2}}, "layout.tpp: unknown layout field"),
    ({**LLAMA, "tp": 2.5}, "tp: must be a whole number"),
    ({**LLAMA, "recompute": "sometimes"}, "recompute: 'sometimes' is not one of"),
    ({**LLAMA, "deadline": "2040-01-01"}, "deadline: 2040-01-01 is more than 3650 days away"),
    ({**LLAMA, "max_nodes": 513}, "max_nodes: must be at least 1 and at most 512 (got 513)"),
])
def test_scenario_checks_come_from_the_table(raw: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        scenario_from_input(raw, today=TODAY)


def test_command_sets_assumptions_from_flags(loaded_catalog: None, capsys) -> None:
    call_command("plan", "--workload", "llama2-7b", "--tokens", "1e11", "--providers", "aws",
                 "--checkpoint-gb", "140", "--dataset-gb", "500", "--egress-gb", "20", "--json",
                 "--top", "1")
    document = json.loads(capsys.readouterr().out)
    assert (document["inputs"]["checkpoint_gb"], document["inputs"]["dataset_gb"],
            document["inputs"]["egress_gb"]) == (140.0, 500.0, 20.0)
    assert document["result"]["assumptions"]["checkpoint_gb"] == 140.0
    assert FIELDS_BY_NAME["checkpoint_gb"].is_assumption
