"""The purchase-mix page in a real browser: the demand chart's committed line is what the
what-to-buy table buys (never the hindsight reference), provider and region at the top."""

from pathlib import Path
from typing import Any

import pyarrow.csv as pa_csv
import pytest
from django.contrib.auth.models import User
from playwright.sync_api import Page

from planner.purchase_mix.core.synthetic import synthetic_jobs_table
from planner.purchase_mix.tasks import analyze_run_task
from tests.browser.journeys import screenshot, sign_in

pytestmark = pytest.mark.browser

TRACES = """() => {
  const el = document.querySelector('[data-figure="chart-demand"]');
  return el.data.map(t => ({name: t.name, y: Array.from(t.y).slice(0, 2)}));
}"""


@pytest.fixture
def queued_runs(monkeypatch: pytest.MonkeyPatch, settings: Any, tmp_path: Path) -> list[int]:
    settings.MEDIA_ROOT = tmp_path / "media"
    queued: list[int] = []
    monkeypatch.setattr(analyze_run_task, "apply_async",
                        lambda args, **options: queued.append(args[0]))
    return queued


def test_the_chart_draws_what_the_table_buys(chromium_page: Page, live_server: Any,
                                             queued_runs: list[int], tmp_path: Path) -> None:
    jobs = tmp_path / "jobs100.csv"
    pa_csv.write_csv(synthetic_jobs_table(6000, seed=3, days=100, growth_over_window=0.0,
                                          interruptible_share=0.1), str(jobs))
    User.objects.create_user("ada", password="pw-ada-123")
    page = chromium_page
    sign_in(page, live_server.url, "/history/upload", "ada", "pw-ada-123")
    page.set_input_files("#id_file", str(jobs))
    page.select_option("#upload-form select[name=provider]", "aws")
    page.click("#upload-form button[type=submit]")
    page.wait_for_selector("#run-progress")
    while queued_runs:
        analyze_run_task(queued_runs.pop(0))
    page.wait_for_selector('[data-figure="chart-demand"][data-drawn="true"] .main-svg',
                           timeout=120_000)
    assert page.is_visible("#id_provider") and page.is_visible("#id_region")
    words = page.locator("#what-to-buy .c-words").all_inner_texts()
    assert words, "this history commits something"
    bought: dict[str, int] = {}
    for row in page.locator("#what-to-buy tbody tr").all():
        cells = row.locator("td").all_inner_texts()
        total = int(cells[0].split(", ")[-1].split(" GPU")[0])  # "(8 GPUs each, 16 GPUs)"
        bought[cells[1]] = bought.get(cells[1], 0) + total
    committed = {t["name"].split(" committed")[0]: t["y"][0]
                 for t in page.evaluate(TRACES) if "committed" in t["name"]}
    assert committed == bought
    assert all("what to buy" in t["name"] for t in page.evaluate(TRACES)
               if "committed" in t["name"])
    assert "Hindsight reference (not a recommendation)" in page.inner_text("#hindsight-heading")
    screenshot(page, "history-what-to-buy-100-days", is_full_page=False)
    page.locator("#what-to-buy-heading").scroll_into_view_if_needed()
    screenshot(page, "history-what-to-buy-table-100-days", is_full_page=False)
    page.locator('[data-figure="chart-demand"]').scroll_into_view_if_needed()
    screenshot(page, "history-demand-chart-100-days", is_full_page=False)
