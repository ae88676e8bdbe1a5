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
    assert len(chart["yticks"]) >= 2 and "(USD)" in chart["ytitle"]
    screenshot(page, "instance-p4d-payment-options-side-by-side", is_full_page=False)
