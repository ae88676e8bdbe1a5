"""One figure per quantity per paragraph (issue 38), on the rendered plan page: a spot-only
plan's advice said "$755,639" and "$755,638" for one total and "884 days" beside "883.5 days";
every paragraph of a feasible plan (cards, storage, power, carbon, goodput) is checked too."""

from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.utils import timezone

from planner.plans import services
from planner.plans.models import PlanScenario
from planner.plans.scenario import scenario_from_input
from tests.planner.plans.paragraphs import paragraphs, twice_rounded

pytestmark = pytest.mark.django_db
LLAMA = {"workload": "llama2-70b", "tokens": 2e12}
CASES = {
    "spot only, 30 days": {**LLAMA, "purchase_options": ["spot"], "deadline_days": 30},
    "whole catalog, 60 days": {**LLAMA, "deadline_days": 60},
    "20 days, $3 M": {**LLAMA, "deadline_days": 20, "budget_usd": 3_000_000},
}


@pytest.fixture(scope="module")
def documents(loaded_catalog: None, django_db_blocker: Any) -> dict[str, dict[str, Any]]:
    found = {}
    with django_db_blocker.unblock():
        for name, raw in CASES.items():
            scenario = scenario_from_input(raw, today=timezone.now().date())
            found[name] = {"inputs": scenario.data,
                           "result": services.plan_compute(scenario=scenario, owner_id=None)}
    return found


def _page(client: Client, user: User, document: dict[str, Any]) -> str:
    plan = PlanScenario.objects.create(owner=user, name="p", inputs=document["inputs"],
                                       result=document["result"], progress_pct=100,
                                       status=PlanScenario.Status.DONE)
    return client.get(f"/plans/{plan.id}").content.decode()


@pytest.mark.parametrize("case", list(CASES))
def test_no_paragraph_prints_one_quantity_in_two_roundings(
        client_ana: Client, user: User, documents: dict[str, dict[str, Any]], case: str) -> None:
    texts = paragraphs(_page(client_ana, user, documents[case]))
    assert len(texts) > 20
    twice = {text: twice_rounded(text) for text in texts if twice_rounded(text)}
    assert not twice, twice


def test_the_spot_only_advice_prints_each_figure_once_and_no_budget(
        client_ana: Client, user: User, documents: dict[str, dict[str, Any]]) -> None:
    result = documents["spot only, 30 days"]["result"]
    would = result["what_would_work"]
    advice = next(t for t in paragraphs(_page(client_ana, user, documents["spot only, 30 days"]))
                  if t.startswith("No option meets"))
    assert "spot capacity cap" in advice and "budget" not in advice  # none was set
    cheapest = f"${would['cheapest_usd']:,.0f}"
    assert advice.count(cheapest) == 2  # the fix's total and "the cheapest costs", one figure
    fastest = f"{would['fastest_days']:,.1f} days"
    assert advice.count(fastest) == 3  # "takes", "at least" and "the fastest option takes"
