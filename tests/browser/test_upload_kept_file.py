"""An upload that names no GPU type, at 390 and 1366 px: the page says which column is missing
and marks the field that fixes it, keeps the chosen file, and the second submit (a default GPU
type chosen, no file chosen again) stores the history."""

import re
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import Page

from planner.models import History
from planner.purchase_mix.tasks import analyze_run_task
from tests.browser.journeys import fits_width, screenshot, sign_in, sized_page

__all__ = ["sized_page"]
pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
NO_GPU_TYPE = (
    "job_id,start,end,gpu_count\n"
    "j1,2024-03-01T00:00:00Z,2024-03-01T06:00:00Z,8\n"
    "j2,2024-03-01T02:00:00Z,2024-03-02T02:00:00Z,16\n"
)


@pytest.fixture
def queued_runs(monkeypatch: pytest.MonkeyPatch, settings: Any, tmp_path: Path) -> list[int]:
    """Run ids the app enqueued (the analysis itself is not part of this journey)."""
    settings.MEDIA_ROOT = tmp_path / "media"
    queued: list[int] = []
    monkeypatch.setattr(analyze_run_task, "apply_async",
                        lambda args, **options: queued.append(args[0]))
    return queued


def test_missing_gpu_type_points_at_the_default_gpu_field_and_keeps_the_file(
    sized_page: Page, live_server: Any, queued_runs: list[int], tmp_path: Path
) -> None:
    User.objects.create_user("ada", password="pw-ada-123")
    jobs = tmp_path / "cluster-jobs.csv"
    jobs.write_text(NO_GPU_TYPE)
    page = sized_page
    sign_in(page, live_server.url, "/history/upload", "ada", "pw-ada-123")
    page.set_input_files("#id_file", str(jobs))
    page.click("#upload-form button[type=submit]")

    field = page.locator("#id_default_gpu_type")
    assert field.get_attribute("aria-invalid") == "true"
    assert "id_default_gpu_type_error" in (field.get_attribute("aria-describedby") or "")
    assert page.inner_text("#id_default_gpu_type_error") == (
        "The file has no gpu_type column. Choose a Default GPU type, or add a gpu_type column "
        "to the file.")
    assert page.locator("#error-summary a[href='#id_default_gpu_type']").is_visible()
    assert "['" not in page.inner_text("main")
    assert "Using file cluster-jobs.csv" in page.inner_text("#staged-file")
    assert fits_width(page, "#upload-form")
    screenshot(page, "upload-missing-gpu-type")

    page.fill("#id_default_gpu_type", "a100-80gb")
    page.click("#upload-form button[type=submit]")  # no file chosen again
    page.wait_for_url(re.compile(r"/history/\d+$"))
    history = History.objects.get()
    assert (history.name, history.records) == ("cluster-jobs.csv", 2)
    assert len(queued_runs) == 1
