"""A history's page and API document show its energy and CO2e per GPU type and region, and what
moving the burst to the lowest-carbon priced region would save, on the shipped catalog."""

import io

import numpy as np
import pandas as pd
import pytest
from openpyxl import load_workbook

from planner.models import History
from planner.purchase_mix.carbon import _job_usage, _places
from planner.purchase_mix.core.carbon import history_carbon
from tests.planner.conftest import HELIOS, HELIOS_FIELDS, file_upload
from tests.planner.purchase_mix.test_views import _post

pytestmark = pytest.mark.django_db


def test_history_shows_energy_co2e_and_the_burst_move(
    user_client, loaded_catalog, eager_celery, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        _post(user_client, file_upload(HELIOS), **HELIOS_FIELDS)
    history = History.objects.get()
    with django_capture_on_commit_callbacks(execute=True):
        user_client.post(f"/history/{history.pk}/runs", {"provider": "aws", "region": "us-east-1"})
    document = user_client.get(f"/api/histories/{history.pk}").json()["document"]
    carbon = document["carbon"]
    stats = document["analysis"]["stats"]
    for place in carbon["by_place"]:
        assert (place["provider"], place["region"]) == ("aws", "us-east-1")
        assert place["gpu_hours"] == pytest.approx(stats[place["gpu_type"]]["gpu_hours"])
        assert place["co2e_kg"] == pytest.approx(
            place["energy_kwh"] * 1.135 * 379.069 / 1000)
    moves = [m for m in carbon["burst"] if m["co2e_saved_kg"] is not None]
    assert moves and all(m["co2e_saved_kg"] > 0 for m in moves)
    assert carbon["totals"]["co2e_saved_kg"] == pytest.approx(
        sum(m["co2e_saved_kg"] for m in moves))
    body = user_client.get(f"/history/{history.pk}").content.decode()
    assert 'id="history-carbon"' in body and 'id="burst-carbon"' in body
    assert "Moving the burst share to the lowest-carbon priced region" in body
    assert moves[0]["to_region"] in body
    book = load_workbook(io.BytesIO(user_client.get(f"/history/{history.pk}/report.xlsx").content))
    rows = list(book["Carbon"].iter_rows(values_only=True))
    assert rows[0][:6] == ("GPU type", "Provider", "Region", "GPU-hours (GPU-hours)",
                           "Energy (kWh)", "CO2e (kg CO2e)")
    assert rows[1][5] == pytest.approx(carbon["by_place"][0]["co2e_kg"])
    assert "Burst move" in book.sheetnames



def test_per_job_places_sum_exactly_as_one_row_per_job():
    """Jobs with their own provider and region (mixed case, blanks) get the same GPU-hours,
    energy and CO2e, to the last bit, as summing one usage row per job."""
    rng = np.random.default_rng(3)
    n_jobs = 20_000
    start = rng.integers(1_700_000_000, 1_710_000_000, n_jobs)
    jobs = pd.DataFrame({
        "start_epoch_s": start, "end_epoch_s": start + rng.integers(0, 100_000, n_jobs),
        "gpu_count": rng.integers(0, 9, n_jobs).astype(np.int32),
        "gpu_type": pd.Categorical(rng.choice(["A100", "H100", "L4"], n_jobs)),
        "provider": pd.Categorical(rng.choice(["aws", "AWS", "gcp", None], n_jobs)),
        "region": pd.Categorical(rng.choice(["us-east-1", "europe-north1", None], n_jobs)),
    })
    places = {"A100": ("aws", "us-east-1"), "H100": ("gcp", "europe-north1")}
    tdp = {"A100": 400.0, "H100": 700.0}
    factors = pd.DataFrame([
        {"provider": "aws", "region": "us-east-1", "g_co2e_per_kwh": 379.069, "pue": 1.135,
         "year": "2020", "source": "CCF"},
        {"provider": "gcp", "region": "europe-north1", "g_co2e_per_kwh": 39.0, "pue": 1.09,
         "year": "2024", "source": "Google"},
    ])
    for frame in (jobs, jobs.drop(columns=["provider", "region"])):
        hours = (frame["end_epoch_s"] - frame["start_epoch_s"]) / 3600.0 * frame["gpu_count"]
        one_row_per_job = _places(frame, places).assign(gpu_hours=hours)
        expected = history_carbon(one_row_per_job, tdp, factors)
        assert history_carbon(_job_usage(frame, places), tdp, factors) == expected
    by_place = {(p.provider, p.region) for p in expected}
    assert ("aws", "us-east-1") in by_place and ("", "(not priced)") in by_place
