"""Daily profiles, request logs, replicas at peak and trough, the purchase mix and the what-if
URL as a user meets them: the form, the page, the API, the command and the reports."""

import csv
import io
import json
import math
import re
from io import StringIO
from pathlib import Path
from urllib.parse import urlencode

import numpy as np
import openpyxl
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.test import Client

from planner.serving.core.fields import parse_serving_input
from planner.serving.core.plan import ServingOption
from planner.serving.core.plan import ServingPlan as RankedPlan
from planner.serving.core.traffic import DailyTraffic
from planner.serving.models import ServingPlan
from planner.serving.purchase import mix_document
from tests.planner.reports.conftest import pdf_text

pytestmark = pytest.mark.django_db
PROFILE = "2,1,1,1,1,2,4,7,9,10,10,10,9,9,10,10,9,8,7,6,5,4,3,2"
EXAMPLE = {"model": "llama3.1-70b", "precision": "fp8", "rate": "20", "input_tokens": "2000",
           "output_tokens": "300", "ttft_p99_ms": "2000", "tpot_p99_ms": "60",
           "purchase_options": ["on_demand"]}


def _log(days: int = 2) -> bytes:
    """Hour h of the day has 36 x (h + 1) requests (0.01 x (h + 1) requests/s at most)."""
    lines = ["timestamp,input_tokens,output_tokens"]
    for day in range(days):
        for hour in range(24):
            n = 36 * (hour + 1)
            for k in range(n):
                t = 1_767_225_600 + (day * 24 + hour) * 3600 + k * 3600 // n
                lines.append(f"{t},{1000 + k % 500},{200 + k % 100}")
    return "\n".join(lines).encode()


def _api(client: Client, **changes: object):
    body = {**EXAMPLE, **changes}
    return client.post("/api/serving", json.dumps(body), content_type="application/json")


def test_the_form_plans_a_daily_profile_and_the_page_shows_peak_and_trough_replicas(
        client_sam: Client) -> None:
    response = client_sam.post("/serving/new", {**EXAMPLE, "daily_profile": PROFILE})
    assert response.status_code == 302
    plan = ServingPlan.objects.get()
    best = plan.result["cards"]["cheapest"]
    assert best["replicas"] > best["replicas_at_trough"] >= 1
    assert best["replicas_by_hour"][9] == best["replicas"]  # hour 9 is the busiest
    page = client_sam.get(response["Location"]).content.decode()
    assert re.search(rf'id="cheapest-replicas-peak">{best["replicas"]}<', page)
    assert re.search(rf'id="cheapest-replicas-trough">{best["replicas_at_trough"]}<', page)
    assert "Replicas over the day" in page and "serving-figure-2" in page
    mix = plan.result["mix"]
    assert mix["is_forecast"] and mix["committed_instances"] == 0
    assert "a forecast, not a measured history" in page
    assert f'${mix["all_on_demand_usd_per_month"]:,.0f}' in page
    assert mix["all_on_demand_usd_per_month"] == pytest.approx(best["usd_per_month"])


def test_the_form_plans_from_an_uploaded_log_and_a_bad_row_is_named_with_nothing_saved(
        client_sam: Client) -> None:
    log = SimpleUploadedFile("requests.csv", _log(), content_type="text/csv")
    response = client_sam.post("/serving/new", {**EXAMPLE, "rate": "", "request_log": log})
    assert response.status_code == 302
    plan = ServingPlan.objects.get()
    traffic = plan.result["traffic"]
    assert traffic["source"] == "request_log" and traffic["rows"] == 2 * 36 * 300
    assert traffic["peak_rate_per_s"] == pytest.approx(0.24)
    assert traffic["trough_rate_per_s"] == pytest.approx(0.01)
    prompts = [1000 + k % 500 for _ in range(2) for h in range(24) for k in range(36 * (h + 1))]
    assert traffic["prompt_tokens_p99"] == pytest.approx(np.percentile(prompts, 99))
    assert traffic["prompt_tokens_mean"] == pytest.approx(np.mean(prompts))
    assert plan.inputs["rate"] == pytest.approx(0.24)
    page = client_sam.get(response["Location"]).content.decode()
    assert "Traffic from a request log: 21,600 requests" in page

    bad = _log().replace(b"\n1767229200,", b"\nyesterday,", 1)
    response = client_sam.post("/serving/new", {
        **EXAMPLE, "request_log": SimpleUploadedFile("bad.csv", bad)})
    assert response.status_code == 422
    assert "line 38, timestamp: &#x27;yesterday&#x27; is not a date and time" in \
        response.content.decode()
    assert ServingPlan.objects.count() == 1


