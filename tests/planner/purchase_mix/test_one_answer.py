"""One answer per analysis: the page's what-to-buy table and summary, the demand chart's
committed lines, the four report formats, the API document and `recommend_mix` (text and
--json) give the same counts, terms and dollars for one 100-day, 6,000-job history."""

import csv
import io
import json
import re
from pathlib import Path
from typing import Any

import pyarrow.csv as pa_csv
import pytest
from django.core.management import call_command
from django.test import Client
from django.utils.html import escape
from openpyxl import load_workbook

from planner.core import formatting as fmt
from planner.models import AnalysisRun, History
from planner.purchase_mix.core.synthetic import synthetic_jobs_table
from pricing.selectors import stale_before
from tests.planner.conftest import file_upload
from tests.planner.reports.conftest import pdf_text

pytestmark = pytest.mark.django_db


@pytest.fixture
def jobs_file(tmp_path: Path) -> Path:
    path = tmp_path / "jobs100.csv"
    table = synthetic_jobs_table(6000, seed=3, days=100, growth_over_window=0.0,
                                 interruptible_share=0.1)
    pa_csv.write_csv(table, str(path))
    return path


@pytest.fixture
def analysed(user_client: Client, loaded_catalog: None, eager_celery: None, jobs_file: Path,
             django_capture_on_commit_callbacks: Any) -> History:
    with django_capture_on_commit_callbacks(execute=True):
        user_client.post("/history/upload", {"file": file_upload(jobs_file), "fmt": "generic",
                                            "provider": "aws", "duplicate_ids": "refuse"})
    history = History.objects.get()
    assert AnalysisRun.objects.get(history=history).status == "done"
    return history


def _page_lines(page: str) -> list[tuple[str, str, str, str]]:
    table = page.split('id="what-to-buy"', 1)[1].split("</table>", 1)[0]
    return re.findall(r'<td class="c-words">(.*?)</td>.*?<td class="c-term">(.*?)</td>.*?'
                      r'<td class="num c-upfront">(.*?)</td><td class="num c-hourly">(.*?)/hour',
                      table, flags=re.S)


def _chart(page: str, element_id: str) -> dict[str, Any]:
    found = re.search(rf'<script id="{element_id}" type="application/json">(.*?)</script>',
                      page, flags=re.S)
    assert found, element_id
    return json.loads(found.group(1))


def _committed_gpus(figure: dict[str, Any]) -> dict[str, int]:
    lines = {}
    for trace in figure["data"]:
        found = re.fullmatch(r"(.+) committed, what to buy \((\d+) GPUs\)", trace["name"])
        if found:
            assert trace["y"][0] == trace["y"][1] == int(found.group(2))
            lines[found.group(1)] = int(found.group(2))
    return lines


def _expected_gpus(lines: list[dict[str, Any]]) -> dict[str, int]:
    totals: dict[str, int] = {}
    for line in lines:
        totals[line["gpu_type"]] = totals.get(line["gpu_type"], 0) + line["gpus"]
    return totals


