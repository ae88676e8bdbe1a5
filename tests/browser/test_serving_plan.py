"""Plan a serving deployment in the browser: the form, the plan page with its charts drawn, and
the same cost per million tokens on the page and from the API."""

from typing import Any

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import Page

from tests.browser.journeys import chart_problems, screenshot, sign_in_as_ada

pytestmark = pytest.mark.browser


def test_a_serving_plan_reads_the_same_cost_per_million_tokens_on_page_and_api(
        chromium_page: Page, live_server: Any, ada: User) -> None:
    page = chromium_page
    sign_in_as_ada(page, live_server.url)
    page.goto(f"{live_server.url}/serving/new")
    page.select_option("#id_model", "llama3.1-70b")
    page.select_option("#id_precision", "fp8")
    page.fill("#id_rate", "20")
    page.fill("#id_input_tokens", "2000")
    page.fill("#id_output_tokens", "300")
    page.fill("#id_ttft_p99_ms", "2000")
    page.fill("#id_tpot_p99_ms", "60")
    page.click("#serving-form button[type=submit]")
    page.wait_for_url("**/serving/*")
    page.wait_for_selector(".js-plotly-plot .scatterlayer .trace")
    assert chart_problems(page) == []
    shown_in = page.inner_text("#cheapest-usd-per-million-input")
    shown_out = page.inner_text("#cheapest-usd-per-million-output")
    plan_id = page.url.rstrip("/").split("/")[-1]
    api = page.request.get(f"{live_server.url}/api/serving/{plan_id}").json()
    cost = api["cards"]["cheapest"]["usd_per_million_tokens"]
    assert shown_in == f"${cost['input']:.3f}"
    assert shown_out == f"${cost['output']:.3f}"
    screenshot(page, "serving-plan-70b-20rps")
