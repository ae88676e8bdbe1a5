"""The pricing explorer exports its filtered table (every page) as CSV."""

import csv
import io

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db


def test_filtered_prices_download_as_csv_with_units(client: Client, loaded_catalog: None) -> None:
    page = client.get("/prices/?provider=gcp&purchase_option=spot")
    assert 'id="prices-csv"' in page.content.decode()
    response = client.get("/prices/?provider=gcp&purchase_option=spot&format=csv")
    assert response["Content-Type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(response.content.decode("utf-8-sig"))))
    assert len(rows) > 100  # more than one page of 100
    assert {r["Purchase option"] for r in rows} == {"Spot / preemptible"}
    assert all(float(r["Price (USD/instance-hour)"]) > 0 and r["As of"] for r in rows)
    assert page.context["page"].paginator.count == len(rows)