def _rounded(rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    return [tuple(round(v, 2) if isinstance(v, int | float) else v for v in row) for row in rows]


def test_page_chart_reports_api_and_cli_give_one_answer(
        user_client: Client, analysed: History, jobs_file: Path, tmp_path: Path) -> None:
    document = user_client.get(f"/api/histories/{analysed.pk}").json()["document"]
    buy = document["what_to_buy"]
    lines = buy["lines"]
    assert lines, "this history commits something"
    assert "recommendation" not in document
    assert document["hindsight_reference"]["words"].startswith("What you would have bought")
    # Like with like: every committed line is measured against on-demand of its own place.
    for item in buy["types"]:
        offer = item["offer"]
        assert offer["provider"] == "aws"
        assert item["alternative"]["usd_per_hour"] == offer["on_demand_usd_per_hour"]
    assert all(0 < line["break_even_utilization_pct"] <= 100 for line in lines)

    expected = [(line["words"], line["term_words"], fmt.usd(line["upfront_usd"]),
                 fmt.usd(line["usd_per_hour"])) for line in lines]
    for line in lines:
        each = line["gpus"] // line["count"]
        assert line["words"] == (f"{line['count']} x {line['instance_type']} "
                                 f"({each} GPUs each, {line['gpus']} GPUs)")
    page = user_client.get(f"/history/{analysed.pk}").content.decode()
    assert _page_lines(page) == expected
    assert f"<dt>Upfront, all lines</dt><dd>{fmt.usd(buy['upfront_usd'])}</dd>" in page

    # The demand chart draws what to buy, never the hindsight reference.
    assert _committed_gpus(_chart(page, "chart-demand")) == _expected_gpus(lines)
    hindsight_gpus = {plan["offer"]["gpu_type"]: sum(c["gpus"] for c in plan["commitments"])
                      for plan in document["hindsight_reference"]["plans"]}
    assert hindsight_gpus != _expected_gpus(lines), "the case must tell the two apart"

    rows = list(csv.DictReader(io.StringIO(user_client.get(
        f"/history/{analysed.pk}/report.csv").content.decode("utf-8-sig"))))
    as_csv = [(float(r["Instances (count)"]), float(r["GPUs (count)"]), r["Buy"],
               float(r["Upfront (USD)"]), float(r["Effective (USD/h)"])) for r in rows]
    numbers = [(line["count"], line["gpus"], line["term_words"], line["upfront_usd"],
                line["usd_per_hour"]) for line in lines]
    assert _rounded(as_csv) == _rounded(numbers)

    book = load_workbook(io.BytesIO(user_client.get(
        f"/history/{analysed.pk}/report.xlsx").content))
    sheet = list(book["What to buy"].iter_rows(values_only=True))
    header = list(sheet[0])
    picked = [(row[header.index("Instances (count)")], row[header.index("GPUs (count)")],
               row[header.index("Buy")], row[header.index("Upfront (USD)")],
               row[header.index("Effective (USD/h)")]) for row in sheet[1:]]
    assert _rounded(picked) == _rounded(numbers)
    summary = {r[0]: r[1] for r in book["Summary"].iter_rows(min_row=2, values_only=True)}
    assert summary["What to buy now: upfront"] == pytest.approx(buy["upfront_usd"])

    text = re.sub(r"\s+", " ", pdf_text(user_client.get(
        f"/history/{analysed.pk}/report.pdf").content, tmp_path))
    html = user_client.get(f"/history/{analysed.pk}/report.html").content.decode()
    for (_words, _term, upfront, _hourly), line in zip(expected, lines, strict=True):
        assert upfront in html
        # the buying rule's one line, word for word (the PDF may break it across lines)
        assert line["sentence"] in text and escape(line["sentence"]) in html
        assert escape(line["sentence"]) in page
    assert f"What to buy now: upfront {fmt.usd(buy['upfront_usd'])}" in text

    out = io.StringIO()
    call_command("recommend_mix", str(jobs_file), "--provider", "aws", "--json", stdout=out)
    assert json.loads(out.getvalue())["document"]["what_to_buy"]["lines"] == lines
    out = io.StringIO()
    call_command("recommend_mix", str(jobs_file), "--provider", "aws", stdout=out)
    printed = out.getvalue()
    for line in lines:
        assert f"  {line['sentence']}; starting {line['starting']}" in printed


def test_one_split_of_gpu_hours_on_page_carbon_api_and_reports(
        user_client: Client, analysed: History, tmp_path: Path) -> None:
    """Each type's committed / on-demand / spot split is the replay's, everywhere: the card,
    the carbon burst, the API and the XLSX, never the sizing's first-year forecast."""
    document = user_client.get(f"/api/histories/{analysed.pk}").json()["document"]
    buy = document["what_to_buy"]
    replayed = {plan["offer"]["gpu_type"]: plan["expected"] for plan in buy["replay"]["plans"]}
    bursts = {m["gpu_type"]: m["burst_gpu_hours"] for m in document["carbon"]["burst"]}
    page = user_client.get(f"/history/{analysed.pk}").content.decode()
    told_apart = False
    for item in buy["types"]:
        expected = replayed[item["gpu_type"]]
        demand = expected["demand_gpu_hours"]
        assert item["committed_share_pct"] == pytest.approx(expected["coverage_pct"] or 0)
        assert item["on_demand_share_pct"] == pytest.approx(
            100 * expected["on_demand_gpu_hours"] / demand)
        assert item["spot_share_pct"] == pytest.approx(100 * expected["spot_gpu_hours"] / demand)
        assert (item["committed_share_pct"] + item["on_demand_share_pct"]
                + item["spot_share_pct"]) == pytest.approx(100)
        assert bursts[item["gpu_type"]] == pytest.approx(expected["on_demand_gpu_hours"])
        assert (f"committed {fmt.count(expected['committed_gpu_hours_used'])} "
                f"({fmt.number(item['committed_share_pct'], 1)}%), on-demand "
                f"{fmt.count(expected['on_demand_gpu_hours'])}") in page
        forecast = item["sizing"]["coverage_pct"]["p50"] * (100 - item["spot_share_pct"]) / 100
        gap = abs(forecast - item["committed_share_pct"])
        told_apart |= bool(item["sizing"]["layers"]) and gap > 1
    assert told_apart, "the case must tell the forecast and the replay apart"
    assert "Forecast in the sizing (first year" in page

    book = load_workbook(io.BytesIO(user_client.get(
        f"/history/{analysed.pk}/report.xlsx").content))
    types = list(book["Per GPU type"].iter_rows(values_only=True))
    mix = list(book["Purchase mix"].iter_rows(values_only=True))
    committed = {row[0]: row[types[0].index("Committed (%)")] for row in types[1:]}
    coverage = {row[0]: row[mix[0].index("Coverage (%)")] for row in mix[1:]}
    assert committed == pytest.approx(coverage)


def _rows(page: str, table_id: str) -> list[str]:
    table = page.split(f'id="{table_id}"', 1)[1].split("</table>", 1)[0]
    return re.findall(r"<tr[ >].*?</tr>", table.split("<tbody>", 1)[1], flags=re.S)


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html)).strip()


