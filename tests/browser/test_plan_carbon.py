"""Carbon on a plan page in Chromium: the Lowest carbon card beside the cheapest one with its
kg CO2e and basis, the CO2e column, the cost-vs-emissions chart drawn, and a CO2e limit in the
what-if that leaves out the dirtier options."""

import re

import pytest
from playwright.sync_api import Page

from tests.browser.journeys import screenshot

pytestmark = [pytest.mark.browser, pytest.mark.integration, pytest.mark.django_db(transaction=True)]
WHATIF = ("/plans/whatif?workload=llama2-7b&tokens=1e11&providers=aws&providers=gcp"
          "&providers=lambda&purchase_options=on_demand")


def _kg(text: str) -> float:
    found = re.search(r"([\d,]+) kg CO2e", text)
    assert found, text
    return float(found.group(1).replace(",", ""))


def test_lowest_carbon_card_column_chart_and_limit(
    chromium_page: Page, app_server: str, redis_url: str
) -> None:
    import redis

    # The server's page cache lives in the shared test Redis: drop fragments rendered by
    # another version of the templates.
    client = redis.Redis.from_url(redis_url)
    for key in client.scan_iter(match="*template.cache.*"):
        client.delete(key)
    page = chromium_page
    page.set_default_timeout(60_000)
    page.goto(f"{app_server}{WHATIF}")  # a what-if needs no account
    card = page.locator('[data-card="lowest_carbon"]')
    card.wait_for()
    assert card.locator("h2").inner_text() == "Lowest carbon"
    cheapest = page.inner_text('[data-card="cheapest_meeting_deadline"] .card-carbon')
    cleanest = card.locator(".card-carbon").inner_text()
    assert "gCO2e/kWh (location-based" in cleanest
    assert _kg(cleanest) <= _kg(cheapest) if "kg CO2e" in cheapest else True
    assert page.locator("#plan-table th.c-co2e").is_visible()
    assert page.locator("#plan-table td.c-co2e").first.inner_text().endswith(("kg", "data"))
    chart = page.locator(".chart", has_text="Total cost vs emissions")
    chart.locator(".main-svg").first.wait_for()
    assert chart.locator(".scatterlayer .trace .point").count() >= 5
    page.locator("p.carbon-basis").scroll_into_view_if_needed()
    screenshot(page, "plan-carbon")

    limit = _kg(cleanest) * 2
    page.goto(f"{app_server}{WHATIF}&max_co2e_kg={limit:.0f}")
    card.wait_for()
    assert "over the CO2e limit" in page.inner_text("p.infeasible")
    assert "no carbon data to check the CO2e limit" in page.inner_text("p.infeasible")
    for cell in page.locator("#plan-table td.c-co2e").all_inner_texts():
        assert float(cell.removesuffix(" kg").replace(",", "")) <= limit
