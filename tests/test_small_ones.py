"""The small holes of issue 21: a bad token is a 401 on every method (not a CSRF 403),
password reset is offered only with mail configured, and a refused upload counts rows."""

import io
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from planner.purchase_mix import services as mix_services

pytestmark = pytest.mark.django_db
BAD = {"HTTP_AUTHORIZATION": "Bearer gpt_" + "A" * 43}


@pytest.mark.parametrize("method", ["get", "post", "put", "patch", "delete"])
@pytest.mark.parametrize("url", ["/api/plans", "/api/plans/1", "/api/simulations",
                                 "/api/histories"])
def test_a_bad_token_is_401_on_every_method(method: str, url: str) -> None:
    client = Client(enforce_csrf_checks=True)
    response = client.generic(method.upper(), url, "{}", content_type="application/json",
                              secure=True, **BAD)
    assert response.status_code in (401, 405), (method, url, response.status_code)
    if response.status_code == 401:
        assert response["WWW-Authenticate"].startswith('Bearer realm="GPU Planner API"')
    anonymous = client.generic(method.upper(), url, "{}", content_type="application/json")
    assert anonymous.status_code in (401, 405), (method, url, anonymous.status_code)


def test_a_signed_in_browser_post_still_needs_its_csrf_token() -> None:
    ada = User.objects.create_user("ada", password="pw-ada-123")
    client = Client(enforce_csrf_checks=True)
    client.force_login(ada)
    assert client.post("/api/plans", "{}", content_type="application/json").status_code == 403


def test_password_reset_is_not_offered_without_mail() -> None:
    login = Client().get("/accounts/login/").content.decode()
    assert "Ask the operator" in login and "password_reset" not in login
    page = Client().post("/accounts/password_reset/", {"email": "ada@example.org"})
    assert page.status_code == 404
    assert "cannot send you a reset link" in page.content.decode()


def test_a_refused_upload_counts_rows_not_cells(settings: Any, tmp_path: Any) -> None:
    settings.MEDIA_ROOT = str(tmp_path)
    data = (b"job_id,start,end,gpu_type,gpu_count\n"
            b"a,yesterday,later,A100,-8\n"
            b"b,soon,never,H100,-1\n")
    outcome = mix_services.history_create(
        owner_id=User.objects.create_user("ada", password="pw-ada-123").pk,
        upload=io.BytesIO(data), name="jobs.csv", size_bytes=len(data),
        options=mix_services.ParseOptions(fmt="generic"))
    assert outcome.history is None
    assert outcome.error.startswith("2 of 2 rows have problems (")
    assert "problems in all); nothing was stored" in outcome.error