def test_prices_used_flag_stale_prices_and_tell_reservations_apart(
        user_client: Client, analysed: History, settings: Any) -> None:
    document = user_client.get(f"/api/histories/{analysed.pk}").json()["document"]
    prices = document["prices"]
    settings.PRICE_STALE_DAYS = 100_000
    rows = _rows(user_client.get(f"/history/{analysed.pk}").content.decode(), "prices-used")
    assert len(rows) == len(prices) and not any('class="stale"' in row for row in rows)
    for row, price in zip(rows, prices, strict=True):
        assert f'<span class="tag {price["basis"]}"' in row
        # The catalog GPU by its name (NVIDIA's "A100 SXM4-80GB"), not its slug.
        assert f"<td>{price['accelerator_name']}</td>" in row and price["accelerator"] not in row
    # Two reservations of one instance, term and payment differ by their offering class.
    options = [(p["gpu_type"], _text(row.split('class="c-option">', 1)[1].split("</td>")[0]))
               for p, row in zip(prices, rows, strict=True)]
    assert len(set(options)) == len(options), "every price row reads differently"
    assert any(text.endswith(", convertible") for _, text in options)
    # A day older than the newest price of its provider is stale: the superseded snapshots
    # (reservations of 2025-11, spot of 2025-06 beside AWS's 2026-01 list) are flagged, the
    # newest are not, whatever today is.
    settings.PRICE_STALE_DAYS = 1
    cutoffs = stale_before()
    rows = _rows(user_client.get(f"/history/{analysed.pk}").content.decode(), "prices-used")
    flagged = ['class="stale" title="stale when it is more than 1 days older' in r for r in rows]
    assert flagged == [p["as_of"] < cutoffs[p["provider"]] for p in prices]
    assert any(flagged) and not all(flagged)


def test_summary_backtest_and_lookback_say_what_they_measure(
        user_client: Client, analysed: History) -> None:
    document = user_client.get(f"/api/histories/{analysed.pk}").json()["document"]
    buy, page = document["what_to_buy"], user_client.get(f"/history/{analysed.pk}").content.decode()
    replay = buy["replay"]
    worst = _text(page.split('id="worst-case">', 1)[1].split("</dd>")[0])
    assert worst.startswith(f"{fmt.usd(buy['first_year_worst_case_usd'])} saved in the first year")
    quiet = _text(page.split('id="p10-week">', 1)[1].split("</dd>")[0])
    assert f"over the same {replay['n_hours']:,} replayed hours" in quiet
    # The look-back row of the window what to buy was sized on is what to buy.
    mine = _text(page.split('id="lookback-recommended"', 1)[1].split("</tr>")[0])
    assert f"{fmt.usd(buy['usd_per_hour'])}/h" in mine
    assert fmt.usd(replay["total"]["savings_usd"]) in mine
    # Backtest: both hindsight optima, each with its own purchase, and the spans named.
    strategies = {s["name"]: s for s in document["backtest"]["strategies"]}
    assert min(s["whole_term_cost_usd"] for s in strategies.values()) == pytest.approx(
        strategies["hindsight_whole_term"]["whole_term_cost_usd"])
    test_hours = f"{document['backtest']['test_hours']:,}"
    assert f"Test cost ({test_hours} h)" in page
    assert "Whole-term cost (test + rest of each term)" in page
    assert 'id="backtest-hindsight_whole_term"' in page


def test_prices_used_discounts_compare_prices_of_the_same_age(
        user_client: Client, analysed: History) -> None:
    """A spot or commitment discount in "Prices used" is the price list's: against the
    on-demand price of a nearby date, which it names (it was against the chosen on-demand
    price of any date: AWS spot of June 2025 against on-demand of January 2026)."""
    from datetime import date

    from pricing.discounts import NEARBY_DAYS

    prices = user_client.get(f"/api/histories/{analysed.pk}").json()["document"]["prices"]
    discounted = [p for p in prices if p["purchase_option"] != "on_demand"]
    assert discounted
    for price in discounted:
        note = price["discount_note"]
        if price["discount_pct"] is None:
            assert note.startswith(("no discount", "above the on-demand price")), note
            continue
        assert note.startswith("against the on-demand price of "), note
        base = date.fromisoformat(note.removeprefix("against the on-demand price of ")[:10])
        assert abs((date.fromisoformat(price["as_of"]) - base).days) <= NEARBY_DAYS
    rows = _rows(user_client.get(f"/history/{analysed.pk}").content.decode(), "prices-used")
    for row, price in zip(rows, prices, strict=True):
        if price["discount_note"]:
            assert f'title="{price["discount_note"]}"' in row
