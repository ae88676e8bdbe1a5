"""What a FinOps lead sees: the what-to-buy table and its reasons on the page, the API and
`recommend_mix --json`, and the safe-parsing options at every interface."""

import base64
import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from planner.models import History
from tests.planner.conftest import HELIOS, PHILLY, PHILLY_MAP, csv_upload

EXAMPLE = Path(__file__).resolve().parents[3] / "static" / "planner" / "example-generic.csv"
DUPLICATED = (
    "job_id,start,end,gpu_type,gpu_count\n"
    "a,2024-01-01T00:00:00Z,2024-01-02T00:00:00Z,A100,8\n"
    "a,2024-01-01T12:00:00Z,2024-01-03T00:00:00Z,A100,4\n"
)
TRACE_ARGS = {
    "example": [str(EXAMPLE)],
    "philly": [str(PHILLY), "--map", PHILLY_MAP, "--time-unit", "min", "--origin", "2017-10-01",
               "--gpu-type", "V100"],
    "helios": [str(HELIOS), "--format", "usage", "--map",
               "timestamp=time,gpus_in_use=running_gpu_num", "--gpu-type", "V100"],
}


def _json(*args: str) -> dict:
    out = StringIO()
    call_command("recommend_mix", *args, "--json", stdout=out)
    return json.loads(out.getvalue())


@pytest.mark.parametrize("trace", list(TRACE_ARGS))
def test_json_has_a_what_to_buy_table_with_break_even_per_term_and_reasons(
    loaded_catalog, db, trace
):
    buy = _json(*TRACE_ARGS[trace])["document"]["what_to_buy"]
    assert buy["types"], "every trace has a priced GPU type"
    for item in buy["types"]:
        sizing = item["sizing"]
        terms = {choice["term_words"] for choice in sizing["choices"]}
        assert any(words.startswith("1-year") for words in terms), terms
        assert all(choice["break_even_utilization_pct"] > 0 for choice in sizing["choices"])
        assert sizing["gate"]["days"] < 90
        assert all(c["count"] == 0 for c in sizing["choices"] if c["term_years"] > 1)
        if not sizing["layers"]:
            assert sizing["reasons"], "nothing committed needs a reason"
        assert item["alternative"]["words"]
    assert all(line["term_words"] and "_" not in line["term_words"] for line in buy["lines"])


def test_cheapest_where_offered_buys_where_commitments_are_sold(loaded_catalog, db):
    buy = _json(str(EXAMPLE))["document"]["what_to_buy"]
    assert all(item["sizing"]["choices"] for item in buy["types"])
    assert not any(item["offer"]["provider"] in ("lambda", "vast") for item in buy["types"])


def test_cli_duplicate_ids_refused_then_merged(tmp_path, loaded_catalog, db):
    path = tmp_path / "dup.csv"
    path.write_text(DUPLICATED)
    with pytest.raises(CommandError, match=r"line 3, job_id: job id 'a' already on line 2"):
        _json(str(path))
    payload = _json(str(path), "--duplicate-ids", "merge")
    assert payload["upload"]["records"] == 1


def test_cli_bad_growth_scenario_names_it(tmp_path, db):
    path = tmp_path / "jobs.csv"
    path.write_text(DUPLICATED)
    with pytest.raises(CommandError, match="growth scenario 'fast' is not a number"):
        _json(str(path), "--growth", "fast", "--duplicate-ids", "merge")


def _post(client, text: str, **fields):
    return client.post("/history/upload", {"file": csv_upload(text), "fmt": "generic",
                                           "duplicate_ids": "refuse", **fields})


def test_upload_refuses_duplicates_then_merges_on_request(user_client):
    response = _post(user_client, DUPLICATED)
    assert response.status_code == 400
    assert [(e.line, e.field) for e in response.context["parse"].errors] == [(3, "job_id")]
    assert History.objects.count() == 0
    assert _post(user_client, DUPLICATED, duplicate_ids="merge").status_code == 302
    assert History.objects.get().records == 1


def test_upload_refuses_a_bare_number_time_naming_line_and_column(user_client):
    response = _post(user_client, "job_id,start,end,gpu_type,gpu_count\na,1500,2500,A100,8\n")
    assert response.status_code == 400
    body = response.content.decode()
    assert "numeric times need an origin" in body
    assert [(e.line, e.field) for e in response.context["parse"].errors] == [(2, "start"),
                                                                          (2, "end")]


