"""Plans say one thing (issue 20): the plan list shows each plan's cost, time, miss chance and
feasibility; compare shows the miss chance; an infeasible plan shows one combined fix and no
chart or export; the miss threshold is a scenario input like any other."""

import re
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.utils import timezone

from planner.core import formatting as fmt
from planner.plans import services
from planner.plans.core.fields import FIELDS_BY_NAME
from planner.plans.models import PlanScenario
from planner.plans.presenters import assumption_rows
from planner.plans.scenario import scenario_from_input

pytestmark = pytest.mark.django_db
LLAMA = {"workload": "llama2-7b", "tokens": 1e12, "providers": ["aws", "gcp"],
         "purchase_options": ["on_demand", "spot"], "deadline_days": 30}


def _compute(raw: dict[str, Any]) -> dict[str, Any]:
    scenario = scenario_from_input(raw, today=timezone.now().date())
    return {"inputs": scenario.data,
            "result": services.plan_compute(scenario=scenario, owner_id=None)}


@pytest.fixture(scope="module")
def documents(loaded_catalog: None, django_db_blocker: Any) -> dict[str, dict[str, Any]]:
    with django_db_blocker.unblock():
        return {"feasible": _compute(LLAMA),
                "infeasible": _compute({**LLAMA, "budget_usd": 1000})}


def _stored(user: User, document: dict[str, Any], name: str) -> PlanScenario:
    return PlanScenario.objects.create(owner=user, name=name, inputs=document["inputs"],
                                       result=document["result"], progress_pct=100,
                                       status=PlanScenario.Status.DONE)


def test_plan_list_shows_cost_time_miss_chance_and_feasibility(
        client_ana: Client, user: User, documents: dict[str, dict[str, Any]]) -> None:
    good = _stored(user, documents["feasible"], "thirty days")
    _stored(user, documents["infeasible"], "thousand dollars")
    page = client_ana.get("/plans/").content.decode()
    head = page.split('id="plan-list"', 1)[1].split("</thead>", 1)[0]
    for column in ("Cost (first card)", "Time to train", "Miss chance", "Feasible"):
        assert column in head
    pick = good.result["pick"]
    row = page.split("thirty days", 1)[1].split("</tr>", 1)[0]
    assert f'<td class="num c-cost">{fmt.usd(pick["total_usd"])}</td>' in row
    assert f'<td class="num c-time">{fmt.duration(pick["time_to_train_hours"])}</td>' in row
    assert f'<td class="num c-miss">{fmt.percent(pick["miss_probability"])}</td>' in row
    assert f'yes: {fmt.count(good.result["n_feasible"])} options' in row
    assert "<td>1.0 T tokens</td>" in row  # the goal as the plan's name says it, not '1e12'
    bad = page.split("thousand dollars", 1)[1].split("</tr>", 1)[0]
    assert "no option meets the limits" in bad and 'c-cost">—<' in bad


def test_plan_list_outcome_follows_a_rerun(
        client_ana: Client, user: User, documents: dict[str, dict[str, Any]]) -> None:
    # The list reads each plan's first card once per plan version (the result is megabytes):
    # a re-run with another outcome shows at once.
    plan = _stored(user, documents["feasible"], "rerun me")
    before = fmt.usd(plan.result["pick"]["total_usd"])
    assert before in client_ana.get("/plans/").content.decode()
    result = {**plan.result, "pick": {**plan.result["pick"], "total_usd": 123_456.0}}
    PlanScenario.objects.filter(pk=plan.pk).update(result=result, finished_at=timezone.now(),
                                                   attempts=2)
    row = client_ana.get("/plans/").content.decode().split("rerun me", 1)[1].split("</tr>")[0]
    assert fmt.usd(123_456.0) in row and before not in row


