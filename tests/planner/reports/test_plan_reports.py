"""A plan's report in every format shows the page's figures; owner only; PDF as a task."""

import copy
import csv
import io
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.test import Client
from openpyxl import load_workbook

from planner.models import PlanScenario, Report
from planner.plans.presenters import figures_json
from tests.planner.reports.conftest import pdf_text

pytestmark = pytest.mark.django_db


def _best(plan: PlanScenario) -> dict[str, Any]:
    """The first recommendation's option: the page's first card and the reports' headline (it
    is not the cheapest when the cheapest is likely to miss the deadline)."""
    first = plan.result["recommendations"][0]["row_index"]
    return next(o for o in plan.result["options"] if o["row_index"] == first)


def _page_total(client: Client, plan: PlanScenario) -> str:
    """The first recommendation's total as the plan page prints it ("$185,292 total")."""
    page = client.get(f"/plans/{plan.id}").content.decode()
    found = re.search(r"\$([\d,]+) total", page)
    assert found, "the plan page shows no total"
    return found.group(1)


def test_every_format_shows_the_recommended_total_of_the_page(
    ana_client: Client, done_plan: PlanScenario, tmp_path: Path
) -> None:
    total = _page_total(ana_client, done_plan)
    best = _best(done_plan)
    assert f"{best['total_usd']:,.0f}" == total

    pdf = ana_client.get(f"/plans/{done_plan.id}/report.pdf")
    assert pdf.status_code == 200 and pdf["Content-Type"] == "application/pdf"
    text = pdf_text(pdf.content, tmp_path)
    assert f"Expected total cost ${total}" in re.sub(r"\s+", " ", text)
    assert best["instance_type"] in text and "Page 1 of" in text

    xlsx = ana_client.get(f"/plans/{done_plan.id}/report.xlsx")
    book = load_workbook(io.BytesIO(xlsx.content))
    assert book.sheetnames == ["Summary", "Options", "Sources", "Assumptions", "Inputs",
                               "Storage", "Chart data"]
    options = book["Options"]
    headers = [c.value for c in options[1]]
    assert options.freeze_panes == "A2"
    first = dict(zip(headers, [c.value for c in options[2]], strict=True))
    cheapest = min((o for o in done_plan.result["options"] if o["rank"]),
                   key=lambda o: o["rank"])  # the options table stays cheapest first
    assert first["Total (USD)"] == pytest.approx(cheapest["total_usd"])
    assert first["Time to train (days)"] == pytest.approx(cheapest["time_to_train_hours"] / 24)
    assert first["Instance type"] == cheapest["instance_type"]
    summary = {row[0]: row[1] for row in book["Summary"].iter_rows(min_row=2, values_only=True)}
    assert summary["Expected total cost"] == pytest.approx(best["total_usd"])
    # storage and egress rates say what they price, their basis and date, as the page does
    sources = {(row[0], row[1]): row[4]
               for row in book["Assumptions"].iter_rows(min_row=2, values_only=True)}
    assert sources[("Storage", "AWS")].startswith("listed: S3 Standard us-east-1")
    assert sources[("Egress", "AWS")].endswith("as of 2026-01")

    rows = list(csv.DictReader(io.StringIO(
        ana_client.get(f"/plans/{done_plan.id}/report.csv").content.decode("utf-8-sig"))))
    assert float(rows[0]["Total (USD)"]) == pytest.approx(cheapest["total_usd"])
    assert rows[0]["Price as of"] == cheapest["as_of"]

    html = ana_client.get(f"/plans/{done_plan.id}/report.html").content.decode()
    assert f"${total}" in html


def test_html_report_needs_nothing_from_outside(ana_client: Client,
                                                done_plan: PlanScenario) -> None:
    html = ana_client.get(f"/api/plans/{done_plan.id}/report.html").content.decode()
    library = re.search(r'<script id="plotly-js">(.*?)</script>', html, re.S)
    assert library and "Plotly" in library.group(1)[:5000]
    for reference in ('src="http', "@import", "url(http", "<link", "<img", "<script src"):
        assert reference not in html
    # The embedded plotly.min.js has a logo link in its code (off: displaylogo false); the
    # document itself links nowhere.
    assert 'href="http' not in html.replace(library.group(1), "")
    assert "displaylogo: false" in html
    # One figure per chart, the plan page's own: Pareto, cost, carbon, scaling and memory.
    assert html.count('type="application/json"') == len(figures_json(done_plan.result)) == 5
    assert "Memory per GPU of the cheapest acceptable option" in html


