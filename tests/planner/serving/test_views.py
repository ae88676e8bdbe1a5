"""The serving pages and API: plan, read, refuse bad input naming the field, keep it private."""

import json
import re

import pytest
from django.contrib.auth.models import User
from django.test import Client

from planner.serving.core.fields import SERVING_PURCHASE_OPTIONS
from planner.serving.models import ServingPlan
from planner.serving.services import serving_offers
from pricing.selectors import current_prices

pytestmark = pytest.mark.django_db
EXAMPLE = {"model": "llama3.1-70b", "precision": "fp8", "rate": "20", "input_tokens": "2000",
           "output_tokens": "300", "ttft_p99_ms": "2000", "tpot_p99_ms": "60",
           "purchase_options": ["on_demand"]}


def test_the_form_plans_and_the_page_shows_the_cheapest_option_and_charts(
        client_sam: Client) -> None:
    assert client_sam.get("/serving/new").status_code == 200
    response = client_sam.post("/serving/new", EXAMPLE)
    assert response.status_code == 302
    plan = ServingPlan.objects.get()
    page = client_sam.get(response["Location"]).content.decode()
    best = plan.result["cards"]["cheapest"]
    shown = re.search(r'id="cheapest-usd-per-million-output">\$([\d.]+)<', page)
    assert shown and float(shown.group(1)) == pytest.approx(
        best["usd_per_million_tokens"]["output"], abs=0.0005)
    assert "Latency against load, one replica" in page
    assert "serving-figure-1" in page


def test_bad_input_is_refused_naming_the_field_and_nothing_is_saved(
        client_sam: Client) -> None:
    response = client_sam.post("/serving/new", {**EXAMPLE, "rate": "-3"})
    assert response.status_code == 422
    assert "must be between" in response.content.decode()
    assert 'id="field-rate"' in response.content.decode()
    api = client_sam.post("/api/serving", json.dumps({**EXAMPLE, "rate": "many"}),
                          content_type="application/json")
    assert api.status_code == 422 and api.json()["detail"].startswith("rate:")
    assert not ServingPlan.objects.exists()


def test_the_api_returns_the_same_cost_per_million_tokens_as_the_page(
        client_sam: Client) -> None:
    created = client_sam.post("/api/serving", json.dumps(EXAMPLE),
                              content_type="application/json")
    assert created.status_code == 201
    body = created.json()
    shown = client_sam.get(f"/api/serving/{body['id']}").json()
    assert shown["cards"]["cheapest"]["usd_per_million_tokens"] == (
        body["options"][0]["usd_per_million_tokens"])
    page = client_sam.get(body["url"]).content.decode()
    cost = body["cards"]["cheapest"]["usd_per_million_tokens"]["input"]
    assert f'id="cheapest-usd-per-million-input">${cost:.3f}<' in page


def test_another_user_cannot_see_a_plan(client_sam: Client) -> None:
    client_sam.post("/serving/new", EXAMPLE)
    plan = ServingPlan.objects.get()
    other = Client()
    other.force_login(User.objects.create_user("eve", password="other-pass-123"))
    assert other.get(f"/serving/{plan.id}").status_code == 404
    assert other.get(f"/api/serving/{plan.id}").status_code == 404


def test_each_offers_price_basis_is_its_price_rows_basis(user: User) -> None:
    offers = serving_offers(purchase_options=SERVING_PURCHASE_OPTIONS)
    bases: dict[tuple[str, str, str, str, float], set[str]] = {}
    for price in current_prices(purchase_options=SERVING_PURCHASE_OPTIONS):
        key = (price.instance_type.provider.slug, price.instance_type.name, price.region.code,
               price.purchase_option, float(price.usd_per_hour))
        bases.setdefault(key, set()).add(price.basis)
    for offer in offers:
        key = (offer.provider, offer.instance_type, offer.region, offer.purchase_option,
               offer.usd_per_hour)
        assert offer.basis in bases[key], key
    assert offers
