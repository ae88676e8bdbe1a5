"""Serving plans are bounded like every other object (rate 429, quota 403, report downloads
429, every input field bounded and named), listed newest first, and deletable by page and
API; another user sees none of it (404)."""

import json
import re
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from planner.core.formatting import label
from planner.serving.models import ServingPlan
from tests.planner.serving.test_views import EXAMPLE

pytestmark = pytest.mark.django_db
API = {**EXAMPLE, "purchase_options": ["on_demand"]}


def _post(client: Client, **changes: Any) -> Any:
    return client.post("/api/serving", json.dumps({**API, **changes}),
                       content_type="application/json")


def test_serving_plans_past_the_rate_are_429_with_retry_after(
        client_sam: Client, other_client: Client, settings: Any) -> None:
    settings.SERVING_PLANS_PER_MINUTE = 2
    for _ in range(2):
        assert _post(client_sam).status_code == 201
    refused = _post(client_sam)
    assert refused.status_code == 429 and refused["Content-Type"] == "application/json"
    assert "Too many serving plans started: at most 2 a minute" in refused.json()["detail"]
    assert 0 < int(refused["Retry-After"]) <= 60
    page = client_sam.post("/serving/new", EXAMPLE)
    assert page.status_code == 429 and "at most 2 a minute" in page.content.decode()
    assert ServingPlan.objects.filter(owner__username="sam").count() == 2
    assert _post(other_client).status_code == 201  # another user is not limited


def test_a_refused_input_does_not_count_against_the_rate(
        client_sam: Client, settings: Any) -> None:
    settings.SERVING_PLANS_PER_MINUTE = 1
    for _ in range(3):
        assert _post(client_sam, rate="many").status_code == 422
    assert _post(client_sam).status_code == 201


def test_a_full_serving_quota_is_403_until_one_is_deleted(
        client_sam: Client, settings: Any) -> None:
    settings.USER_MAX_SERVING_PLANS = 2
    ids = [_post(client_sam).json()["id"] for _ in range(2)]
    refused = _post(client_sam)
    assert refused.status_code == 403
    assert "You keep 2 serving plans" in refused.json()["detail"]
    assert client_sam.delete(f"/api/serving/{ids[0]}").status_code == 204
    assert _post(client_sam).status_code == 201


def test_report_downloads_are_rate_limited(client_sam: Client, settings: Any) -> None:
    settings.REPORT_DOWNLOADS_PER_MINUTE = 1
    plan_id = _post(client_sam).json()["id"]
    assert client_sam.get(f"/serving/{plan_id}/report.csv").status_code == 200
    refused = client_sam.get(f"/serving/{plan_id}/report.csv")
    assert refused.status_code == 429 and "reports downloaded" in refused.content.decode()


@pytest.mark.parametrize(("changes", "field", "words"), [
    ({"rate": 1e7}, "rate", "between"),
    ({"rate": True}, "rate", "expected a number, got true"),
    ({"output_tokens": "1" * 5000}, "output_tokens", "between"),
    ({"input_tokens": 2e6}, "input_tokens", "between"),
    ({"output_tokens": 0}, "output_tokens", "between"),
    ({"ttft_p99_ms": 1e9}, "ttft_p99_ms", "between"),
    ({"model": "x" * 100_000}, "model", "at most 64 characters"),
    ({"precision": ["fp8"]}, "precision", "expected a name"),
    ({"purchase_options": 5}, "purchase_options", "expected a list"),
    ({"purchase_options": ["on_demand"] * 10_000}, "purchase_options", "got 10000"),
    ({"purchase_options": [{"a": 1}]}, "purchase_options", "expected a name"),
])
def test_every_count_and_size_is_bounded_and_named(
        client_sam: Client, changes: dict[str, Any], field: str, words: str) -> None:
    response = _post(client_sam, **changes)
    assert response.status_code == 422, response.content[:300]
    detail = response.json()["detail"]
    assert detail.startswith(f"{field}:") and words in detail and len(detail) < 300
    assert not ServingPlan.objects.exists()