def test_reports_are_private_and_a_bad_format_names_the_field(
    ana_client: Client, bob_client: Client, done_plan: PlanScenario
) -> None:
    for url in (f"/plans/{done_plan.id}/report.csv", f"/api/plans/{done_plan.id}/report.csv"):
        assert bob_client.get(url).status_code == 404
    bad = ana_client.get(f"/plans/{done_plan.id}/report.docx")
    assert bad.status_code == 400 and b"format: 'docx'" in bad.content
    api_bad = ana_client.get(f"/api/plans/{done_plan.id}/report.docx")
    assert api_bad.status_code == 400 and "format" in api_bad.json()["detail"]
    assert bob_client.post(f"/plans/{done_plan.id}/reports", {"format": "pdf"}).status_code == 404


def test_an_unfinished_plan_has_no_report_yet(ana_client: Client,
                                              done_plan: PlanScenario) -> None:
    PlanScenario.objects.filter(pk=done_plan.id).update(status="running", result=None)
    response = ana_client.get(f"/api/plans/{done_plan.id}/report.xlsx")
    assert response.status_code == 400 and "not done yet" in response.json()["detail"]


def test_pdf_renders_in_the_background_and_stays_downloadable(
    ana_client: Client, bob_client: Client, done_plan: PlanScenario, eager_celery: None,
    django_capture_on_commit_callbacks: Any, tmp_path: Path,
) -> None:
    page = ana_client.get(f"/plans/{done_plan.id}").content.decode()
    assert f'action="/plans/{done_plan.id}/reports"' in page and "PDF report" in page
    with django_capture_on_commit_callbacks(execute=True):
        response = ana_client.post(f"/plans/{done_plan.id}/reports", {"format": "pdf"})
    report = Report.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/reports/{report.id}"
    report.refresh_from_db()
    assert report.status == "done" and report.size_bytes and report.progress_pct == 100
    listing = ana_client.get("/reports/").content.decode()
    assert f"/reports/{report.id}/file" in listing
    download = ana_client.get(f"/reports/{report.id}/file")
    content = b"".join(download.streaming_content)
    assert content.startswith(b"%PDF") and len(content) == report.size_bytes
    assert _best(done_plan)["instance_type"] in pdf_text(content, tmp_path)
    assert bob_client.get(f"/reports/{report.id}/file").status_code == 404
    assert bob_client.get(f"/reports/{report.id}/status").status_code == 404
    assert f"/reports/{report.id}" not in bob_client.get("/reports/").content.decode()


def test_rendering_twice_keeps_one_file(done_plan: PlanScenario, eager_celery: None,
                                        django_capture_on_commit_callbacks: Any) -> None:
    from planner.plans.reports import plan_report
    from planner.reports.services import report_create, report_execute
    from planner.runs import Attempt

    with django_capture_on_commit_callbacks(execute=True):
        stored = report_create(owner_id=done_plan.owner_id,
                               document=plan_report(scenario=done_plan), fmt="csv")
    report_execute(report_id=stored.id, attempt=Attempt())
    stored.refresh_from_db()
    assert stored.attempts == 1 and stored.status == "done"
    with stored.file.open("rb") as file:
        assert file.read().decode("utf-8-sig").startswith("Rank,Provider")
    assert len(list((Path(stored.file.path).parent).iterdir())) == 1


def test_pdf_pages_are_a4_and_turn_into_images(ana_client: Client, done_plan: PlanScenario,
                                               tmp_path: Path) -> None:
    pdf = tmp_path / "plan.pdf"
    pdf.write_bytes(ana_client.get(f"/plans/{done_plan.id}/report.pdf").content)
    info = subprocess.run(["pdfinfo", str(pdf)], capture_output=True, text=True, check=True)
    assert re.search(r"Page size: +841\.89 x 595\.2\d* pts \(A4\)", info.stdout)  # landscape
    subprocess.run(["pdftoppm", "-png", "-r", "80", str(pdf), str(tmp_path / "page")],
                   check=True, timeout=120)
    pages = sorted(tmp_path.glob("page-*.png"))
    assert len(pages) >= 4 and all(p.stat().st_size > 5_000 for p in pages)
    text = pdf_text(pdf.read_bytes(), tmp_path)
    for axis in ("Expected time to train (days)", "Expected total cost (USD)",
                 "Throughput (tokens/s)", "GPUs (count, log scale)"):
        assert axis in text


