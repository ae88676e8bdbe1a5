"""Main journey: the catalog draws its charts from local files only, then compare two GPUs."""

from typing import Any
from urllib.parse import urlparse

import pytest
from playwright.sync_api import Page, Request

pytestmark = pytest.mark.browser

LOCAL_HOSTS = {"localhost", "127.0.0.1"}


def _record(page: Page) -> list[str]:
    urls: list[str] = []

    def on_request(request: Request) -> None:
        urls.append(request.url)

    page.on("request", on_request)
    return urls


def _external(urls: list[str]) -> list[str]:
    # data: and blob: URLs are generated in the page and never touch the network.
    parsed = [(url, urlparse(url)) for url in urls]
    return [
        url for url, parts in parsed
        if parts.scheme not in {"data", "blob"} and parts.hostname not in LOCAL_HOSTS
    ]


def test_catalog_charts_render_offline(chromium_page: Page, live_server: Any) -> None:
    page = chromium_page
    urls = _record(page)
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))

    page.goto(f"{live_server.url}/gpus/")
    page.wait_for_selector("#scatter .plot-container .main-svg")
    page.wait_for_function(
        "document.querySelectorAll('#scatter .scatterlayer .point').length > 5"
    )
    page.wait_for_function(
        "document.querySelectorAll('#per-dollar .barlayer .point').length > 5"
    )

    # SVG text nodes are not HTMLElements, so read textContent.
    # GPU names are hover text (printed labels overlapped), carried in the figure data.
    assert "H100 SXM5-80GB" in (page.text_content("#chart-scatter") or "")
    assert page.locator("#scatter .scatterlayer .textpoint").count() == 0
    assert "$/GPU-hour" in (page.text_content("#scatter .xtitle") or "")
    assert "TFLOPS" in (page.text_content("#scatter .ytitle") or "")
    assert any(url.endswith("/static/vendor/plotly-7.1.0.min.js") for url in urls)
    assert _external(urls) == []
    assert errors == []


def test_compare_two_gpus_from_the_catalog(chromium_page: Page, live_server: Any) -> None:
    page = chromium_page
    urls = _record(page)
    page.goto(f"{live_server.url}/gpus/")
    page.check('input[name="gpu"][value="h100-sxm5-80gb"]')
    page.check('input[name="gpu"][value="a100-sxm4-80gb"]')
    page.click("#compare-button")

    page.wait_for_url("**/compare/?gpu=*")
    page.wait_for_function("document.querySelectorAll('.barlayer .trace').length === 2")
    assert "H100 SXM5-80GB" in page.inner_text("#compare-table thead")
    # Axis ticks have thousands separators, as the table beside them does
    ticks = page.locator(".ytick text").all_text_contents()
    assert "1,000" in ticks and "1000" not in ticks
    assert _external(urls) == []