def test_a_log_over_the_upload_limit_is_a_413(client_sam: Client, settings) -> None:
    settings.UPLOAD_MAX_BYTES = 1000
    response = client_sam.post("/serving/new", {
        **EXAMPLE, "request_log": SimpleUploadedFile("big.csv", _log())})
    assert response.status_code == 413
    assert "the upload limit is 0 MB" in response.content.decode()
    assert not ServingPlan.objects.exists()


def test_the_api_plans_a_profile_and_returns_hourly_replicas_and_the_mix(
        client_sam: Client) -> None:
    response = _api(client_sam, daily_profile=PROFILE, scale_up_minutes=15)
    assert response.status_code == 201, response.content[:300]
    body = response.json()
    first = body["options"][0]
    assert len(first["replicas_by_hour"]) == 24 and len(first["instances_by_hour"]) == 24
    assert first["replicas_at_trough"] == min(first["replicas_by_hour"])
    assert body["traffic"]["hourly_rate_per_s"][1] == pytest.approx(2.0)
    mix = body["mix"]
    assert mix["scale_up_minutes"] == 15 and mix["lines"]
    assert mix["mix_usd_per_month"] <= mix["all_on_demand_usd_per_month"]


@pytest.mark.parametrize(("changes", "detail"), [
    ({"daily_profile": "1,2,3"}, "daily_profile: expected 24 comma-separated numbers"),
    ({"daily_profile": ",".join(["1"] * 23 + ["x"])}, "daily_profile: hour 23: expected a"),
    ({"scale_up_minutes": 90}, "scale_up_minutes: must be between 0 and 60"),
])
def test_the_api_refuses_a_bad_profile_naming_the_field(
        client_sam: Client, changes: dict[str, object], detail: str) -> None:
    response = _api(client_sam, **changes)
    assert response.status_code == 422
    assert response.json()["detail"].startswith(detail)
    assert not ServingPlan.objects.exists()


def test_the_api_plans_from_a_multipart_log_and_names_a_bad_line(client_sam: Client) -> None:
    form = {k: v for k, v in EXAMPLE.items() if k not in ("rate", "input_tokens")}
    response = client_sam.post("/api/serving/log", {
        **form, "request_log": SimpleUploadedFile("requests.csv", _log())})
    assert response.status_code == 201, response.content[:300]
    assert response.json()["traffic"]["rows"] == 21_600
    bad = _log().replace(b",1000,200\n", b",1000,-4\n", 1)
    response = client_sam.post("/api/serving/log", {
        **form, "request_log": SimpleUploadedFile("bad.csv", bad)})
    assert response.status_code == 422
    assert response.json()["detail"].startswith(
        "request_log: line 2, output_tokens: '-4' is not a whole number of tokens")
    assert ServingPlan.objects.count() == 1


def test_the_whatif_url_plans_without_saving_and_saves_on_request(client_sam: Client) -> None:
    query = urlencode({"model": "llama3.1-70b", "rate": "20", "daily_profile": PROFILE})
    response = client_sam.get(f"/serving/whatif?{query}")
    assert response.status_code == 200
    page = response.content.decode()
    assert "address, not stored" in page
    assert "id=\"cheapest-replicas-trough\"" in page
    assert not ServingPlan.objects.exists()
    saved = client_sam.post(f"/serving/whatif/save?{query}")
    assert saved.status_code == 302
    plan = ServingPlan.objects.get()
    assert plan.inputs["daily_profile"].startswith("0.2,0.1,")
    assert plan.inputs["ttft_p99_ms"] == 2000  # left out of the URL: the form's default
    # The stored plan links its own what-if, which plans the same cheapest option.
    detail = client_sam.get(saved["Location"]).content.decode()
    link = re.search(r'href="(/serving/whatif\?[^"]+)" id="serving-whatif-link"', detail)
    again = client_sam.get(link.group(1).replace("&amp;", "&")).content.decode()
    cost = plan.result["cards"]["cheapest"]["usd_per_million_tokens"]["output"]
    assert f'id="cheapest-usd-per-million-output">${cost:.3f}<' in again