def test_export_report_command_and_plan_report_option(done_plan: PlanScenario,
                                                      tmp_path: Path) -> None:
    out = tmp_path / "plan.xlsx"
    call_command("export_report", "plan", str(done_plan.id), "--format", "xlsx", "--out",
                 str(out), stdout=io.StringIO())
    summary = load_workbook(out)["Summary"]
    assert summary["B2"].value.startswith("'=HYPERLINK")  # the plan's name, inert
    csv_out = tmp_path / "cli.csv"
    call_command("plan", "--workload", "llama2-7b", "--tokens", "1e12", "--providers", "aws",
                 "--purchase-options", "on_demand", "--report", str(csv_out),
                 stdout=io.StringIO(), stderr=io.StringIO())
    rows = list(csv.DictReader(io.StringIO(csv_out.read_text(encoding="utf-8-sig"))))
    assert rows and {r["Provider"] for r in rows} == {"AWS"}  # in words, not the code


def test_a_name_with_control_characters_still_exports_as_xlsx(
        ana_client: Client, done_plan: PlanScenario) -> None:
    done_plan.name = "run\x01 \x0bone"  # the API takes any text but NUL as a plan's name
    done_plan.save(update_fields=["name"])
    response = ana_client.get(f"/plans/{done_plan.id}/report.xlsx")
    assert response.status_code == 200
    assert load_workbook(io.BytesIO(response.content))["Summary"]["B2"].value == "run one"


def test_a_report_file_that_cannot_be_written_is_a_one_line_error(
        done_plan: PlanScenario, tmp_path: Path) -> None:
    missing = tmp_path / "no-such-folder" / "plan.xlsx"
    with pytest.raises(CommandError, match=f"cannot write {re.escape(str(missing))}: No such"):
        call_command("export_report", "plan", str(done_plan.id), "--out", str(missing),
                     stdout=io.StringIO())
    with pytest.raises(CommandError, match="report: cannot write .*: no folder"):
        call_command("plan", "--workload", "llama2-7b", "--tokens", "1e12", "--providers",
                     "aws", "--purchase-options", "on_demand", "--report", str(missing),
                     stdout=io.StringIO(), stderr=io.StringIO())


@pytest.mark.parametrize(("name", "message"), [
    ("plan.doc", "report: format: '.doc' is not one of"),
    ("folder.xlsx", "report: cannot write .*: it is a folder"),
])
def test_a_bad_report_path_is_refused_before_the_plan_is_computed(
        db: None, tmp_path: Path, name: str, message: str) -> None:
    (tmp_path / "folder.xlsx").mkdir()
    # An unknown GPU would be refused by the computation: the report's path is refused first.
    with pytest.raises(CommandError, match=message):
        call_command("plan", "--workload", "llama2-7b", "--tokens", "1e12", "--gpus", "zzz",
                     "--report", str(tmp_path / name), stdout=io.StringIO(),
                     stderr=io.StringIO())


def test_without_weasyprint_the_pdf_button_says_what_is_missing(
    ana_client: Client, done_plan: PlanScenario, monkeypatch: pytest.MonkeyPatch
) -> None:
    from planner.reports.render.pdf import pdf_missing

    monkeypatch.setitem(__import__("sys").modules, "weasyprint", None)  # not installed
    pdf_missing.cache_clear()
    try:
        page = ana_client.get(f"/plans/{done_plan.id}").content.decode()
        assert "PDF unavailable: PDF export needs the weasyprint package" in page
        assert "libpango-1.0-0" in page and "PDF report</button>" not in page
        pdf = ana_client.get(f"/api/plans/{done_plan.id}/report.pdf")
        assert pdf.status_code == 503 and "weasyprint" in pdf.json()["detail"]
        assert ana_client.get(f"/plans/{done_plan.id}/report.xlsx").status_code == 200
    finally:
        pdf_missing.cache_clear()


def test_printing_the_plan_page_gives_the_report_not_the_navigation(
    ana_client: Client, done_plan: PlanScenario, tmp_path: Path, settings: Any
) -> None:
    """The page printed by a real layout engine (WeasyPrint, print media) with app.css."""
    import weasyprint

    page = ana_client.get(f"/plans/{done_plan.id}").content.decode()
    static = Path(settings.BASE_DIR) / "static"

    def fetch(url: str, *args: Any, **kwargs: Any) -> Any:
        path = static / url.split("/static/", 1)[1]
        return weasyprint.urls.URLFetcherResponse(url, body=path.read_bytes(),
                                                  headers={"Content-Type": "text/css"})

    pdf = weasyprint.HTML(string=re.sub(r"<script.*?</script>", "", page, flags=re.S),
                          base_url="http://testserver/", url_fetcher=fetch).write_pdf()
    text = pdf_text(pdf, tmp_path)
    assert "Top configurations" in text and done_plan.result["recommendations"][0]["title"] in text
    for screen_only in ("What if", "Save scenario", "Export this plan", "API docs"):
        assert screen_only not in text


