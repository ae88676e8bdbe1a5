"""Deleting a plan in a real browser at 390 px: the plan page links to a page that says what
goes, its Delete button removes the plan and the list confirms it; no axe critical or serious
finding on the confirmation page. Screenshot: var/screenshots/plan-delete-confirm-390px.png.
"""


from typing import Any

import pytest
from django.contrib.auth.models import User
from django.utils import timezone

from planner.plans.models import PlanScenario
from planner.plans.scenario import scenario_from_input
from tests.browser.conftest import screenshot
from tests.browser.journeys import axe_findings, sign_in_as_ada
from tests.browser.test_second_hour import PHONE, _inside_viewport

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_plan_is_deleted_from_its_page_after_a_confirmation(
        page_factory: Any, live_server: Any, ada: User) -> None:
    scenario = scenario_from_input({"workload": "llama2-7b", "tokens": 1e11,
                                    "providers": ["aws"]}, today=timezone.now().date())
    plan = PlanScenario.objects.create(owner=ada, name="old experiment", inputs=scenario.data,
                                       status="failed", error="stopped")
    page, base = page_factory(PHONE), live_server.url
    sign_in_as_ada(page, base)
    page.goto(f"{base}/plans/{plan.id}")
    page.click("#delete-link")
    page.wait_for_load_state()
    assert page.url.endswith(f"/plans/{plan.id}/delete")
    assert "old experiment" in page.inner_text("h1")
    _inside_viewport(page, "delete confirmation")
    assert not axe_findings(page)
    screenshot(page, "plan-delete-confirm-390px")
    page.click("#delete-form button[type=submit]")
    page.wait_for_load_state()
    assert page.url.endswith("/plans/")
    assert "Deleted the plan “old experiment”" in page.inner_text("#messages")
    assert not PlanScenario.objects.filter(pk=plan.pk).exists()
