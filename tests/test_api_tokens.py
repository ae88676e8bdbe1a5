"""API tokens: made and revoked on the account page, shown once, stored only as a hash, and
accepted as `Authorization: Bearer` by every API endpoint that takes basic auth (HTTPS only)."""

import re
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test import Client

from planner.models import ApiToken, PlanScenario
from planner.tokens import LAST_USED_RESOLUTION, token_create
from simulator.models import SimulationRun
from tests.clients import signed_in

pytestmark = pytest.mark.django_db


@pytest.fixture
def ada() -> User:
    return User.objects.create_user("ada", password="pw-ada-123")


@pytest.fixture
def ada_client(ada: User) -> Client:
    return signed_in(ada)


def _bearer(token: str) -> dict[str, str]:
    return {"HTTP_AUTHORIZATION": f"Bearer {token}"}


def _make_token(client: Client, name: str) -> str:
    response = client.post("/accounts/tokens/", {"name": name})
    assert response.status_code == 200
    match = re.search(r'<code id="new-token-value">([^<]+)</code>', response.content.decode())
    assert match, "the new token is shown"
    return match.group(1)


def test_a_token_is_shown_once_and_only_its_hash_is_stored(ada_client: Client) -> None:
    token = _make_token(ada_client, "nightly script")
    assert ada_client.post("/accounts/tokens/", {"name": "x"})["Cache-Control"] == "no-store"
    page = ada_client.get("/accounts/tokens/").content.decode()
    assert "nightly script" in page and token not in page and "never" in page
    with connection.cursor() as cursor:
        cursor.execute("SELECT * FROM planner_apitoken")
        stored = " ".join(str(value) for row in cursor.fetchall() for value in row)
    assert token not in stored and token[4:] not in stored


def test_the_account_menu_links_to_the_tokens_page(ada_client: Client) -> None:
    assert 'href="/accounts/tokens/"' in ada_client.get("/history/").content.decode()


def test_a_nameless_token_is_refused_naming_the_field(ada_client: Client) -> None:
    response = ada_client.post("/accounts/tokens/", {"name": "  "})
    assert response.status_code == 400
    assert "name: give the token a name" in response.content.decode()
    assert not ApiToken.objects.exists()


def test_a_name_with_nul_is_refused_naming_the_field(ada_client: Client) -> None:
    # PostgreSQL stores no NUL in text: the insert was a 500 there
    response = ada_client.post("/accounts/tokens/", {"name": "nightly\x00script"})
    assert response.status_code == 400
    assert "name: must not contain a NUL character." in response.content.decode()
    assert not ApiToken.objects.exists()


def test_the_tokens_page_needs_a_sign_in() -> None:
    response = Client().get("/accounts/tokens/")
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]


def test_a_bearer_token_works_on_every_api_endpoint_that_takes_basic_auth(
        ada: User, ada_client: Client) -> None:
    token = _make_token(ada_client, "ci")
    plan = PlanScenario.objects.create(owner=ada, name="mine", inputs={})
    run = SimulationRun.objects.create(owner=ada, request={})
    client = Client()  # no session: the token alone
    mine = client.get(f"/api/plans/{plan.pk}", secure=True, **_bearer(token))
    assert mine.json()["name"] == "mine"
    simulation = client.get(f"/api/simulations/{run.pk}", secure=True, **_bearer(token))
    assert simulation.status_code == 200
    assert client.get("/api/histories/999999", secure=True, **_bearer(token)).status_code == 404
    created = client.post("/api/simulations", {"workload": {}, "goal": {}},
                          content_type="application/json", secure=True, **_bearer(token))
    assert created.status_code == 400  # authenticated, then the body is checked
    assert ApiToken.objects.get().last_used_at is not None


def test_a_token_sees_only_its_owners_objects(ada: User) -> None:
    bob = User.objects.create_user("bob", password="pw-bob-123")
    bobs_token = token_create(owner_id=bob.pk, name="bob's").token
    plan = PlanScenario.objects.create(owner=ada, name="ada's plan", inputs={})
    response = Client().get(f"/api/plans/{plan.pk}", secure=True, **_bearer(bobs_token))
    assert response.status_code == 404


def test_a_revoked_token_is_refused_with_a_bearer_challenge(ada: User, ada_client: Client) -> None:
    token = _make_token(ada_client, "old laptop")
    row = ApiToken.objects.get()
    response = ada_client.post(f"/accounts/tokens/{row.pk}/revoke")
    assert response.status_code == 302
    assert "revoked" in ada_client.get("/accounts/tokens/").content.decode()
    refused = Client().get("/api/plans/1", secure=True, **_bearer(token))
    assert refused.status_code == 401
    assert refused["WWW-Authenticate"].startswith('Bearer realm="GPU Planner API", '
                                                  'error="invalid_token"')
    assert "revoked" in refused.json()["detail"]


def test_an_unknown_token_is_refused(ada: User) -> None:
    response = Client().get("/api/plans/1", secure=True, **_bearer("gpt_" + "A" * 43))
    assert response.status_code == 401 and response["WWW-Authenticate"].startswith("Bearer")


def test_only_the_owner_can_revoke_a_token(ada: User) -> None:
    token = token_create(owner_id=ada.pk, name="ada's")
    bob = User.objects.create_user("bob", password="pw-bob-123")
    other = signed_in(bob)
    assert other.post(f"/accounts/tokens/{token.row.pk}/revoke").status_code == 404
    assert other.get(f"/accounts/tokens/{token.row.pk}/revoke").status_code == 405
    assert ApiToken.objects.get().is_active
    assert Client().get("/api/plans/1", secure=True, **_bearer(token.token)).status_code == 404


def test_tokens_are_refused_over_plain_http(ada: User, settings: Any) -> None:
    token = token_create(owner_id=ada.pk, name="x").token
    plain = Client().get("/api/plans/1", **_bearer(token))
    assert plain.status_code == 401 and "HTTPS only" in plain.json()["detail"]
    settings.API_BASIC_AUTH_HTTPS_ONLY = False  # local development
    assert Client().get("/api/plans/1", **_bearer(token)).status_code == 404


def test_a_deactivated_users_token_is_refused(ada: User) -> None:
    token = token_create(owner_id=ada.pk, name="x").token
    ada.is_active = False
    ada.save(update_fields=["is_active"])
    assert Client().get("/api/plans/1", secure=True, **_bearer(token)).status_code == 401


def test_last_used_is_written_at_most_once_a_minute(ada: User) -> None:
    made = token_create(owner_id=ada.pk, name="x")
    client = Client()
    client.get("/api/plans/1", secure=True, **_bearer(made.token))
    first = ApiToken.objects.get().last_used_at
    assert first is not None
    client.get("/api/plans/1", secure=True, **_bearer(made.token))
    assert ApiToken.objects.get().last_used_at == first
    ApiToken.objects.update(last_used_at=first - LAST_USED_RESOLUTION)
    client.get("/api/plans/1", secure=True, **_bearer(made.token))
    assert ApiToken.objects.get().last_used_at > first


def test_the_openapi_schema_documents_the_bearer_scheme() -> None:
    schemes = Client().get("/api/openapi.json").json()["components"]["securitySchemes"]
    assert {"type": "http", "scheme": "bearer"}.items() <= schemes["TokenAuth"].items()


def test_tokens_go_with_their_user(ada: User) -> None:
    token_create(owner_id=ada.pk, name="x")
    ada.delete()
    assert not ApiToken.objects.exists()
