"""A what-if, at 390 and 1366 px: computed from its link, saved as a plan with a
confirmation, planned by a real Celery worker over Redis, then reopened from the plan list."""

import re
from typing import Any

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import Page

from planner.models import PlanScenario
from tests.browser.journeys import fits_width, screenshot, sign_in, sized_page

__all__ = ["sized_page"]
pytestmark = [pytest.mark.browser, pytest.mark.integration, pytest.mark.django_db(transaction=True)]
WHATIF = ("/plans/whatif?workload=llama2-7b&tokens=1e11&providers=aws"
          "&purchase_options=on_demand&deadline_days=30")


def _forget_cached_pages(redis_url: str) -> None:
    """Plan ids restart at 1 in every test database, but the server's page cache lives in the
    shared test Redis: drop the fragments an earlier run stored under the same ids."""
    import redis

    client = redis.Redis.from_url(redis_url)
    for key in client.scan_iter(match="*template.cache.*"):
        client.delete(key)


def test_a_whatif_is_saved_and_reopened(
    sized_page: Page, app_server: str, celery_worker_process: object, settings: Any,
    redis_url: str,
) -> None:
    _forget_cached_pages(redis_url)
    # The server process checks passwords with the production hashers, not the test's MD5.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.PBKDF2PasswordHasher"]
    User.objects.create_user("ada", password="pw-ada-123")
    page = sized_page
    sign_in(page, app_server, WHATIF, "ada", "pw-ada-123")
    page.wait_for_selector('[data-card="cheapest_meeting_deadline"]')
    first_pick = page.inner_text('[data-card="cheapest_meeting_deadline"] .card-main')
    page.fill("#save-whatif-form input[name=name]", "7B in a month")
    with page.expect_navigation(url=re.compile(r"/plans/\d+$")) as navigation:
        page.click("#save-whatif-form button[type=submit]")
    # Read from the page as served: its progress script reloads it once the worker is done,
    # and a confirmation is shown once.
    served = navigation.value
    assert served is not None
    assert '<li class="success" role="status">Saved “7B in a month” to your plans.</li>' in (
        served.text())
    saved = PlanScenario.objects.get()
    assert saved.is_saved and saved.name == "7B in a month"
    # The worker plans it; the page polls and then shows the result.
    page.wait_for_selector('[data-card="cheapest_meeting_deadline"]', timeout=240_000)
    page.wait_for_load_state("load")

    page.goto(f"{app_server}/plans/")
    row = page.locator("#plan-list tr", has_text="7B in a month")
    assert "saved" in row.inner_text()
    assert fits_width(page, "#compare-form")  # the list's table scrolls inside its box
    row.locator("a", has_text="7B in a month").click()
    page.wait_for_url(f"**/plans/{saved.id}")
    assert page.inner_text('[data-card="cheapest_meeting_deadline"] .card-main') == first_pick
    assert page.input_value("#save-form input[name=name]") == "7B in a month"
    screenshot(page, "whatif-saved-reopened", is_full_page=False)  # the top: the cards
