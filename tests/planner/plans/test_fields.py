"""One scenario field table: the form, the API schema, the template and the `plan` command
all carry every field, and nothing a client sends is dropped silently."""

import json
from datetime import date

import pytest
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


def test_the_form_has_every_field_of_the_table(loaded_catalog: None) -> None:
    assert list(PlanForm().fields) == [f.name for f in SCENARIO_FIELDS]


def test_the_template_shows_every_field_grouped(client_ana: Client) -> None:
    body = client_ana.get("/plans/new").content.decode()
    for field in SCENARIO_FIELDS:
        assert f'name="{field.name}"' in body, field.name
    assert body.count('<fieldset id="group-') == 5
    assert '<details class="folded" id="assumptions">' in body


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
    ({**LLAMA, "tp": 2.5}, "tp: Tensor parallel must be a whole number from 1 to 64 GPUs"),
    ({**LLAMA, "recompute": "sometimes"},
     "recompute: Activation recomputation must be one of none, selective, full"),
    ({**LLAMA, "deadline": "2040-01-01"},
     "deadline: Deadline date must be at most 3,650 days away (you gave 2040-01-01"),
    ({**LLAMA, "max_nodes": 513},
     "max_nodes: Largest cluster must be a whole number from 1 to 512 nodes, e.g. 128 "
     "(you gave 513)."),
    ({**LLAMA, "deadline_days": 100_000},
     "deadline_days: Deadline must be a positive number up to 3,650 days from today, e.g. 90 "
     "(you gave 100,000)."),
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


def test_api_422_names_the_field_and_its_range_in_words(client_ana: Client) -> None:
    response = client_ana.post("/api/plans", json.dumps({**LLAMA, "deadline_days": 100_000}),
                               content_type="application/json")
    assert response.status_code == 422
    assert ("deadline_days: Deadline must be a positive number up to 3,650 days from today"
            in response.content.decode())
    assert not PlanScenario.objects.exists()


@pytest.mark.parametrize(("field", "typed", "message"), [
    ("deadline_days", "100000", "Deadline must be a positive number up to 3,650 days from "
     "today, e.g. 90 (you gave 100,000)."),
    ("tokens", "lots", "Training tokens must be a number from 1 to 1e16 tokens, "
     "e.g. 2e12 (you gave &#x27;lots&#x27;)."),
    ("max_nodes", "2.5", "Largest cluster must be a whole number from 1 to 512 nodes, "
     "e.g. 128: a whole number."),
])
def test_form_marks_the_bad_field_with_its_message_beside_it(
    client_ana: Client, field: str, typed: str, message: str
) -> None:
    data = {"workload": "llama2-7b", "tokens": "1e12", field: typed}
    body = client_ana.post("/plans/new", data).content.decode()
    assert f'<p class="field-error" id="id_{field}_error">{message}</p>' in body
    tag = body[body.index(f'id="id_{field}"') - 200:body.index(f'id="id_{field}"') + 200]
    assert 'aria-invalid="true"' in tag and f"id_{field}_error" in tag
    summary = body[body.index('id="error-summary"'):body.index("</ul>", body.index(
        'id="error-summary"'))]
    assert f'href="#id_{field}"' in summary
    assert not PlanScenario.objects.exists()


def test_form_shows_a_scenario_error_beside_the_field_it_names(client_ana: Client) -> None:
    body = client_ana.post("/plans/new", {"workload": "llama2-7b"}).content.decode()
    assert '<p class="field-error" id="id_tokens_error">Give exactly one training goal' in body


def test_a_preset_shows_its_architecture_in_editable_fields(client_ana: Client) -> None:
    body = client_ana.get("/plans/new?workload=llama2-7b&tokens=1e12").content.decode()
    assert "Llama 2 7B: 6.74 billion parameters, 32 layers, hidden size 4,096" in body
    assert 'name="n_layers" value="32"' in body and 'name="ffn_hidden_size" value="11008"' in body


def test_an_edited_preset_architecture_plans_a_variant() -> None:
    raw = {"workload": "llama2-7b", "tokens": 1e12, "n_layers": 40, "hidden_size": 4096}
    data = scenario_from_input(raw, today=TODAY).data
    assert (data["workload"], data["n_layers"], data["ffn_hidden_size"]) == ("", 40, 11008)
    unchanged = scenario_from_input({**raw, "n_layers": 32}, today=TODAY).data
    assert unchanged["workload"] == "llama2-7b" and "n_layers" not in unchanged


def test_every_number_has_a_range_an_example_and_a_plain_rule() -> None:
    for field in SCENARIO_FIELDS:
        if field.kind in ("number", "integer"):
            assert field.minimum is not None and field.maximum is not None, field.name
            assert field.example, field.name
            assert field.rule_text.startswith(f"{field.label} must be "), field.name
            assert "_" not in field.rule_text and "[" not in field.rule_text, field.rule_text
