"""A user's calibration fit runs on a real worker over Redis: the runs page's status URL shows
it move from queued through the fit's own progress lines to done, and the fit becomes the
calibration the owner's simulations use."""

import time

import pytest
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from simulator import services
from simulator.core import Calibration
from simulator.models import CalibrationFit, UserCalibration
from tests.clients import signed_in
from tests.measured_runs import as_mine, csv_bytes, reference_rows

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]


def test_a_fit_runs_on_the_worker_with_progress_and_becomes_the_calibration(
    celery_worker_process: object,
) -> None:
    owner = User.objects.create_user("ana", password="pw-ana-123")
    client = signed_in(owner)
    runs_url = reverse("simulator:runs")
    upload = client.post(runs_url, {"file": SimpleUploadedFile(
        "runs.csv", csv_bytes(as_mine(reference_rows("bert"), value_scale=0.7)), "text/csv")})
    assert upload.status_code == 302
    assert client.post(reverse("simulator:runs_fit")).status_code == 302
    fit = CalibrationFit.objects.get(owner=owner)
    status_url = reverse("simulator:runs_fit_status", args=[fit.pk])
    messages: list[str] = []
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        status = client.get(status_url).json()
        messages.append(status["message"])
        if status["is_finished"]:
            break
        time.sleep(0.2)
    assert status["status"] == "done", status["error"]
    # the worker reported where it was, not only "queued" then "done"
    assert any(m.startswith(("choosing layouts", "fitting: pass")) for m in messages), messages
    own = UserCalibration.objects.get(owner=owner)
    assert own.is_active
    assert services.calibration_for(owner.id) == Calibration.from_dict(own.params)
    page = client.get(runs_url).content.decode()
    assert "median absolute error on your runs" in page and 'id="progress"' not in page
