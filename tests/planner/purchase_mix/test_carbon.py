"""A history's page and API document show its energy and CO2e per GPU type and region, and what
moving the burst to the lowest-carbon priced region would save, on the shipped catalog."""

import io

import pytest
from openpyxl import load_workbook

from planner.models import History
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

