"""The plan result page is served from cached fragments, but never stale: a re-run with new
prices, a rename, edited inputs, another sort order or a new GPU shows at once, and a cached
page is the page a fresh render gives."""

import json
import re

import pytest
from django.contrib.auth.models import User
from django.core.cache import cache
from django.db import connection
from django.db.models import F
from django.test import Client
from django.test.utils import CaptureQueriesContext

from planner.core.formatting import usd
from planner.models import PlanScenario
from planner.plans import selectors, services
from planner.runs import Attempt
from pricing.models import Accelerator, Price

pytestmark = pytest.mark.django_db
SMALL = {"workload": "llama2-7b", "tokens": 1e11, "providers": ["aws"],
         "purchase_options": ["on_demand"]}


def _run(scenario_id: int, delivery: str) -> None:
    services.scenario_execute(scenario_id=scenario_id, attempt=Attempt(delivery))


@pytest.fixture
def plan(user: User) -> PlanScenario:
    stored = services.scenario_create(owner_id=user.id, raw=SMALL)
    _run(stored.id, "first")
    stored.refresh_from_db()
    assert stored.status == "done"
    return stored


def _page(client: Client, plan: PlanScenario, query: str = "") -> str:
    response = client.get(f"/plans/{plan.id}{query}")
    assert response.status_code == 200
    return response.content.decode()


def _unmasked(html: str) -> str:
    # The CSRF token is masked afresh in every response.
    return re.sub(r'name="csrfmiddlewaretoken" value="\w+"', "", html)


def _card_total(html: str) -> str:
    card = html[html.index('data-card="cheapest_meeting_deadline"'):]
    return re.search(r"<strong>(\$[\d,]+) total</strong>", card).group(1)  # type: ignore[union-attr]


def test_a_cached_page_is_the_page_a_fresh_render_gives(
    client_ana: Client, plan: PlanScenario
) -> None:
    first = _unmasked(_page(client_ana, plan))
    cached = _unmasked(_page(client_ana, plan))
    cache.clear()
    assert cached == first == _unmasked(_page(client_ana, plan))
    assert 'data-card="cheapest_meeting_deadline"' in first and 'id="plan-table"' in first


def test_a_cached_page_does_not_load_the_result_again(
    client_ana: Client, plan: PlanScenario
) -> None:
    _page(client_ana, plan)
    with CaptureQueriesContext(connection) as queries:
        _page(client_ana, plan)
    assert not [q["sql"][:400] for q in queries.captured_queries if '"result"' in q["sql"]]


def test_a_rerun_with_changed_prices_shows_its_new_totals_at_once(
    client_ana: Client, plan: PlanScenario
) -> None:
    before = _card_total(_page(client_ana, plan))
    Price.objects.filter(is_current=True).update(usd_per_hour=F("usd_per_hour") * 2)
    PlanScenario.objects.filter(pk=plan.pk).update(status="queued")  # e.g. from the admin
    _run(plan.id, "second")
    total = selectors.scenario_result(plan.id)["options"][0]["total_usd"]
    after = _card_total(_page(client_ana, plan))
    assert after != before and after == usd(total)


def test_a_renamed_plan_shows_its_new_name(client_ana: Client, plan: PlanScenario) -> None:
    _page(client_ana, plan)
    client_ana.post(f"/plans/{plan.id}/save", {"name": "Budget run B"})
    html = _page(client_ana, plan)
    assert "<h1>Budget run B</h1>" in html and 'value="Budget run B"' in html


def test_each_sort_order_shows_its_own_table(client_ana: Client, plan: PlanScenario) -> None:
    def first_rank(html: str) -> str:
        body = html[html.index("<tbody>", html.index('id="plan-table"')):]
        return re.search(r"<tr>\s*<td>([\d,]+)</td>", body).group(1)  # type: ignore[union-attr]

    assert first_rank(_page(client_ana, plan)) == "1"
    fastest = first_rank(_page(client_ana, plan, "?sort=time_to_train_hours"))
    assert fastest != "1"
    assert first_rank(_page(client_ana, plan)) == "1"
    assert first_rank(_page(client_ana, plan, "?sort=time_to_train_hours")) == fastest


def test_edited_inputs_show_in_the_whatif_form_at_once(
    client_ana: Client, plan: PlanScenario
) -> None:
    assert 'value="1e+11"' in _page(client_ana, plan)
    PlanScenario.objects.filter(pk=plan.pk).update(inputs={**plan.inputs, "tokens": 3e11})
    assert 'value="3e+11"' in _page(client_ana, plan)


def test_a_new_gpu_is_offered_in_the_whatif_form_at_once(
    client_ana: Client, plan: PlanScenario
) -> None:
    assert "Hypo X1-PCIe-99GB" not in _page(client_ana, plan)
    Accelerator.objects.create(slug="hypo-x1", vendor="Hypo", model="Hypo X1",
                               variant="PCIe-99GB", memory_gb=99)
    assert "Hypo X1 PCIe-99GB" in _page(client_ana, plan)


def test_whatif_page_shows_a_changed_price_at_once(client_ana: Client) -> None:
    query = "/plans/whatif?workload=llama2-7b&tokens=1e11&providers=aws" \
            "&purchase_options=on_demand"
    before = _card_total(client_ana.get(query).content.decode())
    Price.objects.filter(is_current=True).update(usd_per_hour=F("usd_per_hour") * 2)
    assert _card_total(client_ana.get(query).content.decode()) != before


def test_figures_share_one_template(client_ana: Client, plan: PlanScenario) -> None:
    html = _page(client_ana, plan)
    scripts = dict(re.findall(r'<script id="([\w-]+)" type="application/json">(.*?)</script>',
                              html, re.S))
    assert json.loads(scripts["plotly-template"])["layout"]["plot_bgcolor"] == "white"
    figures = [json.loads(v) for k, v in scripts.items() if k.startswith("plan-figure-")]
    # time-cost, cost parts, scaling, cost-emissions, memory
    assert len(figures) == 5 and all("template" not in f["layout"] for f in figures)


def test_a_done_plan_without_a_stored_result_shows_no_result(
    client_ana: Client, user: User
) -> None:
    bare = PlanScenario.objects.create(owner=user, name="bare", inputs=SMALL, status="done")
    html = _page(client_ana, bare)
    assert "<h1>bare</h1>" in html and 'id="plan-table"' not in html and "data-card" not in html