def test_lowest_carbon_card_and_emissions_are_in_every_format(
    ana_client: Client, done_plan: PlanScenario, tmp_path: Path
) -> None:
    card = next(c for c in done_plan.result["recommendations"] if c["key"] == "lowest_carbon")
    chosen = next(o for o in done_plan.result["options"] if o["row_index"] == card["row_index"])
    page = ana_client.get(f"/plans/{done_plan.id}").content.decode()
    assert 'data-card="lowest_carbon"' in page and f"{chosen['co2e_kg']:,.0f} kg CO2e" in page

    text = re.sub(r"\s+", " ", pdf_text(
        ana_client.get(f"/plans/{done_plan.id}/report.pdf").content, tmp_path))
    assert "Lowest carbon" in text and "kg CO2e" in text and "gCO2e/kWh" in text
    assert "location-based" in text

    book = load_workbook(io.BytesIO(ana_client.get(f"/plans/{done_plan.id}/report.xlsx").content))
    summary = list(book["Summary"].iter_rows(values_only=True))
    assert any(row[0] == "Lowest carbon" for row in summary)
    options = book["Options"]
    headers = [c.value for c in options[1]]
    assert "CO2e (kg CO2e)" in headers and "Energy (kWh)" in headers

    html = ana_client.get(f"/plans/{done_plan.id}/report.html").content.decode()
    assert "Lowest carbon" in html and "Total cost vs emissions" in html


def test_the_pdf_states_goodput_and_envelope_and_no_deadline_reads_n_a(
    ana: Any, ana_client: Client, done_plan: PlanScenario, plan_document: dict[str, Any],
    tmp_path: Path,
) -> None:
    best = _best(done_plan)
    text = re.sub(r"\s+", " ", pdf_text(
        ana_client.get(f"/plans/{done_plan.id}/report.pdf").content, tmp_path))
    line = f"+{best['overhead_gpu_hours_pct']:.1f} % GPU-hours, ${best['overhead_usd']:,.0f}"
    assert f"Expected failures, restarts and overhead {line} (goodput" in text
    assert f"Calibration envelope {best['envelope_note'] or 'inside'}" in text
    assert re.search(r"\bGoodput\b", text)  # the options table's column (its header wraps)
    assert "Chance of missing the deadline" in text and "no deadline set" not in text

    # the same plan without a deadline: no chance of missing one is shown, anywhere
    result = copy.deepcopy(plan_document["result"])
    result["constraints"]["deadline_hours"] = None
    undated = PlanScenario.objects.create(
        owner=ana, name="no deadline", inputs=plan_document["inputs"], result=result,
        status=PlanScenario.Status.DONE, progress_pct=100)
    page = ana_client.get(f"/plans/{undated.id}").content.decode()
    assert ('<td class="c-miss num"><span class="small" title="no deadline or budget set">'
            'n/a') in page
    assert '<td class="c-miss num">0.0 %' not in page
    text = re.sub(r"\s+", " ", pdf_text(
        ana_client.get(f"/plans/{undated.id}/report.pdf").content, tmp_path))
    assert "Chance of missing the deadline or budget no deadline or budget set" in text
    rows = list(csv.DictReader(io.StringIO(
        ana_client.get(f"/plans/{undated.id}/report.csv").content.decode("utf-8-sig"))))
    assert {row["P(miss deadline) (%)"] for row in rows} == {""}


