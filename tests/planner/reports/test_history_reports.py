"""A purchase-mix analysis's report: the page's figures in every format, inert user text."""

import csv
import io
import re
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.test import Client
from openpyxl import load_workbook

from planner.models import AnalysisRun, History
from pricing.selectors import stale_before
from tests.planner.conftest import csv_upload
from tests.planner.reports.conftest import pdf_text

pytestmark = pytest.mark.django_db
HYPERLINK = '=HYPERLINK("http://example.com","x")'
QUOTED = HYPERLINK.replace('"', '""')
JOBS = (
    "job_id,start,end,gpu_type,gpu_count,interruptible,team\n"
    f'"{QUOTED}",2024-01-01T00:00:00Z,2024-01-01T05:00:00Z,A100-80GB,8,false,"{QUOTED}"\n'
    "b,2024-01-01T02:00:00Z,2024-01-02T02:00:00Z,A100-80GB,4,true,ml\n"
    "c,2024-01-02T00:00:00Z,2024-01-03T12:00:00Z,H100,8,false,vision\n"
)


@pytest.fixture
def history(ana_client: Client, loaded_catalog: None, eager_celery: None,
            django_capture_on_commit_callbacks: Any) -> History:
    with django_capture_on_commit_callbacks(execute=True):
        # duplicate_ids: asked for by the newer upload form, ignored by the older one.
        ana_client.post("/history/upload", {"file": csv_upload(JOBS, f"{HYPERLINK}.csv"),
                                            "fmt": "generic", "duplicate_ids": "refuse"})
    stored = History.objects.get()
    assert AnalysisRun.objects.get(history=stored).status == "done"
    return stored


def _page_cost(client: Client, history: History) -> str:
    page = client.get(f"/history/{history.pk}").content.decode()
    found = re.search(r"Replayed on your history</dt><dd>\$([\d,.]+)", page)
    assert found, "the history page shows no cost"
    assert f'href="/history/{history.pk}/report.xlsx"' in page
    return found.group(1)


def test_every_format_shows_the_cost_of_the_page(ana_client: Client, history: History,
                                                 tmp_path: Path) -> None:
    cost = _page_cost(ana_client, history)
    cost_usd = float(cost.replace(",", ""))
    xlsx = load_workbook(io.BytesIO(ana_client.get(f"/history/{history.pk}/report.xlsx").content))
    assert {"Summary", "Purchase mix", "Hourly demand", "Sources", "Assumptions"} <= set(
        xlsx.sheetnames)
    summary = {r[0]: r[1] for r in xlsx["Summary"].iter_rows(min_row=2, values_only=True)}
    # The page prints whole dollars from $1,000 up (the one formatter); the file keeps cents.
    replayed = summary["What to buy, replayed: cost over the history"]
    assert replayed == pytest.approx(cost_usd, abs=0.5)
    demand = xlsx["Hourly demand"]
    assert demand.freeze_panes == "A2" and demand["B1"].value.endswith("(GPUs)")
    assert isinstance(demand["B2"].value, int | float)  # a number, not text

    rows = list(csv.DictReader(io.StringIO(
        ana_client.get(f"/api/histories/{history.pk}/report.csv").content.decode("utf-8-sig"))))
    assert sum(float(r["Cost (USD)"]) for r in rows) == pytest.approx(cost_usd, abs=0.51)

    pdf = ana_client.get(f"/history/{history.pk}/report.pdf")
    text = re.sub(r"\s+", " ", pdf_text(pdf.content, tmp_path))
    assert f"What to buy, replayed: cost over the history ${cost}" in text
    assert "Concurrent GPUs (GPUs)" in text

    html = ana_client.get(f"/history/{history.pk}/report.html").content.decode()
    assert f"${cost}" in html and "<script src" not in html


def test_a_formula_from_the_job_history_stays_inert_text(ana_client: Client, history: History,
                                                         tmp_path: Path) -> None:
    book = load_workbook(io.BytesIO(ana_client.get(f"/history/{history.pk}/report.xlsx").content))
    cells = [c for sheet in book for row in sheet.iter_rows() for c in row
             if isinstance(c.value, str) and "HYPERLINK" in c.value]
    assert "'" + HYPERLINK in [c.value for c in cells]  # the team, as text
    for cell in cells:
        assert cell.data_type == "s" and not cell.value.startswith(("=", "+", "-", "@"))
    out = tmp_path / "mix.csv"
    call_command("export_report", "history", str(history.pk), "--out", str(out),
                 stdout=io.StringIO())
    for row in csv.reader(io.StringIO(out.read_text(encoding="utf-8-sig"))):
        assert not any(cell.startswith(("=", "+", "-", "@", "\t", "\r")) for cell in row)
    teams = book["Teams"]
    assert {c.value for c in teams["A"]} == {"Team", "vision", "ml", "'" + HYPERLINK}


def test_history_reports_are_private(bob_client: Client, history: History) -> None:
    for url in (f"/history/{history.pk}/report.csv", f"/api/histories/{history.pk}/report.csv"):
        assert bob_client.get(url).status_code == 404
    assert bob_client.post(f"/history/{history.pk}/reports").status_code == 404


def test_recommend_mix_writes_the_report(tmp_path: Path, loaded_catalog: None) -> None:
    jobs = tmp_path / "jobs.csv"
    jobs.write_text(JOBS)
    out = tmp_path / "mix.html"
    call_command("recommend_mix", str(jobs), "--report", str(out), stdout=io.StringIO(),
                 stderr=io.StringIO())
    html = out.read_text()
    assert "Purchase mix for jobs.csv" in html and 'id="plotly-js"' in html
    with pytest.raises(Exception, match="format: '.doc'"):
        call_command("recommend_mix", str(jobs), "--report", str(tmp_path / "x.doc"),
                     stdout=io.StringIO(), stderr=io.StringIO())


def test_exported_sources_flag_stale_prices_as_the_page_does(
        ana_client: Client, history: History, settings: Any) -> None:
    """'Prices used' on the page flags prices older than PRICE_STALE_DAYS; the report's
    Sources sheet says each price's age on the report's day and flags the same ones."""
    from datetime import date

    from django.utils import timezone

    book = load_workbook(io.BytesIO(
        ana_client.get(f"/history/{history.pk}/report.xlsx").content))
    sheet = book["Sources"]
    headers = [c.value for c in sheet[1]]
    rows = [dict(zip(headers, r, strict=True))
            for r in sheet.iter_rows(min_row=2, values_only=True) if r[0]]
    assert rows
    today = timezone.now().date()  # the report's day (UTC)
    prices = ana_client.get(f"/api/histories/{history.pk}").json()["document"]["prices"]
    cutoffs = stale_before()  # stale: older than the provider's newest price by 180 days
    assert len(prices) == len(rows)
    for row, price in zip(rows, prices, strict=True):
        as_of = row["As of"]
        as_of = as_of.date() if hasattr(as_of, "date") else date.fromisoformat(str(as_of))
        age = (today - as_of).days
        assert row["Age (days)"] == age
        expected = "stale" if price["as_of"] < cutoffs[price["provider"]] else ""
        assert (row["Stale"] or "") == expected
    assert any(row["Stale"] == "stale" for row in rows)  # the mid-2025 SkyPilot spot
    assert any(not row["Stale"] for row in rows)  # AWS's January 2026 list is its newest
