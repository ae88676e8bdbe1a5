"""Shared parts of the form and iteration journeys: a page at a phone (390 px) or laptop
(1366 px) width, signing in, and screenshots (one per journey, and one on failure) under
var/screenshots/ (gitignored)."""

import math
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest
from playwright.sync_api import Page

from tests.browser.conftest import ADA_PASSWORD, ADA_USERNAME, ROOT, SharedChromium

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


def sign_in_as_ada(page: Page, base_url: str) -> None:
    """Sign in as the `ada` fixture's user from the login page (it lands where logins land)."""
    page.goto(f"{base_url}/accounts/login/")
    page.fill("#id_username", ADA_USERNAME)
    page.fill("#id_password", ADA_PASSWORD)
    page.click("#login-form button[type=submit]")
    page.wait_for_load_state()


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


# What a reader would call a broken chart, per drawn figure: a legend over a title, an axis
# title or tick labels; a title, axis title or tick label past the figure's edges; tick labels
# (upright ones) over each other; the toolbar over the title.
CHART_PROBLEMS_JS = """() => {
  const hits = (a, b) => a.left < b.right - 1 && b.left < a.right - 1 &&
                         a.top < b.bottom - 1 && b.top < a.bottom - 1;
  return [...document.querySelectorAll('[data-figure][data-drawn="true"]')].map(root => {
    const box = root.getBoundingClientRect(), problems = [];
    if (!box.width) return [root.id, problems];  // in a closed section
    const legend = root.querySelector('.legend');
    const lr = legend && legend.getBoundingClientRect();
    root.querySelectorAll('.gtitle, .g-xtitle, .g-ytitle, .g-y2title, .xtick text, .ytick text, '
                          + '.y2tick text').forEach(el => {
      const r = el.getBoundingClientRect(), what = el.textContent.slice(0, 40);
      if (!r.width) return;
      if (lr && lr.width && hits(lr, r)) problems.push('legend over ' + what);
      if (r.right > box.right + 1 || r.left < box.left - 1 || r.top < box.top - 1)
        problems.push('past the edge: ' + what);
    });
    if (lr && lr.width && (lr.right > box.right + 1 || lr.bottom > box.bottom + 1))
      problems.push('legend past the edge');
    const ticks = [...root.querySelectorAll('.xtick text')];
    const upright = !ticks.some(t => /rotate\\(-?[1-9]/.test(t.getAttribute('transform') || ''));
    const boxes = ticks.map(t => t.getBoundingClientRect()).filter(r => r.width);
    if (upright && boxes.some((r, i) => i && hits(boxes[i - 1], r)))
      problems.push('x tick labels over each other');
    const bar = root.querySelector('.modebar'), title = root.querySelector('.gtitle');
    if (bar && title && bar.getBoundingClientRect().width &&
        hits(bar.getBoundingClientRect(), title.getBoundingClientRect()))
      problems.push('toolbar over the title');
    return [root.id, problems];
  });
}"""


def chart_problems(page: Page) -> list[str]:
    """What is wrong with the drawn charts on the page as a reader sees them ([] if nothing)."""
    return [f"{name}: {p}" for name, problems in page.evaluate(CHART_PROBLEMS_JS)
            for p in problems]


def is_round_scale(texts: list[str]) -> bool:
    """Tick labels from 0 in even steps of 1, 2, 2.5 or 5 × 10^n (0, 200, 400; not 39.9)."""
    ticks = [float(t.replace(",", "")) for t in texts]
    steps = {round(b - a, 9) for a, b in zip(ticks, ticks[1:], strict=False)}
    if len(ticks) < 3 or ticks[0] != 0 or len(steps) != 1:
        return False
    step = steps.pop()
    mantissa = step / 10 ** math.floor(math.log10(step))
    return any(math.isclose(mantissa, m) for m in (1, 2, 2.5, 5))


AXE = Path(__file__).parent / "vendor" / "axe-core-4.14.1.min.js"
BLOCKING = ("critical", "serious")


def axe_findings(page: Page) -> list[dict[str, Any]]:
    """axe-core's critical and serious violations on the page as shown (WCAG 2.x A/AA and
    best practices)."""
    if not page.evaluate("typeof axe !== 'undefined'"):
        page.evaluate(AXE.read_text(encoding="utf-8"))
    result = page.evaluate(
        "async () => (await axe.run(document, {runOnly: {type: 'tag', values: "
        "['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice']}})).violations"
        ".map(v => ({id: v.id, impact: v.impact, help: v.help, "
        "nodes: v.nodes.slice(0, 3).map(n => n.target.join(' '))}))")
    return [v for v in result if v["impact"] in BLOCKING]
