"""Shared parts of the form and iteration journeys: a page at a phone (390 px) or laptop
(1366 px) width, signing in, and screenshots (one per journey, and one on failure) under
var/screenshots/ (gitignored)."""

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest
from playwright.sync_api import Page

from tests.browser.conftest import ROOT, SharedChromium

SCREENSHOTS = ROOT / "var" / "screenshots"
WIDTHS = (390, 1366)


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", text).strip("-")


@pytest.fixture(params=WIDTHS, ids=[f"{w}px" for w in WIDTHS])
def sized_page(
    request: pytest.FixtureRequest, shared_chromium: SharedChromium, vendored_plotly: str,
    browser_catalog: None,
) -> Iterator[Page]:
    """Headless Chromium at the parametrized width; a failing test leaves a full-page
    screenshot named after it in var/screenshots/failures/."""
    failed_before = request.session.testsfailed
    context = shared_chromium.new_context(request.param, 900)
    page = context.new_page()
    page.set_default_timeout(30_000)
    try:
        yield page
    finally:
        if request.session.testsfailed > failed_before:
            folder = SCREENSHOTS / "failures"
            folder.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(folder / f"{_slug(request.node.name)}.png"),
                            full_page=True)
        context.close()


def screenshot(page: Page, journey: str, *, is_full_page: bool = True) -> Path:
    """The journey's screenshot at this width: var/screenshots/<journey>-<width>px.png."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{journey}-{page.viewport_size['width']}px.png"  # type: ignore[index]
    page.screenshot(path=str(path), full_page=is_full_page)
    return path


def sign_in(page: Page, base_url: str, path: str, username: str, password: str) -> None:
    """Sign in from the login page and land on `path` (its `next`): some pages, such as a
    what-if link, show visitors a read-only preview instead of asking them to sign in."""
    page.goto(f"{base_url}/accounts/login/?{urlencode({'next': path})}")
    page.fill("#id_username", username)
    page.fill("#id_password", password)
    page.click("#login-form button[type=submit]")
    page.wait_for_url(f"**{path.split('?')[0]}*")


def fits_width(page: Page, selector: str) -> bool:
    """The element lies within the viewport's width and does not scroll sideways itself."""
    box: Any = page.eval_on_selector(selector, """el => {
        const r = el.getBoundingClientRect();
        return {left: r.left, right: r.right, overflow: el.scrollWidth - el.clientWidth};
    }""")
    width = page.viewport_size["width"]  # type: ignore[index]
    return bool(box["left"] >= 0 and box["right"] <= width + 0.5 and box["overflow"] <= 1)