@pytest.mark.parametrize(("query", "field", "words"), [
    ({"model": "llama3.1-70b", "rate": "fast"}, "rate", "expected a number"),
    ({"model": "llama3.1-70b", "rate": "20", "daily_profile": "1,2"}, "daily_profile",
     "expected 24 comma-separated numbers"),
    ({"model": "gpt-9", "rate": "20"}, "model", "is not one of the available choices"),
])
def test_a_bad_whatif_parameter_is_a_400_naming_the_field(
        client_sam: Client, query: dict[str, str], field: str, words: str) -> None:
    response = client_sam.get(f"/serving/whatif?{urlencode(query)}")
    assert response.status_code == 400
    page = response.content.decode()
    error = re.search(rf'id="id_{field}_error">([^<]+)<', page)
    assert error and words in error.group(1)
    assert not ServingPlan.objects.exists()


def test_the_whatif_needs_a_sign_in(client: Client) -> None:
    response = client.get("/serving/whatif?model=llama3.1-70b&rate=20")
    assert response.status_code == 302 and "login" in response["Location"]


def test_reports_carry_replicas_at_peak_and_trough_and_what_to_buy(
        client_sam: Client, tmp_path: Path) -> None:
    body = _api(client_sam, daily_profile=PROFILE).json()
    first, mix = body["options"][0], body["mix"]
    base = f"/serving/{body['id']}/report"
    rows = list(csv.DictReader(io.StringIO(
        client_sam.get(f"{base}.csv").content.decode("utf-8-sig"))))
    assert int(rows[0]["Replicas at peak"]) == first["replicas"]
    assert int(rows[0]["Replicas at trough"]) == first["replicas_at_trough"]
    book = openpyxl.load_workbook(io.BytesIO(client_sam.get(f"{base}.xlsx").content))
    lines = [row[0].value for row in book["What to buy"].iter_rows(min_row=2)]
    assert mix["lines"][0] in lines
    hours = [[c.value for c in row] for row in book["Hours"].iter_rows(min_row=2)]
    assert [h[2] for h in hours] == body["cards"]["cheapest"]["replicas_by_hour"]
    html = client_sam.get(f"{base}.html").content.decode()
    assert "Replicas over the day" in html and "What to buy" in html
    pdf = " ".join(pdf_text(client_sam.get(f"{base}.pdf").content, tmp_path).split())
    assert "Replicas over the day" in pdf and "What to buy" in pdf
    assert f"Replicas at trough {first['replicas_at_trough']}" in pdf


def test_plan_serving_takes_a_daily_profile_and_a_request_log(
        loaded_catalog: None, tmp_path: Path) -> None:
    args = ["--model", "llama3.1-70b", "--rate", "20", "--input-tokens", "2000",
            "--output-tokens", "300", "--ttft-p99-ms", "2000", "--tpot-p99-ms", "60"]
    out = StringIO()
    call_command("plan_serving", *args, "--daily-profile", PROFILE, "--json", stdout=out)
    plan = json.loads(out.getvalue())
    assert plan["options"][0]["replicas_at_trough"] < plan["options"][0]["replicas"]
    assert plan["mix"]["lines"]
    path = tmp_path / "requests.csv"
    path.write_bytes(_log())
    out = StringIO()
    call_command("plan_serving", "--model", "llama3.1-70b", "--request-log", str(path),
                 stdout=out)
    text = out.getvalue()
    assert "replicas peak" in text and "What to buy" in text
    path.write_bytes(b"timestamp,input_tokens,output_tokens\n2026-01-01,x,1\n")
    with pytest.raises(CommandError, match=r"^--request-log: request_log: line 2, "
                                           r"input_tokens: 'x'"):
        call_command("plan_serving", "--model", "llama3.1-70b", "--request-log", str(path))


