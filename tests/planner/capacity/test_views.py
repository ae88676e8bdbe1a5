"""The Capacity view, its API and its reports: one recommended point everywhere, private to
the history's owner, bad input refused naming the field."""

import csv
import io
from datetime import date, timedelta

import pytest
from django.utils import timezone
from django.utils.html import escape
from openpyxl import load_workbook

from planner.capacity.models import CapacityRun
from pricing.selectors import stale_before
from tests.clients import signed_in
from tests.planner.capacity.conftest import SMALL_SWEEP

FORM = {"gpu_type": "V100", "pool_gpus": "0,96,200,352", "disciplines": ["fifo"],
        "policies": ["none", "constant", "size_aware"], "max_wait_hours": "2",
        "target_p95_wait_hours": "2", "pool_price": "cheapest"}


def _url(history, suffix=""):
    return f"/history/{history.pk}/capacity{suffix}"


@pytest.fixture
def swept(analysed, user, django_capture_on_commit_callbacks):
    client = signed_in(user)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(_url(analysed), FORM)
    assert response.status_code == 302
    return client, analysed


def test_the_page_shows_the_recommended_point_charts_and_table(swept):
    client, history = swept
    run = CapacityRun.objects.get()
    best = run.result["recommended"]
    page = client.get(_url(history))
    assert page.status_code == 200
    html = page.content.decode()
    assert escape(run.result["headline"]) in html
    # 16.5 days of history: nothing is committed, and the page says why
    assert best["pool_gpus"] == 0 and "Commit nothing" in run.result["headline"]
    assert "16.5 days" in html.split('id="pool-purchase"', 1)[1].split("</div>", 1)[0]
    assert 'data-figure="capacity-frontier"' in html and 'data-figure="capacity-queue"' in html
    assert html.count('class="chosen"') == 1 and "capacity-points" in html
    assert "/capacity/report.xlsx" in html


def test_the_page_names_queues_and_policies_in_words(swept):
    client, history = swept
    html = client.get(_url(history)).content.decode()
    table = html.split('id="capacity-points"', 1)[1].split("</table>", 1)[0]
    # codes ('fifo', 'none', 'size_aware') in words, as the form offers them
    assert "<td>FIFO</td>" in table and "<td>No waiting</td>" in table
    assert "<td>Size-aware</td>" in table and "size_aware" not in table
    assert "<td>none</td>" not in table and "<td>fifo</td>" not in table
    assert "FIFO: first come, first served" in html and "size_aware:" not in html
    assert 'title="Mean job completion time' in table


def test_api_reports_and_page_agree_on_the_recommended_point(swept):
    client, history = swept
    payload = client.get(f"/api/histories/{history.pk}/capacity").json()
    best = payload["recommended"]
    assert payload["status"] == "done" and best in payload["points"]
    for key in ("pool_gpus", "discipline", "policy", "max_wait_hours", "pool_gpu_hours",
                "burst_gpu_hours", "jobs_burst", "mean_wait_hours", "p95_wait_hours",
                "utilization", "total_usd"):
        assert key in best
    rows = list(csv.DictReader(io.StringIO(
        client.get(_url(history, "/report.csv")).content.decode("utf-8-sig"))))
    chosen = [row for row in rows if row["Recommended"] == "yes"]
    assert len(chosen) == 1 and int(float(chosen[0]["Pool (GPUs)"])) == best["pool_gpus"]
    assert float(chosen[0]["Total (USD)"]) == pytest.approx(best["total_usd"])
    book = load_workbook(io.BytesIO(client.get(_url(history, "/report.xlsx")).content))
    assert {"Frontier", "Comparison", "Queue", "Sources"} <= set(book.sheetnames)
    # Sources: each price's age on the report's day, flagged stale as the page flags it
    sheet = book["Sources"]
    headers = [c.value for c in sheet[1]]
    sources = [dict(zip(headers, r, strict=True))
               for r in sheet.iter_rows(min_row=2, values_only=True) if r[0]]
    today = timezone.localdate()
    assert sources
    used = CapacityRun.objects.get().result["prices"]["sources"]
    assert len(used) == len(sources)
    cutoffs = stale_before()
    for row, price in zip(sources, used, strict=True):
        as_of = row["As of"]  # a date cell
        age = (today - (as_of.date() if hasattr(as_of, "date") else as_of)).days
        assert row["Age (days)"] == age
        # stale by the catalog's dates (the provider's newest price), as the page flags it
        expected = "stale" if price["as_of"] < cutoffs[price["provider"]] else ""
        assert (row["Stale"] or "") == expected
    html = client.get(f"/api/histories/{history.pk}/capacity/report.html").content.decode()
    assert "Cost against P95 wait" in html and escape(payload["headline"]) in html
    # The report words the queue as the page does ("queue FIFO, ...", never the code "fifo"),
    # prices in dollars and percentages without a space.
    page = client.get(f"/history/{history.pk}/capacity").content.decode()
    queue = {"fifo": "FIFO", "backfill": "Backfill"}[best["discipline"]]
    assert "queue fifo" not in html and "queue fifo" not in page
    if best["pool_gpus"]:  # a pool of 0 has no queue: the headline says nothing is committed
        assert f"queue {queue}" in page and f"queue {queue}, " in html
    assert "USD/GPU-hour</td>" not in html and "/GPU-hour" in html and " %<" not in html


