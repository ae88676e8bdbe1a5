"""Forms people can fill, at 390 and 1366 px: a bad value is marked at its field with a plain
message, a preset shows its architecture, "Duplicate" opens an editable copy, and two plans
compare side by side with their differences highlighted and a chart."""

from typing import Any

import pytest
from django.contrib.auth.models import User
from django.utils import timezone
from playwright.sync_api import Page

from planner.models import PlanScenario
from planner.plans.scenario import scenario_from_input
from planner.plans.tasks import run_plan_task
from tests.browser.journeys import fits_width, screenshot, sign_in, sized_page

__all__ = ["sized_page"]
pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
SMALL = {"workload": "llama2-7b", "tokens": 1e11, "providers": ["aws"],
         "purchase_options": ["on_demand"]}


def test_a_bad_field_is_marked_with_its_message_beside_it(
    sized_page: Page, live_server: Any, ada: User
) -> None:
    page = sized_page
    sign_in(page, live_server.url, "/plans/new", "ada", "pw-ada-123")
    page.select_option("#id_workload", "llama2-7b")
    page.fill("#id_tokens", "2e12")
    page.fill("#id_deadline_days", "100000")
    page.click("form.plan-form button[type=submit]")
    field = page.locator("#id_deadline_days")
    assert field.get_attribute("aria-invalid") == "true"
    message = page.locator("#id_deadline_days_error")
    assert message.inner_text() == ("Deadline must be a positive number up to 3,650 days "
                                    "from today, e.g. 90 (you gave 100,000).")
    assert "id_deadline_days_error" in (field.get_attribute("aria-describedby") or "")
    # The message sits beside its field (just below it, same column), not in a list far away.
    field_box, message_box = field.bounding_box(), message.bounding_box()
    assert field_box and message_box
    assert 0 <= message_box["y"] - (field_box["y"] + field_box["height"]) < 40
    assert abs(message_box["x"] - field_box["x"]) < 5
    summary_link = page.locator("#error-summary a[href='#id_deadline_days']")
    assert summary_link.is_visible()
    assert fits_width(page, "form.plan-form")
    assert not PlanScenario.objects.exists()
    screenshot(page, "plan-form-error")


def test_a_preset_shows_its_architecture_in_editable_fields(
    sized_page: Page, live_server: Any, ada: User
) -> None:
    page = sized_page
    sign_in(page, live_server.url, "/plans/new", "ada", "pw-ada-123")
    page.select_option("#id_workload", "llama3-70b")
    summary = page.locator("#preset-summary")
    assert summary.is_visible()
    assert summary.inner_text().startswith("Llama 3 70B: 70.55 billion parameters, 80 layers")
    assert page.input_value("#id_n_layers") == "80"
    assert page.input_value("#id_hidden_size") == "8192"
    assert page.input_value("#id_n_heads") == "64"
    assert page.input_value("#id_seq_len") == "8192"
    page.fill("#id_n_layers", "60")  # editable: a variant of the preset
    assert "variant of Llama 3 70B" in summary.inner_text()
    assert fits_width(page, "form.plan-form")
    screenshot(page, "plan-form-preset")


def test_duplicate_opens_an_editable_copy(sized_page: Page, live_server: Any, ada: User) -> None:
    scenario = scenario_from_input({**SMALL, "deadline_days": 45}, today=timezone.now().date())
    plan = PlanScenario.objects.create(owner=ada, name="Baseline", inputs=scenario.data)
    page = sized_page
    sign_in(page, live_server.url, f"/plans/{plan.id}", "ada", "pw-ada-123")
    page.click("#duplicate-link")
    page.wait_for_url("**/plans/new?*")
    assert "change anything, then Plan it" in page.inner_text("#messages")
    assert page.input_value("#id_name") == "Baseline (copy)"
    assert page.input_value("#id_deadline_days") == "45"
    assert page.input_value("#id_tokens") == "1e+11"
    assert PlanScenario.objects.count() == 1  # nothing ran
    page.fill("#id_deadline_days", "30")
    screenshot(page, "plan-duplicate")


def test_two_plans_compare_with_differences_highlighted(
    sized_page: Page, live_server: Any, ada: User
) -> None:
    for name, changes in (("Baseline", {}), ("Bigger", {"tokens": 3e11, "budget_usd": 2e6})):
        scenario = scenario_from_input({**SMALL, **changes}, today=timezone.now().date())
        plan = PlanScenario.objects.create(owner=ada, name=name, inputs=scenario.data)
        run_plan_task(plan.id)  # the worker's task, called directly
    page = sized_page
    sign_in(page, live_server.url, "/plans/", "ada", "pw-ada-123")
    for box in page.locator("#plan-list input[type=checkbox]").all():
        box.check()
    page.click("#compare-form button[type=submit]")
    page.wait_for_url("**/plans/compare?*")
    differing = page.locator("#compare-inputs tr.differs th").all_inner_texts()
    assert differing == ["Training tokens (tokens)", "Budget (USD)"]
    cell = page.locator("#compare-inputs tr.differs td.differs").first
    assert cell.evaluate("el => getComputedStyle(el).backgroundColor") != "rgba(0, 0, 0, 0)"
    assert page.locator("#compare-inputs tr.same").count() >= 3
    costs = page.locator("#compare-outcomes tr", has_text="Total cost").locator("td")
    assert costs.count() == 2 and all(t.startswith("$") for t in costs.all_inner_texts())
    page.wait_for_selector('[data-figure="compare-figure"][data-drawn="true"] .main-svg')
    assert page.locator("#compare-chart .scatterlayer .trace").count() == 2
    assert fits_width(page, "#compare-inputs") or page.eval_on_selector(
        ".table-wrap", "el => getComputedStyle(el).overflowX") == "auto"
    screenshot(page, "plan-compare")
    page.click("#only-differences")
    page.wait_for_url("**only=differences*")
    assert page.locator("#compare-inputs tbody tr:visible").count() == 2
