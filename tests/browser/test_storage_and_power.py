"""Checkpoint storage and power caps in Chromium: a what-if plan with a retention policy and
a 70 % power limit shows its storage plan by tier and the power trade; the storage what-if
page prices the field report's fleet and re-prices it when compression changes."""

import pytest
from playwright.sync_api import Page

from tests.browser.journeys import screenshot

pytestmark = [pytest.mark.browser, pytest.mark.integration, pytest.mark.django_db(transaction=True)]
WHATIF = ("/plans/whatif?workload=llama2-7b&tokens=1e10&providers=aws&gpus=v100-sxm2-16gb"
          "&purchase_options=on_demand&retention=keep-last%3D3%2Cmilestone-days%3D7"
          "&checkpoint_every_hours=1&power_limit_pct=70")


def test_plan_storage_and_power_sections(chromium_page: Page, app_server: str) -> None:
    page = chromium_page
    page.set_default_timeout(60_000)
    page.goto(f"{app_server}{WHATIF}")
    section = page.locator("#storage-plan")
    section.wait_for()
    assert "keep-last=3,milestone-days=7" in section.inner_text()
    assert section.locator("table.storage-tiers tbody tr").count() >= 2
    assert "at the flat $/GB-month" in page.inner_text("#storage-vs-flat")
    assert "% GPU-hours" in page.inner_text("#power-trade")
    assert "V100" in page.inner_text("#power-claim")
    chart = page.locator(".chart", has_text="capped at 70 % power")
    chart.locator(".main-svg").first.wait_for()
    section.scroll_into_view_if_needed()
    screenshot(page, "plan-storage-power")


def test_storage_whatif_page_reprices(chromium_page: Page, app_server: str) -> None:
    page = chromium_page
    page.set_default_timeout(60_000)
    page.goto(f"{app_server}/storage/")
    tiered = page.locator('tr[data-provider="aws"][data-policy="tiered"]')
    tiered.wait_for()
    before = tiered.locator("td").nth(3).inner_text()
    assert "Every assumption" in page.inner_text("#storage-result")
    page.fill("#id_compression_ratio", "1.5")
    page.click("#storage-form button[type=submit]")
    page.wait_for_url("**compression_ratio=1.5**")
    after = page.locator('tr[data-provider="aws"][data-policy="tiered"] td').nth(3).inner_text()
    assert float(after.strip("$").replace(",", "")) > float(before.strip("$").replace(",", ""))
    screenshot(page, "storage-whatif")
