"""Main journey: fill the plan form for Llama 2 7B on 1T tokens, watch the progress bar fed by a
real Celery worker over Redis, then see the recommendation cards, the table and the Pareto chart.
"""

import re
from typing import Any
from urllib.parse import urlparse

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import Page

pytestmark = [pytest.mark.browser, pytest.mark.integration, pytest.mark.django_db(transaction=True)]


def test_plan_llama2_7b_and_see_cards_table_and_pareto_chart(
    chromium_page: Page, app_server: str, celery_worker_process: object, settings: Any
) -> None:
    # The server process checks passwords with the production hashers, not the test's MD5.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.PBKDF2PasswordHasher"]
    User.objects.create_user("ada", password="pw-ada-123")
    page = chromium_page
    urls: list[str] = []
    page.on("request", lambda request: urls.append(request.url))
    page.goto(f"{app_server}/plans/new")
    page.fill("#id_username", "ada")
    page.fill("#id_password", "pw-ada-123")
    page.click("#login-form button[type=submit]")
    page.wait_for_url("**/plans/new")

    page.select_option("#id_workload", "llama2-7b")
    page.fill("#id_tokens", "1e12")
    page.check("input[name=providers][value=aws]")
    page.check("input[name=providers][value=gcp]")
    page.click("form.plan-form button[type=submit]")
    page.wait_for_url(re.compile(r"/plans/\d+$"))
    # The first view shows the run queued for the real worker, unless it already finished.
    page.wait_for_selector("#progress progress, [data-card]", state="attached")

    page.wait_for_selector('[data-card="cheapest_meeting_deadline"]', timeout=60_000)
    assert page.locator("article.card").count() >= 3
    assert page.locator("#plan-table tbody tr").count() >= 10
    page.wait_for_selector("#plan-chart-0 .main-svg")
    # Drawn as SVG points, which a browser without WebGL (like this headless one) shows too.
    assert page.locator("#plan-chart-0 .scatterlayer .trace .point").count() >= 5
    assert "WebGL" not in page.locator("#plan-chart-0").inner_text()
    hosts = {urlparse(u).hostname for u in urls if u.startswith("http")}
    assert hosts <= {"localhost", "127.0.0.1"}, hosts
