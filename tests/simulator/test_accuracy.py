"""The accuracy page: out-of-family figures of the shipped simulator, public, with a CSV."""

import csv
import io

import pytest
from django.test import Client
from django.urls import reverse

from simulator.accuracy import ACCURACY_COLUMNS, accuracy_report

pytestmark = pytest.mark.django_db


def test_page_quotes_out_of_family_figures_beside_the_rule_of_thumb() -> None:
    response = Client().get(reverse("simulator:accuracy"))
    body = response.content.decode()
    assert response.status_code == 200
    report = accuracy_report()
    beaten, families = report.families_beaten()
    assert families == 17
    assert f"<strong>{beaten} of {families}</strong> families" in body
    overall = report.table("overall")[0]
    assert f"{overall['median_ape']:.1f} %" in body
    assert f"{overall['baseline_p90_ape']:.1f} %" in body
    for family in report.table("family"):
        assert family["group"] in body
    assert 'data-figure="figure-accuracy"' in body and 'id="figure-accuracy"' in body


def test_every_family_beats_the_rule_on_the_page() -> None:
    beaten, families = accuracy_report().families_beaten()
    assert beaten == families


def test_csv_download_has_every_run_and_no_formula_cells() -> None:
    response = Client().get(reverse("simulator:accuracy_csv"))
    assert response.status_code == 200 and response["Content-Type"].startswith("text/csv")
    rows = list(csv.reader(io.StringIO(response.content.decode())))
    assert rows[0] == ACCURACY_COLUMNS
    assert len(rows) - 1 == len(accuracy_report().rows) == 373
    assert not any(cell.startswith(("=", "+", "@")) for row in rows[1:] for cell in row)
