"""Iterating on plans: save a what-if, duplicate into an editable copy, save with a
confirmation, compare 2-4 plans with the differences marked and a chart."""

from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from planner.models import PlanScenario
from planner.plans import services

pytestmark = pytest.mark.django_db
SMALL = {"workload": "llama2-7b", "tokens": 1e11, "providers": ["aws"],
         "purchase_options": ["on_demand"]}


def _done_plan(user: User, capture: Any, **changes: Any) -> PlanScenario:
    with capture(execute=True):
        stored = services.scenario_create(owner_id=user.id, raw={**SMALL, **changes})
    stored.refresh_from_db()
    assert stored.status == "done", stored.error
    return stored


def test_a_whatif_is_saved_as_a_plan_with_a_confirmation(
    client_ana: Client, eager_celery: None, django_capture_on_commit_callbacks: Any
) -> None:
    query = "workload=llama2-7b&tokens=1e11&providers=aws&purchase_options=on_demand"
    page = client_ana.get(f"/plans/whatif?{query}").content.decode()
    assert 'id="save-whatif-form"' in page
    with django_capture_on_commit_callbacks(execute=True):
        response = client_ana.post(f"/plans/whatif/save?{query}", {"name": "7B on AWS"},
                                   follow=True)
    saved = PlanScenario.objects.get()
    assert (saved.name, saved.is_saved, saved.status) == ("7B on AWS", True, "done")
    assert response.redirect_chain[-1][0] == f"/plans/{saved.id}"
    assert "Saved “7B on AWS” to your plans." in response.content.decode()
    assert "7B on AWS" in client_ana.get("/plans/").content.decode()


def test_save_confirms_with_the_name(
    client_ana: Client, user: User, eager_celery: None, django_capture_on_commit_callbacks: Any
) -> None:
    plan = _done_plan(user, django_capture_on_commit_callbacks)
    response = client_ana.post(f"/plans/{plan.id}/save", {"name": "Baseline"}, follow=True)
    assert "Saved “Baseline”: it is kept in your plans." in response.content.decode()
    plan.refresh_from_db()
    assert plan.is_saved and plan.name == "Baseline"


def test_a_name_with_nul_is_not_saved_and_says_why(
    client_ana: Client, user: User, eager_celery: None, django_capture_on_commit_callbacks: Any
) -> None:
    # no database text holds NUL: both saves were a 500 on PostgreSQL
    plan = _done_plan(user, django_capture_on_commit_callbacks)
    response = client_ana.post(f"/plans/{plan.id}/save", {"name": "Base\x00line"}, follow=True)
    assert "Not saved: Must not contain a NUL character" in response.content.decode()
    plan.refresh_from_db()
    assert not plan.is_saved and "\x00" not in plan.name
    query = "workload=llama2-7b&tokens=1e11&providers=aws&purchase_options=on_demand"
    response = client_ana.post(f"/plans/whatif/save?{query}", {"name": "7B\x00"}, follow=True)
    assert "Not saved: Must not contain a NUL character" in response.content.decode()
    assert PlanScenario.objects.count() == 1


def test_duplicate_opens_an_editable_copy_and_runs_nothing(
    client_ana: Client, user: User, eager_celery: None, django_capture_on_commit_callbacks: Any
) -> None:
    plan = _done_plan(user, django_capture_on_commit_callbacks, deadline_days=60,
                      budget_usd=50_000, regions=["us-east-1", "us-west-2"],
                      spot_interruptions_pct_per_month={"aws": 12})
    response = client_ana.get(f"/plans/{plan.id}/duplicate", follow=True)
    body = response.content.decode()
    assert response.redirect_chain[-1][0].startswith("/plans/new?")
    assert PlanScenario.objects.count() == 1
    assert f'value="{plan.name} (copy)"' in body
    assert 'name="deadline_days" value="60"' in body and 'name="budget_usd" value="50000"' in body
    assert 'name="tokens" value="1e+11"' in body
    assert 'name="regions" value="us-east-1,us-west-2"' in body
    assert 'name="spot_interruptions_pct_per_month" value="aws=12"' in body
    assert "change anything, then Plan it" in body


def test_compare_marks_the_inputs_that_differ_and_charts_each_pick(
    client_ana: Client, user: User, eager_celery: None, django_capture_on_commit_callbacks: Any
) -> None:
    first = _done_plan(user, django_capture_on_commit_callbacks)
    second = _done_plan(user, django_capture_on_commit_callbacks, tokens=2e11, budget_usd=1e6)
    response = client_ana.get(f"/plans/compare?id={first.id}&id={second.id}")
    assert response.status_code == 200
    table = response.context["table"]
    differing = {row.label for row in table.inputs if row.is_different}
    assert differing == {"Training tokens (tokens)", "Budget (USD)"}
    body = response.content.decode()
    assert '<td class="differs">1e11 tokens</td>' in body
    assert 'id="compare-figure"' in body and 'data-figure="compare-figure"' in body
    # the cells say "$": the label does not repeat the unit ("Total cost (USD)" before)
    costs = next(row for row in table.outcomes if row.label == "Total cost").values
    assert all(value.startswith("$") for value in costs)
    rows = {row.label: row.values for row in table.outcomes}
    assert all("kg CO2e" in value or "no carbon data" in value
               for value in rows["Emissions of the pick"])
    assert all("kg CO2e" in value for value in rows["Lowest carbon"])
    only = client_ana.get(f"/plans/compare?id={first.id}&id={second.id}&only=differences")
    assert 'class="data compare only-differences"' in only.content.decode()


@pytest.mark.parametrize("count", [1, 5])
def test_compare_needs_two_to_four_plans(client_ana: Client, user: User, count: int) -> None:
    ids = [PlanScenario.objects.create(owner=user, name=f"p{i}", inputs=SMALL).id
           for i in range(count)]
    response = client_ana.get("/plans/compare?" + "&".join(f"id={i}" for i in ids))
    assert response.status_code == 400
    assert "Tick 2 to 4 of your plans" in response.content.decode()


def test_compare_refuses_another_users_plan(client_ana: Client, user: User) -> None:
    mine = PlanScenario.objects.create(owner=user, name="mine", inputs=SMALL)
    bob = User.objects.create_user("bob", password="pw-bob-123")
    theirs = PlanScenario.objects.create(owner=bob, name="theirs", inputs=SMALL)
    assert client_ana.get(f"/plans/compare?id={mine.id}&id={theirs.id}").status_code == 404
    assert client_ana.get(f"/plans/{theirs.id}/duplicate").status_code == 404


def test_plan_list_shows_name_model_goal_status_and_compare_boxes(
    client_ana: Client, user: User
) -> None:
    PlanScenario.objects.create(owner=user, name="Baseline", inputs=SMALL, is_saved=True)
    body = client_ana.get("/plans/").content.decode()
    assert "Baseline" in body and "Llama 2 7B" in body and "100 B tokens" in body
    assert 'type="checkbox" name="id"' in body and "Queued" in body and "saved" in body
