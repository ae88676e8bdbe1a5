"""Plan a serving deployment in the browser: the form, the plan page with its charts drawn, and
the same cost per million tokens on the page, from the API and in the PDF, XLSX and CSV."""

import csv
import io
from pathlib import Path
from typing import Any

import openpyxl
import pytest
from django.contrib.auth.models import User
from playwright.sync_api import Page

from tests.browser.journeys import chart_problems, screenshot, sign_in_as_ada
from tests.planner.reports.conftest import pdf_text

pytestmark = pytest.mark.browser


def test_a_serving_plan_reads_the_same_cost_per_million_tokens_everywhere(
        chromium_page: Page, live_server: Any, ada: User, tmp_path: Path) -> None:
    page = chromium_page
    sign_in_as_ada(page, live_server.url)
    page.goto(f"{live_server.url}/serving/new")
    page.select_option("#id_model", "llama3.1-70b")
    page.select_option("#id_precision", "fp8")
    page.fill("#id_rate", "20")
    page.fill("#id_input_tokens", "2000")
    page.fill("#id_output_tokens", "300")
    page.fill("#id_ttft_p99_ms", "2000")
    page.fill("#id_tpot_p99_ms", "60")
    page.click("#serving-form button[type=submit]")
    page.wait_for_url("**/serving/*")
    page.wait_for_selector(".js-plotly-plot .scatterlayer .trace")
    assert chart_problems(page) == []
    shown_in = page.inner_text("#cheapest-usd-per-million-input")
    shown_out = page.inner_text("#cheapest-usd-per-million-output")
    plan_id = page.url.rstrip("/").split("/")[-1]
    api = page.request.get(f"{live_server.url}/api/serving/{plan_id}").json()
    cost = api["cards"]["cheapest"]["usd_per_million_tokens"]
    assert shown_in == f"${cost['input']:.3f}"
    assert shown_out == f"${cost['output']:.3f}"
    with page.expect_download() as pdf_download:
        page.click("#report-pdf")
    pdf = Path(pdf_download.value.path()).read_bytes()
    assert f"{cost['output']:.3f}" in pdf_text(pdf, tmp_path)
    base = f"{live_server.url}/serving/{plan_id}/report"
    rows = list(csv.DictReader(io.StringIO(
        page.request.get(f"{base}.csv").body().decode("utf-8-sig"))))
    assert f"{float(rows[0]['Per M output tokens (USD/M tokens)']):.3f}" == shown_out[1:]
    sheet = openpyxl.load_workbook(io.BytesIO(page.request.get(f"{base}.xlsx").body()))["Options"]
    headers = [c.value for c in next(sheet.iter_rows(max_row=1))]
    first = [c.value for c in next(sheet.iter_rows(min_row=2, max_row=2))]
    assert f"{first[headers.index('Per M input tokens (USD/M tokens)')]:.3f}" == shown_in[1:]
    screenshot(page, "serving-plan-70b-20rps")