def test_compare_shows_the_chance_of_missing(
        client_ana: Client, user: User, documents: dict[str, dict[str, Any]]) -> None:
    a = _stored(user, documents["feasible"], "a")
    b = _stored(user, documents["infeasible"], "b")
    page = client_ana.get(f"/plans/compare?id={a.id}&id={b.id}").content.decode()
    assert "Chance of missing the deadline or budget" in page
    assert fmt.percent(a.result["pick"]["miss_probability"]) in page


def test_an_infeasible_plan_shows_one_combined_fix_and_no_chart_or_export(
        client_ana: Client, user: User, documents: dict[str, dict[str, Any]]) -> None:
    plan = _stored(user, documents["infeasible"], "too cheap")
    fix = plan.result["what_would_work"]["fix"]
    found = re.fullmatch(r"For 30\.0 days you need at least ([\d,]+) GPUs and \$([\d,]+) \(.+\)\.",
                         fix)
    assert found, fix
    # More than the $1,000 budget: the fix changes the budget and names the GPUs it buys.
    assert int(found.group(2).replace(",", "")) > 1000
    page = client_ana.get(f"/plans/{plan.id}").content.decode()
    assert f'<strong id="combined-fix">{fix}</strong>' in page.replace("&#x27;", "'")
    assert 'data-figure="plan-figure' not in page
    assert f"/plans/{plan.id}/report.xlsx" not in page
    response = client_ana.get(f"/plans/{plan.id}/report.csv")
    assert response.status_code == 400 and "nothing to export" in response.content.decode()
    assert client_ana.get(f"/plans/{_stored(user, documents['feasible'], 'ok').id}"
                          "/report.csv").status_code == 200


def test_the_miss_threshold_is_a_scenario_input(client_ana: Client) -> None:
    field = FIELDS_BY_NAME["miss_threshold_pct"]
    assert (field.minimum, field.maximum, field.unit) == (0.0, 100.0, "%")
    assert 'name="miss_threshold_pct"' in client_ana.get("/plans/new").content.decode()
    with pytest.raises(ValueError, match="miss_threshold_pct"):
        scenario_from_input({**LLAMA, "miss_threshold_pct": 150}, today=timezone.now().date())


def test_a_whatif_from_a_saved_plan_shows_its_delta(
        client_ana: Client, user: User, documents: dict[str, dict[str, Any]]) -> None:
    saved = _stored(user, documents["feasible"], "thirty days")
    page = client_ana.get(f"/plans/{saved.id}").content.decode()
    assert f'<input type="hidden" name="from" value="{saved.id}">' in page
    query = "workload=llama2-7b&tokens=1e12&providers=aws&providers=gcp&deadline_days=20"
    whatif = client_ana.get(f"/plans/whatif?{query}&from={saved.id}").content.decode()
    found = re.search(r'id="whatif-delta">Against your saved plan “thirty days”: '
                      r'([+−])\$([\d,.]+) total, ([+−])(.+?) to train, miss chance '
                      r'([\d.]+%) → ([\d.]+%)\.</p>', whatif.replace("&#x27;", "'"))
    assert found, whatif[:2000]
    assert found.group(5) == fmt.percent(saved.result["pick"]["miss_probability"])
    other = User.objects.create_user("bob", password="pw-bob-123")
    theirs = _stored(other, documents["feasible"], "bob's plan")
    assert "whatif-delta" not in client_ana.get(
        f"/plans/whatif?{query}&from={theirs.id}").content.decode()


