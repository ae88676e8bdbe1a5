"""Main journey: log in, upload the Helios demand trace (columns picked from its header), watch
the progress, see every chart and the what-to-buy table."""

from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import Page

from planner.models import AnalysisRun
from planner.purchase_mix.tasks import analyze_run_task

pytestmark = pytest.mark.browser

HELIOS = (
    Path(__file__).resolve().parents[1] / "fixtures" / "traces"
    / "helios_earth_vcvlY_sequence_first5000.csv"
)
ALL_CHARTS = ("chart-demand", "chart-trend", "chart-mix", "chart-waterfall", "chart-cost")


@pytest.fixture
def queued_runs(monkeypatch: pytest.MonkeyPatch, settings: Any, tmp_path: Path) -> list[int]:
    """Run ids the app enqueued; the test plays the worker so the page's polling is real."""
    settings.MEDIA_ROOT = tmp_path / "media"
    queued: list[int] = []
    monkeypatch.setattr(analyze_run_task, "apply_async",
                        lambda args, **options: queued.append(args[0]))
    return queued


def _work(queued: list[int]) -> None:
    while queued:
        analyze_run_task(queued.pop(0))


def _wait_for_charts(page: Page, ids: tuple[str, ...]) -> None:
    for element_id in ids:
        page.wait_for_selector(f'[data-figure="{element_id}"][data-drawn="true"] .main-svg')


def test_upload_helios_and_see_the_charts(
    chromium_page: Page, live_server: Any, queued_runs: list[int]
) -> None:
    User.objects.create_user("ada", password="pw-ada-123")
    page = chromium_page
    urls: list[str] = []
    page.on("request", lambda request: urls.append(request.url))
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))

    page.goto(f"{live_server.url}/history/upload")
    page.fill("#id_username", "ada")
    page.fill("#id_password", "pw-ada-123")
    page.click("#login-form button[type=submit]")
    page.wait_for_url("**/history/upload")

    page.set_input_files("#id_file", str(HELIOS))
    page.select_option("#id_fmt", "usage")
    # The pickers list the file's own header once the file is chosen (history-upload.js).
    page.wait_for_selector('#id_map_timestamp option[value="running_gpu_num"]', state="attached")
    page.select_option("#id_map_timestamp", "time")
    page.select_option("#id_map_gpus_in_use", "running_gpu_num")
    page.fill("#id_default_gpu_type", "A100")
    page.click("#upload-form button[type=submit]")
    page.wait_for_selector("#run-progress")
    assert len(queued_runs) == 1

    _work(queued_runs)  # the page polls the status view and reloads when the run is done
    _wait_for_charts(page, ("chart-demand", "chart-trend", "chart-mix", "chart-waterfall"))

    # Provider and region are chosen at the top of the page, not inside a folded panel.
    assert page.is_visible("#id_provider") and page.is_visible("#id_region")
    page.select_option("#id_provider", "aws")
    page.select_option("#id_region", "us-east-1")
    page.click("#run-form button[type=submit]")
    page.wait_for_selector("#run-progress")
    _work(queued_runs)
    _wait_for_charts(page, ALL_CHARTS)

    assert (page.text_content("#chart-demand-plot .ytitle") or "") == "Average concurrent GPUs"
    assert "(USD)" in (page.text_content("#chart-cost-plot .ytitle") or "")
    assert "p4" in page.inner_text("#buying-where")
    assert "Hindsight reference (not a recommendation)" in page.inner_text("body")
    buy = page.inner_text("#what-to-buy")
    assert "Nothing to commit" in buy  # 3.5 days of history
    # said in the GPU type's folded section ("why this, term by term")
    assert "a commitment needs at least 30 days" in (page.text_content("main") or "")
    assert "break-even at" in (page.text_content(".not-bought") or "")  # no table of zeros
    assert AnalysisRun.objects.filter(status="done").count() == 2
    external = [u for u in urls if urlparse(u).hostname not in {"localhost", "127.0.0.1", None}]
    assert external == [] and errors == []
    page.screenshot(path=str(_screenshot_path("history-what-to-buy-helios")), full_page=True)


def _screenshot_path(name: str) -> Path:
    folder = Path(__file__).resolve().parents[2] / "var" / "screenshots"
    folder.mkdir(parents=True, exist_ok=True)
    return folder / f"{name}.png"
