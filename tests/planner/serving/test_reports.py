"""A serving plan's report reads the same cost per million tokens in PDF, XLSX, CSV and HTML
as its API and page."""

import csv
import io
import json
import re
from pathlib import Path

import openpyxl
import pytest
from django.test import Client

from tests.planner.reports.conftest import pdf_text

pytestmark = pytest.mark.django_db
EXAMPLE = {"model": "llama3.1-70b", "precision": "fp8", "rate": 20, "input_tokens": 2000,
           "output_tokens": 300, "ttft_p99_ms": 2000, "tpot_p99_ms": 60}


def test_every_report_format_reads_the_api_cost_per_million_tokens(
        client_sam: Client, tmp_path: Path) -> None:
    body = client_sam.post("/api/serving", json.dumps(EXAMPLE),
                           content_type="application/json").json()
    cost = body["options"][0]["usd_per_million_tokens"]
    base = f"/serving/{body['id']}/report"

    rows = list(csv.DictReader(io.StringIO(
        client_sam.get(f"{base}.csv").content.decode("utf-8-sig"))))
    assert float(rows[0]["Per M output tokens (USD/M tokens)"]) == pytest.approx(
        cost["output"], abs=5e-5)
    assert float(rows[0]["Per M input tokens (USD/M tokens)"]) == pytest.approx(
        cost["input"], abs=5e-5)

    book = openpyxl.load_workbook(io.BytesIO(client_sam.get(f"{base}.xlsx").content))
    sheet = book["Options"]
    headers = [c.value for c in next(sheet.iter_rows(max_row=1))]
    first = [c.value for c in next(sheet.iter_rows(min_row=2, max_row=2))]
    assert first[headers.index("Per M output tokens (USD/M tokens)")] == pytest.approx(
        cost["output"])

    html = client_sam.get(f"{base}.html").content.decode()
    assert f"{cost['output']:.3f}" in html
    pdf = client_sam.get(f"{base}.pdf")
    if pdf.status_code == 503:
        pytest.skip(pdf.content.decode())
    assert f"{cost['output']:.3f}" in pdf_text(pdf.content, tmp_path)


def test_an_unknown_report_format_is_a_400_naming_it(client_sam: Client) -> None:
    body = client_sam.post("/api/serving", json.dumps(EXAMPLE),
                           content_type="application/json").json()
    response = client_sam.get(f"/serving/{body['id']}/report.docx")
    assert response.status_code == 400 and response.content.decode().startswith("format:")


def test_every_option_of_the_report_and_page_says_its_band_and_price_provenance(
        client_sam: Client) -> None:
    body = client_sam.post("/api/serving", json.dumps(EXAMPLE),
                           content_type="application/json").json()
    rows = list(csv.DictReader(io.StringIO(client_sam.get(
        f"/serving/{body['id']}/report.csv").content.decode("utf-8-sig"))))
    assert len(rows) == len(body["options"])
    for row, option in zip(rows, body["options"], strict=True):
        assert row["Price basis"] == option["price_basis"] in {"listed", "derived"}
        assert row["Price source"] == option["price_source"]
        assert float(row["P99 TPOT band P10 (ms)"]) == pytest.approx(
            option["tpot_p99_ms_p10"], abs=0.05)
        assert float(row["P99 TTFT band P90 (ms)"]) == pytest.approx(
            option["ttft_p99_ms_p90"], abs=0.5)
    html = client_sam.get(f"/serving/{body['id']}/report.html").content.decode()
    first = body["options"][0]
    assert f"{first['price_source']} (as of {first['price_as_of']}, {first['price_basis']})" \
        in html
    assert (f"P99 TPOT {first['tpot_p99_ms']:.1f} ms (P10-P90 {first['tpot_p99_ms_p10']:,.1f} "
            f"to {first['tpot_p99_ms_p90']:,.1f} ms)") in html
    page = client_sam.get(body["url"]).content.decode()
    cells = re.findall(r'class="c-price">([^<]*)<', page)
    assert cells[0] == (f"{first['price_source']}, as of {first['price_as_of']}, "
                        f"{first['price_basis']}") and len(cells) == len(body["options"])
    tpot = re.findall(r'class="c-tpot">([^<]*)<', page)
    assert tpot[0] == (f"{first['tpot_p99_ms']:.1f} ({first['tpot_p99_ms_p10']:.1f}-"
                       f"{first['tpot_p99_ms_p90']:.1f})")