def _35_day_log() -> tuple[list[float], DailyTraffic]:
    """35 days of one daily shape (requests/s by hour; 1 request/s per replica)."""
    day = [1.5] * 8 + [2.5] * 8 + [1.8] * 8
    history = tuple(day[h % 24] for h in range(24 * 35))
    return day, DailyTraffic(tuple(day), "request_log", history_rate_per_s=history, rows=1,
                             prompt_tokens_mean=2000, prompt_tokens_p99=4000,
                             output_tokens_mean=300, output_tokens_p99=600)


def test_a_35_day_log_commits_the_base_on_the_catalogs_aws_prices(user: object) -> None:
    """The mix reads the instance's commitment prices from the catalog (one read) and the
    buying rule commits the always-on base of a 35-day history; 3-year terms need 90 days."""
    day, log = _35_day_log()
    checked = parse_serving_input({"model": "llama3.1-70b", "precision": "fp8",
                                   "ttft_p99_ms": 2000, "tpot_p99_ms": 60}, request_log=log)
    instances = tuple(math.ceil(r) for r in day)
    option = ServingOption(
        "aws", "p5.48xlarge", "ap-northeast-1", "on_demand", "H100 SXM5-80GB", 8, 3, 3, 24,
        1000.0, (900.0, 1100.0), 40.0, (30.0, 50.0), 1.0, 0.1, 0.5, 0.2, 0.8, 1.0, 1.0,
        "2026-01-01", "test", "listed", 2, 2, instances, instances)
    mix = mix_document(checked, RankedPlan((option,), 1, ()))
    assert mix["is_available"] and not mix["is_forecast"] and mix["history_days"] == 35
    assert mix["base_instances"] == 2 == mix["committed_instances"]
    (line,) = mix["committed"]
    assert line["term"] == "reserved_1y" and line["count"] == 2
    assert mix["lines"][0] == line["sentence"]
    assert line["sentence"].startswith("2 x p5.48xlarge (8 GPUs each, 16 GPUs) in AWS "
                                       "ap-northeast-1, ")
    assert mix["mix_usd_per_month"] < mix["all_on_demand_usd_per_month"]
    assert mix["on_demand_usd_per_hour"] == pytest.approx(68.8)


def test_the_api_refuses_a_log_over_the_upload_limit_with_a_413(
        client_sam: Client, settings) -> None:
    settings.UPLOAD_MAX_BYTES = 1000
    response = client_sam.post("/api/serving/log", {
        "model": "llama3.1-70b", "precision": "fp8",
        "request_log": SimpleUploadedFile("big.csv", _log())})
    assert response.status_code == 413
    assert response.json()["detail"].startswith(
        "request_log: the file is 0.4 MB; the upload limit is")
    assert not ServingPlan.objects.exists()


def test_a_two_node_pipeline_commits_two_instances_per_always_on_replica(user: object) -> None:
    """A replica of pp = 2 spans two p5.48xlarge: the log's always-on base of 2 replicas is
    4 instances, and the mix commits and prices instances, not replicas."""
    day, log = _35_day_log()
    checked = parse_serving_input({"model": "llama3.1-405b", "precision": "fp8",
                                   "ttft_p99_ms": 2000, "tpot_p99_ms": 60}, request_log=log)
    instances = tuple(2 * math.ceil(r) for r in day)
    option = ServingOption(
        "aws", "p5.48xlarge", "ap-northeast-1", "on_demand", "H100 SXM5-80GB", 8, 3, 6, 48,
        1000.0, (900.0, 1100.0), 40.0, (30.0, 50.0), 1.0, 0.1, 0.5, 0.2, 0.8, 1.0, 1.0,
        "2026-01-01", "test", "listed", 2, 4, tuple(n // 2 for n in instances), instances,
        pp=2, network_gbits_per_s=3200.0)
    mix = mix_document(checked, RankedPlan((option,), 1, ()))
    assert "TP8 PP2 EP1" in mix["configuration"]
    assert mix["base_instances"] == 4 == mix["committed_instances"]
    assert mix["peak_instances"] == 6
    (line,) = mix["committed"]
    assert line["sentence"].startswith("4 x p5.48xlarge (8 GPUs each, 32 GPUs)")
