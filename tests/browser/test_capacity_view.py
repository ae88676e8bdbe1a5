"""Journey: an analysed Philly history's Capacity view: choose the sweep, watch its
progress, see the frontier and the queue charts and the recommended row; no request leaves
the server. Screenshots: var/screenshots/capacity-<width>px.png."""

from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import Page

from planner.capacity.models import CapacityRun
from planner.capacity.tasks import run_capacity_task
from planner.purchase_mix import services as mix_services
from planner.purchase_mix.tasks import analyze_run_task
from tests.browser.journeys import (  # noqa: F401
    chart_problems,
    is_round_scale,
    screenshot,
    sign_in,
    sized_page,
)
from tests.planner.capacity.conftest import PHILLY_OPTIONS
from tests.planner.conftest import PHILLY, file_upload

pytestmark = pytest.mark.browser


@pytest.fixture
def queued(monkeypatch: pytest.MonkeyPatch, settings: Any, tmp_path: Path) -> list[Any]:
    """Tasks the app enqueued; the test plays the worker so the page's polling is real."""
    settings.MEDIA_ROOT = tmp_path / "media"
    found: list[Any] = []
    for task in (analyze_run_task, run_capacity_task):
        monkeypatch.setattr(task, "apply_async",
                            lambda args, task=task, **options: found.append((task, args[0])))
    return found


def _work(queued: list[Any]) -> None:
    while queued:
        task, run_id = queued.pop(0)
        task(run_id)


def test_sweep_and_see_the_frontier(sized_page: Page, live_server: Any,  # noqa: F811
                                    queued: list[Any]) -> None:
    user = User.objects.create_user("ada", password="pw-ada-123")
    upload = file_upload(PHILLY)
    history = mix_services.history_create(
        owner_id=user.pk, upload=upload, name=PHILLY.name, size_bytes=upload.size or 0,
        options=PHILLY_OPTIONS).history
    assert history is not None
    _work(queued)  # the purchase-mix analysis
    page = sized_page
    urls: list[str] = []
    page.on("request", lambda request: urls.append(request.url))
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))

    sign_in(page, live_server.url, f"/history/{history.pk}", "ada", "pw-ada-123")
    page.click("#capacity-link a")
    page.wait_for_selector("#capacity-form")
    page.fill("#id_max_wait_hours", "1,4")
    page.check("#id_disciplines_1")  # backfill too
    page.click("#capacity-form button[type=submit]")
    page.wait_for_selector("#run-progress")
    assert len(queued) == 1
    _work(queued)  # the page polls the status view and reloads when the sweep is done
    for name in ("capacity-frontier", "capacity-queue"):
        page.wait_for_selector(f'[data-figure="{name}"][data-drawn="true"] .main-svg')
    result = CapacityRun.objects.get().result
    # 16.5 days: nothing may be committed, and the headline says so and why
    assert page.inner_text("#recommended") == result["headline"]
    assert result["headline"].startswith("Commit nothing") and "16.5 days" in result["headline"]
    assert page.locator("#capacity-points tr.chosen").count() == 1
    traces = page.evaluate(
        "document.querySelector('[data-figure=\"capacity-frontier\"]').data.length")
    assert traces >= 2 * 5 + 3  # 2 queues x 5 policy curves, 2 references, the star
    # Legends under or beside their plots, round ticks on both queue axes, nothing past an edge.
    assert not chart_problems(page), chart_problems(page)
    queue_ticks = page.locator('[data-figure="capacity-queue"] .y2tick text').all_text_contents()
    assert is_round_scale(queue_ticks), queue_ticks
    screenshot(page, "capacity")
    page.locator('[data-figure="capacity-frontier"]').scroll_into_view_if_needed()
    screenshot(page, "capacity-frontier", is_full_page=False)
    assert not errors, errors
    host = urlparse(live_server.url).netloc
    assert all(urlparse(u).netloc == host for u in urls if u.startswith("http")), urls