def test_the_plan_page_counts_with_thousands_separators(
        client_ana: Client, user: User, documents: dict[str, dict[str, Any]]) -> None:
    document = documents["feasible"]
    plan = _stored(user, document, "counts")
    # a plan with a thousand-odd stale options (the worked example read '1038')
    plan.result = {**plan.result, "prices": {**plan.result["prices"], "n_stale": 1038},
                   "infeasible": {"misses deadline": 20539}}
    plan.save(update_fields=["result"])
    page = client_ana.get(f"/plans/{plan.id}").content.decode()
    assert "1,038 options use a stale price" in page and "option(s)" not in page
    assert "Left out: 20,539 misses deadline." in page
    assert "Emissions are location-based. Whole-run GPU-hours" in page  # two sentences
    # each card names its price's source and date, not only "listed price, 196 days old"
    first = plan.result["recommendations"][0]["row_index"]
    pick = next(o for o in plan.result["options"] if o["row_index"] == first)
    assert (f'<p class="card-price small">{fmt.usd(pick["usd_per_hour"])}/instance-hour, '
            f'{pick["basis"]}: {pick["source"]}, as of {pick["as_of"]}</p>') in page
    assert 'title="Model FLOPs utilisation' in page
    assert f"({fmt.count(document['result']['n_feasible'])} ranked)" in page


def test_the_table_writes_every_overhead_with_one_decimal(
        client_ana: Client, user: User, documents: dict[str, dict[str, Any]]) -> None:
    plan = _stored(user, documents["feasible"], "overheads")
    page = client_ana.get(f"/plans/{plan.id}").content.decode()
    cells = re.findall(r'<td class="c-goodput"[^>]*>([^<]*)<', page)
    assert cells and all(re.match(r"\+\d[\d,]*\.\d % GPU-hours, \$", c) for c in cells), cells


def test_the_assumptions_read_in_one_format_and_say_bytes(
        client_ana: Client, user: User, documents: dict[str, dict[str, Any]]) -> None:
    plan = _stored(user, documents["feasible"], "assumptions")
    page = client_ana.get(f"/plans/{plan.id}").content.decode()
    table = page.split('aria-label="Storage and egress prices"', 1)[1].split("</table>", 1)[0]
    # every price to four decimals ('0.023' beside '0.0184' and '0.0' before)
    cells = re.findall(r'<td class="num">([^<]*)</td>', table)
    assert "0.0230" in cells and "0.0000" in cells
    assert all(re.fullmatch(r"\d+\.\d{4}|\d+\.\d|—", c) for c in cells), cells
    assert "× 14 bytes (bf16 weights" in page and "× 2 bytes (uint16 token ids)" in page
    assert "storage kept 1 month after the run" in page
    # each provider's rates say what they price, their basis and date (not a source file)
    assert ("listed: S3 Standard us-east-1, first 50 TB; data transfer out, first 10 TB a "
            "month, as of 2026-01") in table
    assert "estimated: Blob Storage Hot LRS East US" in table
    assert "planner/core/cloud.py" not in page


def test_a_plan_without_deadline_or_budget_has_no_miss_chance_on_the_list_or_compare(
        client_ana: Client, user: User, documents: dict[str, dict[str, Any]]) -> None:
    # the list and compare said '0.0%' where the plan page says n/a
    document = documents["feasible"]
    inputs = {k: v for k, v in document["inputs"].items() if k != "deadline_days"}
    free = _stored(user, {**document, "inputs": inputs}, "no limits")
    limited = _stored(user, document, "thirty days")
    row = client_ana.get("/plans/").content.decode().split("no limits", 1)[1].split("</tr>")[0]
    assert '<td class="num c-miss">n/a</td>' in row
    page = client_ana.get(f"/plans/compare?id={free.id}&id={limited.id}").content.decode()
    assert "n/a (no deadline or budget)" in page
    assert fmt.percent(limited.result["pick"]["miss_probability"]) in page


def test_edited_storage_or_egress_rates_are_called_the_users_own() -> None:
    rows = assumption_rows({"storage_usd_per_gb_month": {"aws": 0.05, "gcp": 0.020},
                            "egress_usd_per_gb": {"aws": 0.09, "gcp": 0.12}})
    notes = {row["provider"]: row["rates_note"] for row in rows}
    assert notes["aws"] == "your values (edited in the what-if form)"
    assert notes["gcp"].startswith("listed: Cloud Storage Standard us-central1")