def test_pickers_offer_the_files_own_columns_and_map_them(user_client):
    text = "id;begin;stop;kind;n\nx;2024-01-01;2024-01-02;A100;8\n"
    first = _post(user_client, text)
    assert first.status_code == 400
    body = first.content.decode()
    assert '<option value="begin">begin</option>' in body  # filled from the file's header
    picks = {"map_job_id": "id", "map_start": "begin", "map_end": "stop", "map_gpu_type": "kind",
             "map_gpu_count": "n"}
    assert _post(user_client, text, **picks).status_code == 302
    assert History.objects.get().fmt == "mapped"


def test_a_column_not_in_the_file_is_refused_by_the_picker(user_client):
    response = _post(user_client, DUPLICATED, map_start="nope")
    assert response.status_code == 400
    assert "The file has no column nope; pick one of its columns" in response.content.decode()


def test_page_shows_what_to_buy_and_why_nothing_is_committed(
    user_client, loaded_catalog, eager_celery, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        response = user_client.post("/history/upload", {
            "file": csv_upload(EXAMPLE.read_text(), "example.csv"), "fmt": "generic",
            "duplicate_ids": "refuse", "provider": "aws", "region": "us-east-1"})
    history = History.objects.get()
    assert response.status_code == 302 and history.runs.get().provider == "aws"
    body = user_client.get(f"/history/{history.pk}").content.decode()
    assert 'id="what-to-buy"' in body and "Why nothing is committed" in body
    assert "a commitment needs at least 30 days" in body
    assert "1-year reservation" in body and "reserved_1y" not in body.split("Backtest")[0]
    assert "Break-even utilisation" in body and "Hindsight reference (not a recommendation)" in body


def test_api_merge_option_and_bad_growth(client, user, db):
    token = base64.b64encode(b"ada:pw-ada-123").decode()
    auth = {"HTTP_AUTHORIZATION": f"Basic {token}", "wsgi.url_scheme": "https"}  # HTTPS only
    refused = client.post("/api/histories", {"file": csv_upload(DUPLICATED)}, **auth)
    assert refused.status_code == 400 and refused.json()["errors"][0]["field"] == "job_id"
    bad = client.post("/api/histories", {"file": csv_upload(DUPLICATED), "growth": "-150"},
                      **auth)
    assert bad.status_code == 400 and "outside" in bad.json()["detail"]
    merged = client.post("/api/histories", {"file": csv_upload(DUPLICATED),
                                            "duplicate_ids": "merge"}, **auth)
    assert merged.status_code == 201 and merged.json()["records"] == 1


def test_skipping_a_date_mix_up_row_finishes_the_analysis(
    user_client, loaded_catalog, eager_celery, django_capture_on_commit_callbacks
):
    text = (EXAMPLE.read_text().rstrip("\n")
            + '\n"job-x",1500-01-01T00:00:00Z,2500-01-01T00:00:00Z,"A100-80GB",8,false,"t"\n')
    with django_capture_on_commit_callbacks(execute=True):
        response = _post(user_client, text, skip_bad_rows="on")
    history = History.objects.get()
    assert response.status_code == 302 and history.rows_skipped == 1
    run = history.runs.get()
    assert run.status == "done" and run.result["what_to_buy"]["types"]


def test_a_bad_growth_scenario_is_a_form_error(user_client, loaded_catalog, db,
                                               django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks():
        _post(user_client, EXAMPLE.read_text())
    history = History.objects.get()
    response = user_client.post(f"/history/{history.pk}/runs", {"growth": "-120, 0"})
    assert response.status_code == 400
    assert "outside (-100%, +500%]" in response.content.decode()
    assert history.runs.count() == 1
    many = ",".join(["5"] * 2000)  # each is a full sizing: 2,000 held a worker 140 s
    response = user_client.post(f"/history/{history.pk}/runs", {"growth": many})
    assert response.status_code == 400
    assert "give at most 10 growth scenarios (2000 given)" in response.content.decode()
    api = user_client.post("/api/histories", {"file": csv_upload(EXAMPLE.read_text()),
                                              "growth": many})
    assert api.status_code == 400 and api.json()["detail"].startswith("give at most 10 ")
    assert history.runs.count() == 1 and History.objects.count() == 1