def test_exported_sources_flag_prices_that_were_stale_when_planned(
    ana: Any, ana_client: Client, done_plan: PlanScenario
) -> None:
    """The page flags stale prices (more than PRICE_STALE_DAYS older than the newest price of
    their provider when planned); the reports said only their age."""
    from datetime import date, timedelta

    result = copy.deepcopy(done_plan.result)
    cutoffs = result["prices"]["stale_before"]
    ranked = [o for o in result["options"] if o.get("rank")]
    # On the shipped catalog none of this plan's ranked prices is stale: AWS's January 2026
    # list is 300-odd days old but it is AWS's newest.
    assert result["prices"]["n_stale"] == 0
    assert not [o for o in ranked if o["as_of"] < cutoffs[o["provider"]]]
    assert max(o["age_days"] for o in ranked) > result["prices"]["stale_days"]
    # One price a day older than its provider's stale day is flagged, in the Sources sheet
    # and the summary, and no other.
    old = ranked[0]
    old["as_of"] = (date.fromisoformat(cutoffs[old["provider"]]) - timedelta(days=1)).isoformat()
    result["prices"]["n_stale"] = 1
    plan = PlanScenario.objects.create(owner=ana, name="stale", inputs=done_plan.inputs,
                                       result=result, status=PlanScenario.Status.DONE,
                                       progress_pct=100)
    book = load_workbook(io.BytesIO(ana_client.get(f"/plans/{plan.id}/report.xlsx").content))
    sheet = book["Sources"]
    headers = [c.value for c in sheet[1]]
    rows = [dict(zip(headers, row, strict=True))
            for row in sheet.iter_rows(min_row=2, values_only=True) if row[0]]

    def as_of(row: dict[str, Any]) -> str:
        value = row["As of"]
        return value.date().isoformat() if hasattr(value, "date") else str(value)[:10]

    assert {r["Stale"] or "" for r in rows if as_of(r) == old["as_of"]} == {"stale"}
    assert {r["Stale"] or "" for r in rows if as_of(r) != old["as_of"]} == {""}
    summary = {row[0]: row[1] for row in book["Summary"].iter_rows(min_row=2, values_only=True)}
    assert summary["Prices dated"].endswith("; 1 of the feasible options use a stale price")
    page = ana_client.get(f"/plans/{plan.id}").content.decode()
    assert page.count('<span class="stale" title="stale when it is more than') == 1


def test_the_report_gives_the_combined_chance_the_rule_reads_like_the_page(
    ana: Any, ana_client: Client, plan_document: dict[str, Any], tmp_path: Path
) -> None:
    """With a budget the pick may go over it: the report said only its chance of missing the
    deadline, the page's card the combined chance of missing the deadline or the budget."""
    from django.utils import timezone

    from planner.plans import services
    from planner.plans.scenario import scenario_from_input
    from tests.planner.reports.conftest import LLAMA

    cheapest = min(o["total_usd"] for o in plan_document["result"]["options"] if o["rank"])
    raw = {**LLAMA, "budget_usd": round(cheapest * 1.01)}  # a tight budget: overruns likely
    scenario = scenario_from_input(raw, today=timezone.now().date())
    result = services.plan_compute(scenario=scenario, owner_id=None)
    plan = PlanScenario.objects.create(owner=ana, name="budget", inputs=scenario.data,
                                       result=result, status=PlanScenario.Status.DONE,
                                       progress_pct=100)
    best = _best(plan)
    assert best["miss_probability"] > best["deadline_miss_probability"] + 0.001
    page = ana_client.get(f"/plans/{plan.id}").content.decode()
    combined = f"{best['miss_probability'] * 100:.1f}"
    assert f"{combined}% chance of missing the 30.0 days deadline or the" in page

    book = load_workbook(io.BytesIO(ana_client.get(f"/plans/{plan.id}/report.xlsx").content))
    summary = {row[0]: row[1] for row in book["Summary"].iter_rows(min_row=2, values_only=True)}
    pick = plan.result["pick"]  # the report's "Recommended", the page's pick
    assert summary["Chance of missing the deadline or budget"] == pytest.approx(
        pick["miss_probability"] * 100, abs=0.05)
    assert summary["Acceptable"].startswith("yes" if pick["acceptable"] else "no")
    sheet = book["Options"]
    headers = [c.value for c in sheet[1]]
    first = dict(zip(headers, next(sheet.iter_rows(min_row=2, values_only=True)), strict=True))
    assert first["Rank"] == 1, first
    assert first["P(miss deadline or budget) (%)"] == pytest.approx(
        next(o for o in plan.result["options"] if o["rank"] == 1)["miss_probability"] * 100,
        abs=0.05)
    assert first["Acceptable"] in {"yes", "no"}
    text = re.sub(r"\s+", " ", pdf_text(ana_client.get(f"/plans/{plan.id}/report.pdf").content,
                                          tmp_path))
    assert (f"Chance of missing the deadline or budget {pick['miss_probability'] * 100:.1f}%"
            in text)