def test_a_plan_reads_the_catalog_and_the_prices_once_whatever_their_size(
        client_sam: Client) -> None:
    with CaptureQueriesContext(connection) as queries:
        assert _post(client_sam, purchase_options=["on_demand", "reserved_1y"]).status_code == 201
    reads = [q["sql"] for q in queries.captured_queries if q["sql"].startswith("SELECT")]
    assert sum('FROM "pricing_accelerator"' in sql for sql in reads) == 1
    # One read ranks every offer; one more reads the cheapest configuration's commitment and
    # spot prices for its purchase mix.
    assert sum('FROM "pricing_price"' in sql for sql in reads) == 2
    assert len(reads) < 15


def test_the_list_shows_the_users_plans_newest_first_with_their_cheapest_costs(
        client_sam: Client, other_client: Client) -> None:
    first = _post(client_sam, rate=5, name="small").json()
    second = _post(client_sam, rate=50, name="big").json()
    _post(other_client, name="not yours")
    page = client_sam.get("/serving/").content.decode()
    assert page.index(">big<") < page.index(">small<") and "not yours" not in page
    assert 'href="/serving/new"' in page and "New serving plan" in page
    for plan in (first, second):
        best = plan["cards"]["cheapest"]
        row = re.search(rf'id="serving-{plan["id"]}">(.*?)</tr>', page, re.S)
        assert row and f'href="{plan["url"]}"' in row.group(1)
        assert f'{label(best["provider"])} {best["instance_type"]}' in row.group(1)
        month = re.search(r'c-usd-month">\$([\d,]+)<', row.group(1))
        output = re.search(r'c-usd-output">\$([\d.]+)<', row.group(1))
        assert month and float(month.group(1).replace(",", "")) == pytest.approx(
            best["usd_per_month"], abs=0.5)
        assert output and float(output.group(1)) == pytest.approx(
            best["usd_per_million_tokens"]["output"], abs=0.0005)
    listed = client_sam.get("/api/serving").json()
    assert [p["id"] for p in listed] == [second["id"], first["id"]]
    assert set(listed[0]) == {"id", "name", "url", "created_at"}
    assert listed[0]["url"] == second["url"]


def test_delete_asks_then_deletes_and_returns_to_the_list(client_sam: Client) -> None:
    plan = _post(client_sam, name="to go").json()
    detail = client_sam.get(plan["url"]).content.decode()
    assert f'href="/serving/{plan["id"]}/delete"' in detail
    confirm = client_sam.get(f"/serving/{plan['id']}/delete")
    assert confirm.status_code == 200 and "Delete “to go”?" in confirm.content.decode()
    assert ServingPlan.objects.count() == 1
    done = client_sam.post(f"/serving/{plan['id']}/delete")
    assert done.status_code == 302 and done["Location"] == "/serving/"
    assert not ServingPlan.objects.exists()
    assert "Deleted to go." in client_sam.get("/serving/").content.decode()


def test_another_user_gets_404_everywhere(client_sam: Client, other_user: User) -> None:
    plan = _post(client_sam).json()
    other = Client()
    other.force_login(other_user)
    pid = plan["id"]
    for url in (f"/serving/{pid}", f"/serving/{pid}/delete", f"/serving/{pid}/report.csv",
                f"/api/serving/{pid}"):
        assert other.get(url).status_code == 404, url
    assert other.post(f"/serving/{pid}/delete").status_code == 404
    assert other.delete(f"/api/serving/{pid}").status_code == 404
    assert other.get("/api/serving").json() == []
    assert f"/serving/{pid}" not in other.get("/serving/").content.decode()
    assert ServingPlan.objects.filter(pk=pid).exists()


def test_the_navigation_leads_to_serving(client_sam: Client) -> None:
    page = client_sam.get("/serving/").content.decode()
    nav = page[page.index('id="site-nav"'):page.index("</nav>")]
    assert nav.index(">Plan</a>") < nav.index(">Serve</a>")
    assert 'href="/serving/new"' in nav and 'href="/serving/"' in nav
    assert re.search(r'href="/serving/" aria-current="page">Serving plans<', nav)
