"""The first hour at 390 px (a phone) and 1366 px (a laptop): the front door and its worked
example, every page inside the viewport, every navigation link reachable, the signed-in user on
every page, and the plan table's column chooser. Screenshots go to var/screenshots/.
"""

import re
from typing import Any

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import Page

from tests.browser.conftest import screenshot

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PHONE, LAPTOP = 390, 1366
# Every page a newcomer meets, by what they are called in the report of a failure.
PAGES = {
    "home": "/", "catalog": "/gpus/", "prices": "/prices/", "plan-new": "/plans/new",
    "plan-list": "/plans/", "history-list": "/history/", "history-upload": "/history/upload",
    "simulation-new": "/simulations/new", "simulations": "/simulations/",
    "reports": "/reports/", "api": "/api/",
}
PAGE_WIDTH_JS = "[document.documentElement.scrollWidth, window.innerWidth]"


def _sign_in(page: Page, base: str, username: str = "ada") -> None:
    page.fill("#id_username", username)
    page.fill("#id_password", "pw-ada-123")
    page.click("#login-form button[type=submit]")
    page.wait_for_load_state()


def _open_example(page: Page, base: str) -> str:
    """From the front door, open the worked example (read-only), then log in from its call to
    action: the user's own copy opens; its URL."""
    page.goto(f"{base}/")
    page.click("#example-link")
    page.wait_for_url("**/plans/example")
    page.wait_for_selector('[data-card="cheapest_meeting_deadline"]')
    page.click("#login-cta")
    page.wait_for_url("**/accounts/login/?next=/plans/example")
    _sign_in(page, base)
    page.wait_for_url(re.compile(r"/plans/\d+$"))
    page.wait_for_selector('[data-card="cheapest_meeting_deadline"]')
    return page.url


def _assert_inside_viewport(page: Page, name: str) -> None:
    scroll_width, inner_width = page.evaluate(PAGE_WIDTH_JS)
    assert scroll_width <= inner_width, f"{name} is {scroll_width} px wide in {inner_width} px"


@pytest.mark.parametrize("width", [PHONE, LAPTOP])
def test_front_door_starts_and_worked_example_opens_a_finished_plan(
    page_factory: Any, live_server: Any, ada: User, width: int
) -> None:
    page, base = page_factory(width), live_server.url
    page.goto(f"{base}/")
    assert "Which GPUs" in page.inner_text("h1")
    screenshot(page, f"home-{width}")
    for link, target in (("#start-catalog", "/gpus/"), ("#start-plan", "/accounts/login/"),
                         ("#start-history", "/accounts/login/")):
        page.goto(f"{base}/")
        page.click(link)
        page.wait_for_url(f"**{target}**")
    assert page.locator("#catalog-table tbody tr").count() == 0  # on the sign-in page now

    _open_example(page, base)
    cards = page.locator("article.card")
    assert cards.count() >= 3
    first = cards.first.inner_text()
    # Days with a band in days, money with separators, purchase options in words.
    assert re.search(r"\d[\d.,]* days \(P10–P90 [\d.,]+–[\d.,]+ days\)", first), first
    assert re.search(r"\$\d{1,3}(,\d{3})+ total", first), first
    assert "on_demand" not in page.inner_text("main")
    assert page.locator("#plan-table tbody tr").count() >= 10
    screenshot(page, f"example-plan-{width}")
    # A second visit opens the same finished plan (no new copy each time).
    url = page.url
    page.goto(f"{base}/plans/example")
    assert page.url == url


def _nav_links(page: Page) -> list[str]:
    return page.eval_on_selector_all("#site-nav a", "els => els.map(e => e.getAttribute('href'))")


@pytest.mark.parametrize("width", [PHONE, LAPTOP])
def test_every_page_fits_shows_the_user_and_every_nav_link_works(
    page_factory: Any, live_server: Any, ada: User, width: int
) -> None:
    page, base = page_factory(width), live_server.url
    example = _open_example(page, base)
    pages = {**PAGES, "plan-detail": example.removeprefix(base)}
    for name, path in pages.items():
        page.goto(f"{base}{path}")
        _assert_inside_viewport(page, name)
        account = page.locator("#account")
        assert account.is_visible() and "ada" in account.inner_text(), name
        if width == PHONE or name in ("home", "plan-detail"):
            screenshot(page, f"{name}-{width}")

    page.goto(f"{base}/")
    links = _nav_links(page)
    assert {"/gpus/", "/prices/", "/plans/", "/simulations/", "/history/", "/reports/",
            "/api/"} <= set(links)
    for index, href in enumerate(links):
        page.goto(f"{base}/")
        if width == PHONE:
            assert not page.locator("#site-nav").is_visible()  # folded into the menu
            assert page.get_attribute("#menu-button", "aria-expanded") == "false"
            page.click("#menu-button")
            assert page.get_attribute("#menu-button", "aria-expanded") == "true"
            if index == 0:
                screenshot(page, f"menu-open-{width}")
        link = page.locator("#site-nav a").nth(index)
        assert link.is_visible(), href
        with page.expect_navigation() as navigation:
            link.click()
        assert navigation.value is not None and navigation.value.status == 200, href
        assert page.url.startswith(f"{base}{href}"), (href, page.url)
        assert page.locator(f'#site-nav a[href="{href}"][aria-current="page"]').count() == 1


def test_signed_out_visitors_see_a_sign_in_link(page_factory: Any, live_server: Any) -> None:
    page = page_factory(PHONE)
    page.goto(f"{live_server.url}/gpus/")
    page.click("#sign-in")
    page.wait_for_url("**/accounts/login/?next=/gpus/")


def test_column_chooser_hides_and_shows_plan_columns(
    page_factory: Any, live_server: Any, ada: User
) -> None:
    page = page_factory(LAPTOP)
    _open_example(page, live_server.url)
    compute = page.locator("#plan-table thead th.c-compute")
    region = page.locator("#plan-table thead th.c-region")
    assert not compute.is_visible() and region.is_visible()  # the default set
    # The default set fits a 1366 px screen: the table needs no scrolling of its own.
    table_width, box_width = page.evaluate(
        "[document.querySelector('#plan-table').scrollWidth,"
        " document.querySelector('#plan-results .table-wrap').clientWidth]")
    assert table_width <= box_width
    _assert_inside_viewport(page, "plan detail")

    page.click("#column-chooser summary")
    page.check("#col-compute")
    page.uncheck("#col-region")
    assert compute.is_visible()
    assert page.locator("#plan-table tbody tr").first.locator("td.c-compute").is_visible()
    assert not region.is_visible()
    assert not page.locator("#plan-table tbody td.c-region").first.is_visible()
    screenshot(page, "column-chooser-1366")


def test_region_list_follows_the_chosen_provider(page_factory: Any, live_server: Any) -> None:
    page = page_factory(PHONE)
    page.goto(f"{live_server.url}/prices/")
    regions = "Array.from(document.querySelectorAll('#id_region option')).map(o => o.value)"
    everything = set(page.evaluate(regions)) - {""}
    page.select_option("#id_provider", "gcp")
    gcp = set(page.evaluate(regions)) - {""}
    assert gcp and gcp < everything and "us-east-1" not in gcp  # an AWS region is gone
    assert page.locator("#id_region optgroup").count() == 0
    page.select_option("#id_region", sorted(gcp)[0])
    page.click("form.filters button[type=submit]")
    page.wait_for_url("**/prices/?*provider=gcp*")
    assert set(page.evaluate(regions)) - {""} == gcp  # the server lists the same regions
    _assert_inside_viewport(page, "prices")
    screenshot(page, "prices-gcp-regions-390")
