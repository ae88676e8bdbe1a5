"""Browser fixtures: headless Chromium through Playwright against pytest-django's live_server."""

import os
import runpy
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.contrib.staticfiles import finders
from django.core.management import call_command
from playwright.sync_api import Page, sync_playwright

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--no-first-run",
]


@pytest.fixture(autouse=True)
def _allow_orm_beside_playwright(monkeypatch: pytest.MonkeyPatch) -> None:
    # Playwright's sync API runs an event loop in the test thread; the ORM calls are still sync.
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")


@pytest.fixture(scope="session")
def vendored_plotly() -> str:
    """The local Plotly bundle, copied from the pinned package if `make install` has not."""
    if finders.find(settings.PLOTLY_JS) is None:
        runpy.run_path(str(ROOT / "scripts" / "vendor_static.py"), run_name="__main__")
    assert finders.find(settings.PLOTLY_JS), f"static/{settings.PLOTLY_JS} is missing"
    return str(settings.PLOTLY_JS)


@pytest.fixture
def chromium_path() -> str:
    path = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
    if not Path(path).exists():
        if os.environ.get("REQUIRE_INTEGRATION") == "1":
            pytest.fail(f"Chromium is required (REQUIRE_INTEGRATION=1) but {path} is missing")
        pytest.skip(f"no Chromium at {path} (set CHROMIUM_PATH)")
    return path


@pytest.fixture
def browser_catalog(live_server: Any) -> None:
    """The shipped catalog, committed so the live server thread sees it.

    live_server forces transactional_db, which empties every table after the test, so the
    session-wide `loaded_catalog` must not be used here.
    """
    call_command("load_catalog", verbosity=0)


@pytest.fixture
def chromium_page(
    chromium_path: str, vendored_plotly: str, browser_catalog: None
) -> Iterator[Page]:
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium_path, args=CHROMIUM_ARGS)
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        yield context.new_page()
        context.close()
        browser.close()


@pytest.fixture
def app_server(redis_url: str, tmp_path: Path) -> Iterator[str]:
    """`manage.py runserver` in its own process on the test database and Redis, as in production.

    Unlike live_server (a thread of the test process), it publishes tasks exactly as a real
    deployment does; pair it with `celery_worker_process`.
    """
    import socket
    import subprocess
    import sys
    import time
    import urllib.request

    from tests.conftest import worker_database_url

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = dict(os.environ, REDIS_URL=redis_url, SECRET_KEY="test-only-secret", DEBUG="1",
               DATABASE_URL=worker_database_url())
    log = (tmp_path / "server.log").open("wb")
    server = subprocess.Popen(
        [sys.executable, "manage.py", "runserver", f"127.0.0.1:{port}", "--noreload"],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                urllib.request.urlopen(f"{url}/accounts/login/", timeout=1).close()
                break
            except OSError:
                time.sleep(0.2)
        yield url
    finally:
        server.terminate()
        server.wait(timeout=20)
        log.close()


SCREENSHOTS = ROOT / "var" / "screenshots"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """Remember each phase's report on the test item, so fixtures can see a failure."""
    outcome = yield
    report = outcome.get_result()  # type: ignore[attr-defined]
    setattr(item, f"report_{report.when}", report)


@pytest.fixture
def page_factory(
    request: pytest.FixtureRequest, chromium_path: str, vendored_plotly: str,
    browser_catalog: None,
) -> Iterator[Any]:
    """page_factory(width) -> a Page in a viewport `width` px wide (height 900).

    When the test fails, every open page is saved as a screenshot under
    var/screenshots/failures/ (the test's artefacts).
    """
    pages: list[Page] = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium_path, args=CHROMIUM_ARGS)

        def make(width: int) -> Page:
            context = browser.new_context(viewport={"width": width, "height": 900})
            page = context.new_page()
            pages.append(page)
            return page

        yield make
        report = getattr(request.node, "report_call", None)
        if report is not None and report.failed:
            failures = SCREENSHOTS / "failures"
            failures.mkdir(parents=True, exist_ok=True)
            for i, page in enumerate(pages):
                name = f"{request.node.name}-{i}.png".replace("/", "_")
                page.screenshot(path=str(failures / name), full_page=True)
        browser.close()


def screenshot(page: Page, name: str) -> Path:
    """Save the whole page as var/screenshots/<name>.png (gitignored) and return its path."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path
