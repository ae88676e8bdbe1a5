"""Plan a serving deployment with a daily profile in the browser: the page shows the replicas
at peak and at trough that the hourly schedule needs, draws 'Replicas over the day', and lists
what to buy by the buying rule."""

from typing import Any

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import Page

from tests.browser.journeys import chart_problems, screenshot, sign_in_as_ada

pytestmark = pytest.mark.browser
PROFILE = "2,1,1,1,1,2,4,7,9,10,10,10,9,9,10,10,9,8,7,6,5,4,3,2"


def test_a_daily_profile_shows_replicas_at_peak_and_trough(
        chromium_page: Page, live_server: Any, ada: User) -> None:
    page = chromium_page
    sign_in_as_ada(page, live_server.url)
    page.goto(f"{live_server.url}/serving/new")
    page.select_option("#id_model", "llama3.1-70b")
    page.fill("#id_rate", "20")
    page.fill("#id_daily_profile", PROFILE)
    page.click("#serving-form button[type=submit]")
    page.wait_for_url("**/serving/*")
    page.wait_for_selector("#serving-figure-2-chart .scatterlayer .trace")
    assert chart_problems(page) == []
    peak = int(page.inner_text("#cheapest-replicas-peak"))
    trough = int(page.inner_text("#cheapest-replicas-trough"))
    plan_id = page.url.rstrip("/").split("/")[-1]
    best = page.request.get(f"{live_server.url}/api/serving/{plan_id}").json()[
        "cards"]["cheapest"]
    assert (peak, trough) == (max(best["replicas_by_hour"]), min(best["replicas_by_hour"]))
    assert peak > trough >= 1
    assert "Replicas over the day" in page.inner_text("body")
    assert "a forecast, not a measured history" in page.inner_text("#serving-mix")
    screenshot(page, "serving-daily-profile")
