"""Fitting your own calibration in a real browser, on a real worker over Redis: upload
measured runs, press "Fit my calibration", watch the progress bar, and the page shows the
fit's outcome once the worker is done (progress.js reloads it)."""

from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import Page

from simulator.models import CalibrationFit, UserCalibration
from tests.browser.journeys import screenshot, sign_in
from tests.measured_runs import as_mine, csv_bytes, reference_rows

pytestmark = [pytest.mark.browser, pytest.mark.integration, pytest.mark.django_db(transaction=True)]


def _measured_runs(tmp_path: Path) -> Path:
    """Five published ResNet-50 runs as if measured on a cluster 30 % slower."""
    path = tmp_path / "my_runs.csv"
    path.write_bytes(csv_bytes(as_mine(reference_rows("resnet50"), value_scale=0.7)))
    return path


def test_a_fit_shows_its_progress_then_its_outcome(
    page_factory: Any, app_server: str, celery_worker_process: object, settings: Any,
    tmp_path: Path,
) -> None:
    # The server process checks passwords with the production hashers, not the test's MD5.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.PBKDF2PasswordHasher"]
    ada = User.objects.create_user("ada", password="pw-ada-123")
    page: Page = page_factory(1366)
    sign_in(page, app_server, "/simulations/runs", "ada", "pw-ada-123")
    page.set_input_files("#id_file", str(_measured_runs(tmp_path)))
    page.click("button:has-text('Upload runs')")
    page.wait_for_selector("text=Stored 5 new and replaced 0 runs.")
    page.click("button:has-text('Fit my calibration')")
    # Back on the runs page with the fit queued or running: a bar, and the button disabled.
    page.wait_for_selector("#progress progress, .fit-outcome")
    if page.locator("#progress").count():
        assert page.is_disabled("button:has-text('Fit my calibration')")
    # The fit takes about 15 s alone; under the parallel suite the other core runs the slow
    # cross-validation fixtures, so the page may wait several times that.
    page.wait_for_selector(".fit-outcome", timeout=240_000)
    outcome = page.inner_text(".fit-outcome")
    assert "with 5 of your runs" in outcome and "% before" in outcome and "% after" in outcome
    assert page.locator("#progress").count() == 0
    assert "Your simulations use your calibration" in page.inner_text("main")
    assert CalibrationFit.objects.get(owner=ada).status == "done"
    assert UserCalibration.objects.get(owner=ada).is_active
    screenshot(page, "calibration-fit-done")