def test_api_post_queues_a_sweep_and_refuses_bad_fields(analysed, user,
                                                        django_capture_on_commit_callbacks):
    client = signed_in(user)
    url = f"/api/histories/{analysed.pk}/capacity"
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(url, {**SMALL_SWEEP, "max_wait_hours": [1, "inf"]},
                               content_type="application/json")
    assert response.status_code == 202, response.content
    assert client.get(url).json()["status"] == "done"
    bad = client.post(url, {"pool_gpus": [-1]}, content_type="application/json")
    assert bad.status_code == 400 and bad.json()["detail"].startswith("pool_gpus:")
    bad = client.post(url, {"policies": ["later"]}, content_type="application/json")
    assert bad.status_code == 400 and "policy" in bad.json()["detail"]


@pytest.mark.parametrize(("field", "value", "message"), [
    ("pool_gpus", "10,many", "Pool sizes (GPUs): &#x27;many&#x27; is not a whole number"),
    ("pool_gpus", "abc", "Pool sizes (GPUs): &#x27;abc&#x27; is not a whole number"),
    ("max_wait_hours", "-1", "Wait limits T (h): &#x27;-1&#x27; must be &gt;= 0 hours"),
    ("owned_pue", "0.5", "PUE: 0.5 is out of range"),
    # the API refused these (at most 100,000 h); the form and the command took them
    ("max_wait_hours", "1e308", "Wait limits T (h): &#x27;1e308&#x27; must be at most 100,000"),
    ("target_p95_wait_hours", "1e40", "P95 wait target (h): must be a number of hours from 0 "
     "to 100,000"),
])
def test_a_bad_form_is_refused_beside_its_field_named_by_its_label(analysed, user, field,
                                                                    value, message):
    client = signed_in(user)
    response = client.post(_url(analysed), {**FORM, "pool_price": "owned", field: value})
    assert response.status_code == 400
    html = response.content.decode()
    beside = html.split(f'id="field-{field}"', 1)[1].split("</div>", 1)[0]
    assert message in beside  # beside its field, and in the summary at the top
    assert message in html.split('id="error-summary"', 1)[1].split("</ul>", 1)[0]
    assert f"{field}:" not in html
    assert not CapacityRun.objects.exists()


def test_another_user_sees_nothing(swept, other_user):
    _, history = swept
    client = signed_in(other_user)
    assert client.get(_url(history)).status_code == 404
    assert client.get(f"/api/histories/{history.pk}/capacity").status_code == 404
    assert client.get(_url(history, "/report.csv")).status_code == 404
    assert client.post(_url(history), FORM).status_code == 404


def test_status_json_reports_progress(swept):
    client, history = swept
    status = client.get(_url(history, "/status")).json()
    assert status["status"] == "done" and status["is_finished"]


def test_prices_used_say_their_basis_and_flag_stale_ones(swept, settings):
    client, history = swept
    run = CapacityRun.objects.get()
    today = timezone.now().date()
    sources = run.result["prices"]["sources"]
    assert {s["basis"] for s in sources} == {"listed"}
    # Stale: more than 180 days older than the provider's newest price, whatever today is.
    cutoff = date.fromisoformat(stale_before()[sources[0]["provider"]])
    sources[0]["as_of"] = (cutoff - timedelta(days=1)).isoformat()
    sources[1]["as_of"] = cutoff.isoformat()
    sources[1]["provider"] = sources[0]["provider"]
    run.save(update_fields=["result"])
    html = client.get(_url(history)).content.decode()
    table = html.split('id="capacity-prices"', 1)[1].split("</table>", 1)[0]
    rows = table.split("<tr")[2:]
    age = (today - cutoff).days
    assert '<span class="stale"' in rows[0] and f"{age + 1:,} days" in rows[0]
    assert '<span class="stale"' not in rows[1] and f"{age:,} days" in rows[1]
    assert '<span class="tag listed"' in rows[0]
    assert (f"A price is marked stale when it is more than {settings.PRICE_STALE_DAYS} days "
            "older than the newest price of the same provider") in html


def test_the_two_peaks_of_one_file_are_labelled_for_what_they_count(swept):
    """One uploaded file, two peaks: the purchase mix's highest hourly average of concurrent
    GPUs and the capacity replay's most GPUs running at one instant. Both pages and both
    reports printed an unlabelled "peak"; each now says which it is."""
    client, history = swept
    document = client.get(f"/api/histories/{history.pk}").json()["document"]
    hourly = document["analysis"]["stats"][FORM["gpu_type"]]["peak_gpus"]
    concurrent = CapacityRun.objects.get().result["peak_gpus"]
    assert concurrent >= hourly  # an instant's peak is never below its hour's average

    mix = client.get(f"/history/{history.pk}").content.decode()
    header = mix.split('id="demand-stats"', 1)[1].split("</thead>", 1)[0]
    assert "Hourly averages of concurrent GPUs" in header
    assert ">Peak hourly-average demand</abbr>" in header
    page = client.get(_url(history)).content.decode()
    assert f">peak concurrent GPUs</abbr> {concurrent:,} (no job waiting)" in page
    assert "no-wait peak" not in page

    def summary(url):
        book = load_workbook(io.BytesIO(client.get(url).content))
        return {row[0]: row[1] for row in book["Summary"].iter_rows(min_row=2,
                                                                     values_only=True)}

    assert summary(_url(history, "/report.xlsx"))[
        "Peak concurrent GPUs (no job waiting)"] == concurrent
    assert summary(f"/history/{history.pk}/report.xlsx")[
        "Peak hourly-average demand"] == pytest.approx(
            document["analysis"]["stats"]["total"]["peak_gpus"])
