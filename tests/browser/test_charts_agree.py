"""Charts agree with tables (issue 20): the instance page draws each purchase and payment
option as its own bar beside the others, never stacked, with ticks and units on its axes."""

from typing import Any

import pytest
from playwright.sync_api import Page

from tests.browser.journeys import screenshot

pytestmark = pytest.mark.browser

BARS = """() => {
  const el = document.querySelector('[data-figure="chart-instance"]');
  return {barmode: el._fullLayout.barmode,
          traces: el.data.map(t => ({name: t.name, x: Array.from(t.x), y: Array.from(t.y)})),
          yticks: Array.from(el.querySelectorAll('.ytick text')).map(t => t.textContent),
          ytitle: (el.querySelector('.ytitle') || {}).textContent};
}"""


def test_instance_page_draws_payment_options_side_by_side(chromium_page: Page,
                                                           live_server: Any) -> None:
    page = chromium_page
    page.goto(f"{live_server.url}/instances/aws/p4d.24xlarge/")
    page.wait_for_selector('[data-figure="chart-instance"] .barlayer .point')
    chart = page.evaluate(BARS)
    assert chart["barmode"] == "group"
    names = [trace["name"] for trace in chart["traces"]]
    assert len(names) == len(set(names)) and len(names) > 3
    assert any(", all upfront" in name for name in names), names
    for trace in chart["traces"]:
        assert len(trace["x"]) == len(set(trace["x"])), f"two bars of {trace['name']} stack"
    # No reservation bar stands above on-demand in its region (stacked bars did: ~$226/h).
    on_demand = {x: y for t in chart["traces"] if t["name"] == "On-demand"
                 for x, y in zip(t["x"], t["y"], strict=True)}
    for trace in chart["traces"]:
        if trace["name"].startswith("Reserved"):
            for region, usd in zip(trace["x"], trace["y"], strict=True):
                if region in on_demand:
                    assert usd < on_demand[region], (trace["name"], region)
    assert len(chart["yticks"]) >= 2 and "$/instance-hour" in chart["ytitle"]
    screenshot(page, "instance-p4d-payment-options-side-by-side", is_full_page=False)


LLAMA = {"workload": "llama2-7b", "tokens": 1e12, "providers": ["aws", "gcp"],
         "purchase_options": ["on_demand", "spot"], "deadline_days": 30}


def _stored_plan(owner: Any, name: str, raw: dict[str, Any]) -> Any:
    from django.utils import timezone

    from planner.plans import services
    from planner.plans.models import PlanScenario
    from planner.plans.scenario import scenario_from_input

    scenario = scenario_from_input(raw, today=timezone.now().date())
    result = services.plan_compute(scenario=scenario, owner_id=None)
    return PlanScenario.objects.create(owner=owner, name=name, inputs=scenario.data,
                                       result=result, status=PlanScenario.Status.DONE,
                                       progress_pct=100)


@pytest.mark.django_db(transaction=True)
def test_plan_list_columns_and_an_infeasible_plan_without_empty_charts(
        chromium_page: Page, live_server: Any) -> None:
    from django.contrib.auth.models import User

    from tests.browser.journeys import sign_in

    ada = User.objects.create_user("ada", password="pw-ada-123")
    good = _stored_plan(ada, "Llama in a month", LLAMA)
    bad = _stored_plan(ada, "Llama for $1,000", {**LLAMA, "budget_usd": 1000})
    page = chromium_page
    sign_in(page, live_server.url, "/plans/", "ada", "pw-ada-123")
    headers = page.locator("#plan-list thead th").all_inner_texts()
    for column in ("Cost (first card)", "Time to train", "Miss chance", "Feasible"):
        assert column in headers
    row = page.locator("#plan-list tbody tr", has_text="Llama in a month")
    assert row.locator(".c-cost").inner_text().startswith("$")
    assert row.locator(".c-miss").inner_text().endswith("%")
    assert row.locator(".c-feasible").inner_text().startswith("yes:")
    other = page.locator("#plan-list tbody tr", has_text="Llama for $1,000")
    assert other.locator(".c-feasible").inner_text() == "no option meets the limits"
    screenshot(page, "plan-list-cost-time-miss-feasible", is_full_page=False)

    page.goto(f"{live_server.url}/plans/{bad.id}")
    fix = page.locator("#combined-fix").inner_text()
    assert fix.startswith("For 30.0 days you need at least") and " GPUs and $" in fix
    assert page.locator(".js-plotly-plot").count() == 0
    assert page.locator('[data-figure^="plan-figure"]').count() == 0
    assert page.locator(f'a[href*="/plans/{bad.id}/report."]').count() == 0
    assert page.locator("#plan-table").count() == 0  # no empty table either
    screenshot(page, "plan-infeasible-one-fix-no-chart", is_full_page=False)

    page.goto(f"{live_server.url}/plans/{good.id}")
    page.wait_for_selector('[data-figure="plan-figure-0"] .main-svg')
    assert page.locator(".js-plotly-plot").count() >= 1
    assert page.locator(f'a[href*="/plans/{good.id}/report."]').count() >= 1
