"""The AWS g5 family (A10G) is plannable from its published specs, and every A10G option says
it is planned at the FP32 CUDA-core rate (tensor-core rates unpublished) and uncalibrated."""

import json
from datetime import date
from typing import Any

import pytest
from django.core.management import call_command

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("loaded_catalog")]
ARGS = ("--workload", "mpt-125m", "--tokens", "2.5e9", "--providers", "aws",
        "--gpus", "a10g-pcie-24gb")
NOTE = "planned at the FP32 CUDA-core rate (31.52 TFLOPS)"


@pytest.fixture(scope="module")
def plan_json(django_db_blocker: Any) -> dict[str, Any]:
    """One A10G plan for the module's JSON checks (a sweep and Monte Carlo each time)."""
    from io import StringIO

    out = StringIO()
    with django_db_blocker.unblock():
        call_command("plan", *ARGS, "--json", stdout=out)
    document: dict[str, Any] = json.loads(out.getvalue())
    return document


def test_a_small_model_on_a10g_gets_priced_g5_options(plan_json: dict[str, Any]) -> None:
    result = plan_json["result"]
    assert "no_fit" not in result
    options = result["options"]
    assert result["n_feasible"] > 0 and options
    assert {o["instance_type"].split(".")[0] for o in options} == {"g5"}
    assert all(o["gpu"] == "A10G PCIe-24GB" and o["usd_per_hour"] > 0 for o in options)
    assert {"g5.xlarge", "g5.12xlarge", "g5.48xlarge"} <= {o["instance_type"] for o in options}
    assert all(o["tokens_per_second"] > 0 and o["precision"] == "fp32" for o in options)


def test_every_a10g_option_says_fp32_lower_bound_and_uncalibrated(
    plan_json: dict[str, Any]
) -> None:
    result = plan_json["result"]
    options = result["options"]
    assert {o["calibration_status"] for o in options} == {"uncalibrated"}
    assert all(NOTE in o["rate_note"] and "lower bound" in o["rate_note"] for o in options)
    assert result["recommendations"]
    assert all(NOTE in card["why"] and "uncalibrated" in card["why"]
               for card in result["recommendations"])


def test_the_cli_table_labels_every_a10g_row(capsys: Any) -> None:
    call_command("plan", *ARGS, "--top", "5")
    lines = capsys.readouterr().out.splitlines()
    header = next(i for i, line in enumerate(lines) if line.split()[:2] == ["Rank", "Provider"])
    rows = lines[header + 1:]
    assert len(rows) == 5
    assert all("uncalibrated" in row and NOTE in row for row in rows)


def test_the_plan_page_shows_the_note_on_every_a10g_row(client: Any,
                                                        django_user_model: Any) -> None:
    user = django_user_model.objects.create_user("ana", password="pw-ana-123")
    client.force_login(user)
    response = client.get("/plans/whatif", {"workload": "mpt-125m", "tokens": "2.5e9",
                                            "providers": "aws", "gpus": "a10g-pcie-24gb"})
    body = response.content.decode()
    assert response.status_code == 200
    table = body.split('id="plan-table"', 1)[1].split("</table>", 1)[0]
    n_rows = table.count("<tr>") - 1  # the header row
    assert n_rows > 0
    assert table.count("Planned at the FP32 CUDA-core rate (31.52 TFLOPS)") == n_rows
    assert table.count("status-uncalibrated") == n_rows
    assert "speed a lower bound" in body.split('id="plan-results"', 1)[0]


def test_a_plan_without_a10g_has_no_rate_note() -> None:
    from planner.plans import services
    from planner.plans.scenario import scenario_from_input

    raw = {"workload": "mpt-125m", "tokens": 2.5e9, "providers": ["aws"],
           "gpus": ["a10-pcie-24gb", "l4-pcie-24gb"], "purchase_options": ["on_demand"]}
    document = services.plan_compute(
        scenario=scenario_from_input(raw, today=date(2026, 12, 1)), owner_id=None)
    assert document["options"] and all(o["rate_note"] == "" for o in document["options"])


def test_the_report_names_the_fp32_lower_bound(plan_json: dict[str, Any]) -> None:
    from planner.reports.core.plan_report import report_from_plan

    report = report_from_plan(plan_json["result"], inputs=plan_json["inputs"], name="g5",
                              subject_id=0, generated_at="2026-12-01T00:00:00")
    assert any(NOTE in caveat for caveat in report.caveats)
    options = next(t for t in report.tables if t.key == "options")
    column = [c.key for c in options.columns].index("rate_note")
    assert options.rows and all(NOTE in str(row[column]) for row in options.rows)


def test_the_compare_page_names_the_fp32_lower_bound(client: Any, django_user_model: Any,
                                                      plan_json: dict[str, Any]) -> None:
    from planner.models import PlanScenario

    user = django_user_model.objects.create_user("ana", password="pw-ana-123")
    client.force_login(user)
    ids = [PlanScenario.objects.create(owner=user, name=f"g5 {i}", inputs=plan_json["inputs"],
                                       status="done", result=plan_json["result"]).id
           for i in range(2)]
    response = client.get(f"/plans/compare?id={ids[0]}&id={ids[1]}")
    assert response.status_code == 200
    times = next(row for row in response.context["table"].outcomes
                 if "uncalibrated" in row.values[0]).values
    assert all(f"uncalibrated; {NOTE}" in value for value in times)


def test_bf16_on_a10g_names_the_missing_rate_not_memory() -> None:
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="precision: no allowed GPU has a published bf16 rate "
                                           r"\(A10G PCIe-24GB\)"):
        call_command("plan", *ARGS, "--precision", "bf16")


def test_a_stored_bf16_a10g_plan_points_at_the_precision_field() -> None:
    from planner.plans import services
    from planner.plans.scenario import scenario_from_input

    raw = {"workload": "mpt-125m", "tokens": 2.5e9, "providers": ["aws"],
           "gpus": ["a10g-pcie-24gb"], "layout": {"precision": "bf16"}}
    scenario = scenario_from_input(raw, today=date(2026, 12, 1))
    simulator = services.plan_simulator(scenario=scenario, owner_id=None)
    found = services.plan_configurations(scenario=scenario, simulator=simulator)
    no_fit = services.plan_document(scenario=scenario, simulator=simulator, found=found)["no_fit"]
    assert no_fit["field"] == "precision" and "bf16" in no_fit["message"]
    # at fp32 the same GPUs plan
    raw["layout"] = {"precision": "fp32"}
    assert services.plan_compute(scenario=scenario_from_input(raw, today=date(2026, 12, 1)),
                                 owner_id=None)["options"]
