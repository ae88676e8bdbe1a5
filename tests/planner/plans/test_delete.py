"""Deleting a plan: the page asks first, then removes it and its sweep parts; the API answers
204; nobody else can delete it; reports made from it stay."""

import pytest
from django.contrib.auth.models import User
from django.test import Client

from planner.models import PlanScenario
from planner.plans.models import PlanSweepChunk
from planner.plans.scenario import scenario_from_input
from planner.reports.models import Report
from tests.planner.plans.test_plans import LLAMA, TODAY

pytestmark = pytest.mark.django_db


def _plan(user: User, name: str = "to delete") -> PlanScenario:
    scenario = scenario_from_input(LLAMA, today=TODAY)
    plan = PlanScenario.objects.create(owner=user, name=name, inputs=scenario.data,
                                       status="running")
    PlanSweepChunk.objects.create(scenario=plan, index=0, n_chunks=1, instance_keys=[1])
    return plan


def test_deleting_a_plan_asks_first_then_removes_it_and_its_parts(
        user: User, client_ana: Client) -> None:
    plan = _plan(user)
    report = Report.objects.create(owner=user, kind="plan", subject_id=plan.id, fmt="csv",
                                   document={})
    confirm = client_ana.get(f"/plans/{plan.id}/delete")
    body = confirm.content.decode()
    assert confirm.status_code == 200 and "to delete" in body and "still running" in body
    assert PlanScenario.objects.filter(pk=plan.pk).exists()

    other = Client()
    other.force_login(User.objects.create_user("mallory", password="x" * 12))
    assert other.post(f"/plans/{plan.id}/delete").status_code == 404
    assert other.delete(f"/api/plans/{plan.id}").status_code == 404
    assert PlanScenario.objects.filter(pk=plan.pk).exists()

    done = client_ana.post(f"/plans/{plan.id}/delete", follow=True)
    assert done.redirect_chain[-1][0] == "/plans/"
    assert "Deleted the plan “to delete”" in done.content.decode()
    assert not PlanScenario.objects.filter(pk=plan.pk).exists()
    assert not PlanSweepChunk.objects.filter(scenario_id=plan.pk).exists()
    assert Report.objects.filter(pk=report.pk).exists()  # a report is its own document
    assert client_ana.get(f"/plans/{plan.id}").status_code == 404


def test_the_api_deletes_a_plan_with_204(user: User, client_ana: Client) -> None:
    plan = _plan(user)
    assert client_ana.delete(f"/api/plans/{plan.id}").status_code == 204
    assert not PlanScenario.objects.filter(pk=plan.pk).exists()
    assert client_ana.delete(f"/api/plans/{plan.id}").status_code == 404
    assert client_ana.get(f"/api/plans/{plan.id}").status_code == 404
