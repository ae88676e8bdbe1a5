"""The second hour in a real browser (390 and 1366 px): the worked example without an account,
sign-up returning to where it started, the prices explorer sorted by $/GPU-hour and its column
picker, and axe-core on the main pages: no critical or serious finding. Screenshots go to
var/screenshots/.
"""

import re
from typing import Any

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import Page

from planner.plans.example import EXAMPLE_NAME
from planner.plans.models import PlanScenario
from tests.browser.conftest import screenshot
from tests.browser.journeys import axe_findings, sign_in_as_ada

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PHONE, LAPTOP = 390, 1366
# The main pages, signed in (the plan page is the user's copy of the worked example).
MAIN_PAGES = {
    "home": "/", "catalog": "/gpus/", "compare": "/compare/?gpu=h100-sxm5-80gb&gpu=a100-sxm4-80gb",
    "prices": "/prices/", "instance": "/instances/aws/p4d.24xlarge/", "plan-new": "/plans/new",
    "plan-list": "/plans/", "simulation-new": "/simulations/new",
    "accuracy": "/simulations/accuracy", "history-upload": "/history/upload",
    "reports": "/reports/", "tokens": "/accounts/tokens/",
}
PAGE_WIDTH_JS = "[document.documentElement.scrollWidth, window.innerWidth]"


def _inside_viewport(page: Page, name: str) -> None:
    scroll_width, inner_width = page.evaluate(PAGE_WIDTH_JS)
    assert scroll_width <= inner_width, f"{name} is {scroll_width} px wide in {inner_width} px"


@pytest.mark.parametrize("width", [PHONE, LAPTOP])
def test_a_visitor_sees_the_example_then_signs_up_and_returns_to_it(
    page_factory: Any, live_server: Any, width: int
) -> None:
    page, base = page_factory(width), live_server.url
    page.goto(f"{base}/")
    page.click("#example-link")
    page.wait_for_url("**/plans/example")
    page.wait_for_selector("#plan-chart-0 .main-svg")
    assert EXAMPLE_NAME in page.inner_text("h1")
    assert page.locator("article.card").count() >= 3
    assert page.locator("#plan-table tbody tr").count() >= 10
    assert page.locator("#save-whatif-form, #save-form, .plan-form").count() == 0  # read-only
    cta = page.locator("#signup-cta")
    assert cta.is_visible() and cta.inner_text() == "Sign up to save and change it"
    _inside_viewport(page, "example")
    screenshot(page, f"anonymous-example-{width}")

    cta.click()
    page.wait_for_url("**/accounts/signup/?next=/plans/example")
    _inside_viewport(page, "signup")
    screenshot(page, f"signup-{width}")
    name = f"grace{width}"
    page.fill("#id_username", name)
    page.fill("#id_password1", "a-long-pass-42x")
    page.fill("#id_password2", "a-long-pass-42x")
    page.click("#signup-form button[type=submit]")
    page.wait_for_url(re.compile(r"/plans/\d+$"))  # back at the example, as her own copy
    page.wait_for_selector('[data-card="cheapest_meeting_deadline"]')
    assert PlanScenario.objects.filter(owner__username=name, name=EXAMPLE_NAME).count() == 1
    assert page.locator("#save-form").is_visible()
    assert name in page.inner_text("#account")


@pytest.mark.parametrize("width", [PHONE, LAPTOP])
def test_prices_sort_by_gpu_hour_and_the_column_picker_is_kept(
    page_factory: Any, live_server: Any, ada: User, width: int
) -> None:
    page, base = page_factory(width), live_server.url
    sign_in_as_ada(page, base)
    page.goto(f"{base}/prices/?provider=aws")
    cells = page.locator("#price-table td[data-usd-per-gpu-hour]")
    values = [float(v) for v in cells.evaluate_all(
        "cells => cells.map(c => c.dataset.usdPerGpuHour)")]
    assert len(values) == 100 and values == sorted(values)  # cheapest first by default
    page.click('#price-table th.c-usd_per_gpu_hour a')  # a second click: dearest first
    page.wait_for_url("**sort=-usd_per_gpu_hour**")
    assert "provider=aws" in page.url
    values = [float(v) for v in cells.evaluate_all(
        "cells => cells.map(c => c.dataset.usdPerGpuHour)")]
    assert values == sorted(values, reverse=True)
    assert page.get_attribute("#price-table th.c-usd_per_gpu_hour", "aria-sort") == "descending"
    _inside_viewport(page, "prices")
    screenshot(page, f"prices-sorted-{width}")

    page.click("#price-columns summary")
    with page.expect_navigation():
        page.click("label[for=pcol-source]")  # untick: applied at once, filters kept
    assert "provider=aws" in page.url and "sort=-usd_per_gpu_hour" in page.url
    assert page.locator("#price-table th.c-source").count() == 0
    page.click("#price-columns summary")
    with page.expect_navigation():
        page.click("label[for=pcol-upfront_usd]")
    assert page.locator("#price-table th.c-upfront_usd").is_visible()
    page.goto(f"{base}/prices/")  # another visit: her choice is kept
    assert page.locator("#price-table th.c-source").count() == 0
    assert page.locator("#price-table th.c-upfront_usd").count() == 1
    screenshot(page, f"prices-columns-{width}")


@pytest.mark.parametrize("width", [PHONE, LAPTOP])
def test_axe_finds_nothing_critical_or_serious_on_the_main_pages(
    page_factory: Any, live_server: Any, ada: User, width: int
) -> None:
    page, base = page_factory(width), live_server.url
    page.goto(f"{base}/plans/example")  # anonymous: the read-only example and the sign-up page
    found = {"example-anonymous": axe_findings(page)}
    page.goto(f"{base}/accounts/signup/")
    found["signup"] = axe_findings(page)
    sign_in_as_ada(page, base)
    page.goto(f"{base}/plans/example")
    page.wait_for_url(re.compile(r"/plans/\d+$"))
    pages = {**MAIN_PAGES, "plan-detail": page.url.removeprefix(base)}
    for name, path in pages.items():
        page.goto(f"{base}{path}")
        page.wait_for_load_state("load")
        found[name] = axe_findings(page)
        _inside_viewport(page, name)
    problems = [f"{name}: {v['impact']} {v['id']} ({v['help']}) at {v['nodes']}"
                for name, violations in found.items() for v in violations]
    assert not problems, "\n".join(problems)
    assert len(found) >= 12


def test_keyboard_reaches_the_content_with_the_skip_link_and_opens_the_menu(
    page_factory: Any, live_server: Any
) -> None:
    page, base = page_factory(PHONE), live_server.url
    page.goto(f"{base}/gpus/")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.className") == "skip-link"
    page.keyboard.press("Enter")
    assert page.evaluate("document.activeElement.id") == "main"
    button = page.locator("#menu-button")
    assert button.get_attribute("aria-expanded") == "false"
    assert not page.locator("#site-nav").is_visible()
    button.focus()
    page.keyboard.press("Enter")
    assert button.get_attribute("aria-expanded") == "true" and page.locator(
        "#site-nav").is_visible()
    page.keyboard.press("Escape")
    assert button.get_attribute("aria-expanded") == "false"
    screenshot(page, f"catalog-keyboard-{PHONE}")
