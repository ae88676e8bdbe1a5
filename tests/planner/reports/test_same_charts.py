"""The plan page, its PDF and its XLSX draw the same charts of the same options (issue 38):
one set per chart (planner.core.chart_sets), named by what it holds."""

import html
import io
import json
import re
from pathlib import Path
from typing import Any

import pytest
from django.test import Client
from openpyxl import load_workbook

from planner.core.chart_text import chart_data
from planner.models import PlanScenario
from tests.planner.reports.conftest import pdf_text

pytestmark = pytest.mark.django_db
FIGURE = re.compile(r'<script id="plan-figure-\d+" type="application/json">(.*?)</script>', re.S)
OPTION_CHARTS = ("Time to train vs total cost", "Cost breakdown of", "Total cost vs emissions")


def _page_charts(client: Client, plan: PlanScenario) -> dict[str, dict[str, Any]]:
    page = client.get(f"/plans/{plan.id}").content.decode()
    found = {}
    for text in FIGURE.findall(page):
        figure = json.loads(html.unescape(text))
        title = figure["layout"]["title"]["text"]
        ids = {int(i) for trace in figure["data"] for i in trace.get("ids") or []}
        found[title] = {"ids": ids, "caption": (figure["layout"].get("meta") or {})
                        .get("caption", "")}
    return found


def test_page_pdf_and_xlsx_chart_the_same_options(
        ana_client: Client, done_plan: PlanScenario, tmp_path: Path) -> None:
    page = _page_charts(ana_client, done_plan)
    option_charts = {t: c for t, c in page.items() if t.startswith(OPTION_CHARTS)}
    assert len(option_charts) == 3, list(page)

    book = load_workbook(io.BytesIO(ana_client.get(f"/plans/{done_plan.id}/report.xlsx")
                                    .content))
    sheet = book["Chart data"]
    in_book: dict[str, set[int]] = {}
    for title, _series, _category, _x, _y, row, _caption in sheet.iter_rows(min_row=2,
                                                                           values_only=True):
        if row is not None:
            assert isinstance(row, int)  # a number, not text
            in_book.setdefault(title, set()).add(row)

    text = re.sub(r"\s+", " ", pdf_text(ana_client.get(f"/plans/{done_plan.id}/report.pdf")
                                        .content, tmp_path))
    for title, chart in option_charts.items():
        assert chart["ids"], title
        assert in_book[title] == chart["ids"], title
        assert title in text, title
        # the PDF wraps a long caption anywhere: compare without white space
        assert re.sub(r"\s", "", f"Charted: {chart['caption']}.") in re.sub(r"\s", "", text)
        assert chart["caption"].startswith(f"{len(chart['ids']):,} option")
    # The memory chart names whose memory it is, the same way in both.
    memory = next(t for t in page if t.startswith("Memory per GPU"))
    assert memory in text and memory.endswith("cheapest acceptable option")


def test_chart_data_tables_give_money_to_the_cent() -> None:
    figure = {"layout": {"title": {"text": "t"}, "xaxis": {"title": {"text": "Days"}},
                         "yaxis": {"title": {"text": "Total cost (USD)"}}},
              "data": [{"name": "a", "x": [1.23456], "y": [1234.5678]},
                       {"name": "b", "x": [2.0], "y": [223569.0]}]}
    rows = chart_data(figure).rows
    assert rows[0] == ("a", "1.2346", "1,234.57")
    assert rows[1] == ("b", "2", "223,569")


def test_the_pdf_ranked_table_wraps_to_its_last_column(
        ana_client: Client, done_plan: PlanScenario, tmp_path: Path) -> None:
    # a long unbreakable instance name (Azure's) no longer pushes the last column off the page
    result = dict(done_plan.result)
    first = dict(result["options"][0])
    first["instance_type"] = "Standard_ND96isr_MI300X_v5_with_a_very_long_unbroken_name"
    result["options"] = [first, *result["options"][1:]]
    done_plan.result = result
    done_plan.save(update_fields=["result"])
    text = pdf_text(ana_client.get(f"/plans/{done_plan.id}/report.pdf").content, tmp_path)
    table = text.split("Ranked configurations", 1)[1]
    assert "Price as" in table  # the last column's header
    assert table.count(str(first["as_of"])[:10]) >= 1
