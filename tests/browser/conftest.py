"""Browser fixtures: headless Chromium through Playwright against pytest-django's live_server."""

import os
import runpy
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.contrib.staticfiles import finders
from playwright.sync_api import Browser, BrowserContext, Page, Playwright, sync_playwright

from tests.conftest import (
    app_on_redis,
    load_catalog,
    reachable_redis_url,
    start_worker,
    stop_worker,
    wait_ready,
)

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


@pytest.fixture(scope="session")
def chromium_path() -> str:
    path = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
    if not Path(path).exists():
        if os.environ.get("REQUIRE_INTEGRATION") == "1":
            pytest.fail(f"Chromium is required (REQUIRE_INTEGRATION=1) but {path} is missing")
        pytest.skip(f"no Chromium at {path} (set CHROMIUM_PATH)")
    return path


ADA_USERNAME, ADA_PASSWORD = "ada", "pw-ada-123"


@pytest.fixture
def ada(live_server: Any) -> User:
    """Ada, a user of the live server (sign her in with journeys.sign_in_as_ada)."""
    return User.objects.create_user(ADA_USERNAME, password=ADA_PASSWORD)


@pytest.fixture
def browser_catalog(live_server: Any) -> None:
    """The shipped catalog, committed so the live server thread sees it.

    live_server forces transactional_db, which empties every table after the test, so the
    session-wide `loaded_catalog` must not be used here.
    """
    load_catalog()


class SharedChromium:
    """One headless Chromium for the browser tests; each test opens browser contexts of its own
    (cookies, storage and cache apart, as in a new browser). Relaunched if it ever crashed."""

    def __init__(self, playwright: Playwright, path: str) -> None:
        self._playwright, self._path = playwright, path
        self._browser = self._launch()

    def _launch(self) -> Browser:
        return self._playwright.chromium.launch(executable_path=self._path, args=CHROMIUM_ARGS)

    def new_context(self, width: int, height: int, *, has_javascript: bool = True
                    ) -> BrowserContext:
        if not self._browser.is_connected():
            self._browser = self._launch()
        return self._browser.new_context(viewport={"width": width, "height": height},
                                         java_script_enabled=has_javascript)

    def close(self) -> None:
        if self._browser.is_connected():
            self._browser.close()


@pytest.fixture(scope="package")
def shared_chromium(chromium_path: str) -> Iterator[SharedChromium]:
    """Chromium started once for tests/browser (a launch per test cost seconds).

    While Playwright's sync API is alive its event loop counts as running in this thread, so
    Django's async-safety check would refuse the ORM calls between tests too (the flush of each
    transactional test): allowed here, for this package's lifetime only.
    """
    previous = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    try:
        with sync_playwright() as playwright:
            chromium = SharedChromium(playwright, chromium_path)
            try:
                yield chromium
            finally:
                chromium.close()
    finally:
        if previous is None:
            os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
        else:
            os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = previous


@pytest.fixture
def chromium_page(
    shared_chromium: SharedChromium, vendored_plotly: str, browser_catalog: None
) -> Iterator[Page]:
    context = shared_chromium.new_context(1400, 1000)
    try:
        yield context.new_page()
    finally:
        context.close()


@pytest.fixture(scope="package")
def app_server(
    redis_url: str, django_db_setup: None, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    """`manage.py runserver` in its own process on the test database and Redis, as in production.

    Unlike live_server (a thread of the test process), it publishes tasks exactly as a real
    deployment does; pair it with `celery_worker_process`. Started once for tests/browser: it
    keeps no state of its own between requests (sessions and rows are in the database, its
    cache in Redis).
    """
    import socket
    import sys
    import time
    import urllib.request

    from tests.conftest import worker_database_url

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = dict(os.environ, REDIS_URL=redis_url, SECRET_KEY="test-only-secret", DEBUG="1",
               DATABASE_URL=worker_database_url())
    log = (tmp_path_factory.mktemp("app_server") / "server.log").open("wb")
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


@pytest.fixture(scope="session")
def redis_url() -> str:
    """The browser tests' own Redis database, after every xdist worker's own: their worker
    (below) lives as long as the package, and under xdist this process runs other packages'
    tests meanwhile, whose workers must not take the browser worker's tasks or it theirs."""
    return reachable_redis_url(offset=int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")))


@pytest.fixture(scope="package")
def browser_worker(
    redis_url: str, django_db_setup: None, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[subprocess.Popen[bytes], Path]]:
    """The real `celery worker` of the browser tests, started once for tests/browser (a worker
    keeps no state between tasks); its log file."""
    log = tmp_path_factory.mktemp("browser_worker") / "worker.log"
    worker = start_worker(redis_url, log)
    try:
        yield worker, log
    finally:
        stop_worker(worker)


@pytest.fixture
def celery_worker_process(
    redis_url: str, browser_worker: tuple[subprocess.Popen[bytes], Path]
) -> Iterator[subprocess.Popen[bytes]]:
    """tests/conftest.py's fixture on the package's worker: the app points at it, and it
    answers a ping before the test starts."""
    worker, log = browser_worker
    with app_on_redis(redis_url) as app:
        wait_ready(app, worker, log)
        yield worker


SCREENSHOTS = ROOT / "var" / "screenshots"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """Remember each phase's report on the test item, so fixtures can see a failure."""
    outcome = yield
    report = outcome.get_result()  # type: ignore[attr-defined]
    setattr(item, f"report_{report.when}", report)


@pytest.fixture
def page_factory(
    request: pytest.FixtureRequest, shared_chromium: SharedChromium, vendored_plotly: str,
    browser_catalog: None,
) -> Iterator[Any]:
    """page_factory(width) -> a Page in a viewport `width` px wide (height 900).

    When the test fails, every open page is saved as a screenshot under
    var/screenshots/failures/ (the test's artefacts).
    """
    pages: list[Page] = []

    def make(width: int) -> Page:
        page = shared_chromium.new_context(width, 900).new_page()
        pages.append(page)
        return page

    try:
        yield make
        report = getattr(request.node, "report_call", None)
        if report is not None and report.failed:
            failures = SCREENSHOTS / "failures"
            failures.mkdir(parents=True, exist_ok=True)
            for i, page in enumerate(pages):
                name = f"{request.node.name}-{i}.png".replace("/", "_")
                page.screenshot(path=str(failures / name), full_page=True)
    finally:
        for page in pages:
            page.context.close()


def screenshot(page: Page, name: str) -> Path:
    """Save the whole page as var/screenshots/<name>.png (gitignored) and return its path."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path
