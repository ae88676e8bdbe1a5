"""Accounts and HTTP hardening: throttled sign-in everywhere, HTTPS-only basic auth with a
challenge, CSP, the upload limit before the body is read, /healthz, files gone with the user,
and a clean `check --deploy` with the production variables."""

import base64
import io
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.files.storage import default_storage
from django.test import Client

from tests.clients import signed_in

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.django_db


@pytest.fixture
def ada() -> User:
    return User.objects.create_user("ada", password="pw-ada-123")


def _basic(password: str) -> dict[str, str]:
    token = base64.b64encode(f"ada:{password}".encode()).decode()
    return {"HTTP_AUTHORIZATION": f"Basic {token}"}


def test_sign_in_is_locked_after_five_failures_even_with_the_right_password(ada: User) -> None:
    client = Client()
    for _ in range(5):
        response = client.post("/accounts/login/", {"username": "ada", "password": "wrong"})
        assert response.status_code == 200
    locked = client.post("/accounts/login/", {"username": "ada", "password": "pw-ada-123"})
    assert "Too many failed sign-ins" in locked.content.decode()
    assert "_auth_user_id" not in client.session


def test_admin_and_api_share_the_lock(ada: User) -> None:
    ada.is_staff = True
    ada.save(update_fields=["is_staff"])
    client = Client()
    for _ in range(5):
        client.post("/admin/login/", {"username": "ada", "password": "wrong"})
    admin = client.post("/admin/login/", {"username": "ada", "password": "pw-ada-123"})
    assert "Too many failed sign-ins" in admin.content.decode()
    api = client.get("/api/plans/1", secure=True, **_basic("pw-ada-123"))
    assert api.status_code == 401


def test_basic_auth_needs_https_and_a_401_says_how_to_sign_in(ada: User) -> None:
    client = Client()
    plain = client.get("/api/histories/1", **_basic("pw-ada-123"))
    assert plain.status_code == 401
    assert plain["WWW-Authenticate"].startswith('Basic realm="GPU Planner API"')
    secure = client.get("/api/histories/1", secure=True, **_basic("pw-ada-123"))
    assert secure.status_code == 404  # signed in; no such history of hers


def test_all_digit_passwords_are_refused_at_sign_up() -> None:
    response = Client().post("/accounts/signup/", {"username": "bob", "password1": "83019274651",
                                                   "password2": "83019274651"})
    assert response.status_code == 400 and "entirely numeric" in response.content.decode()
    assert not User.objects.filter(username="bob").exists()


def test_pages_carry_a_content_security_policy(loaded_catalog: None) -> None:
    response = Client().get("/gpus/")
    policy = response["Content-Security-Policy"]
    assert "default-src 'self'" in policy and "script-src 'self'" in policy
    assert "frame-ancestors 'none'" in policy


def test_an_oversized_upload_is_refused_before_its_body_is_read(ada: User, settings: Any) -> None:
    settings.UPLOAD_MAX_BYTES = 1000
    client = signed_in(ada)
    body = io.BytesIO(b"x" * 10)
    response = client.generic("POST", "/history/upload", body.read(),
                              content_type="multipart/form-data; boundary=x",
                              CONTENT_LENGTH=str(5 * 1024 * 1024))
    assert response.status_code == 413 and "the limit is 1000" in response.content.decode()


@pytest.mark.parametrize("url", ["/instances/aws/p4d%00/", "/api/gpus/a%00b",
                                 "/api/instance-types?provider=%00", "/api/prices?region=us%00",
                                 "/api/prices/cheapest?gpu=a%00"])
def test_an_address_holding_nul_is_400_not_a_postgres_500(url: str, db: None) -> None:
    response = Client().get(url)  # each reached a query with the NUL: 500 on PostgreSQL
    assert response.status_code == 400
    assert "holds a NUL character (%00)" in response.content.decode()
    assert Client().get("/api/prices?region=us%2500").status_code == 422  # "%00" as text


def test_basic_auth_with_nul_in_the_user_name_is_401(ada: User) -> None:
    # looked up, the NUL was a 500 on PostgreSQL
    credentials = base64.b64encode(b"ada\x00:pw-ada-123").decode()
    response = Client().get("/api/plans/1", HTTP_AUTHORIZATION=f"Basic {credentials}",
                            secure=True)
    assert response.status_code == 401


def test_healthz_reports_database_broker_and_workers() -> None:
    response = Client().get("/healthz")
    body = response.json()
    assert body["database"] == "ok"
    assert set(body) >= {"status", "database", "broker", "workers"}
    assert response.status_code == (200 if body["broker"] == "ok" else 503)


def test_a_users_uploaded_files_are_deleted_with_the_user(ada: User, settings: Any,
                                                         tmp_path: Path,
                                                         django_capture_on_commit_callbacks: Any
                                                         ) -> None:
    from planner.purchase_mix import services

    settings.MEDIA_ROOT = str(tmp_path)
    data = (b"job_id,start,end,gpu_type,gpu_count\n"
            b"a,2024-01-01T00:00:00Z,2024-01-01T05:00:00Z,H100,8\n")
    outcome = services.history_create(
        owner_id=ada.pk, upload=io.BytesIO(data), name="jobs.csv", size_bytes=len(data),
        options=services.ParseOptions(fmt="generic"), run_options=services.RunOptions())
    history = outcome.history
    assert history is not None
    names = [history.upload.name, history.parsed.name, history.demand.name]
    assert all(default_storage.exists(name) for name in names)
    with django_capture_on_commit_callbacks(execute=True):
        ada.delete()
    assert not any(default_storage.exists(name) for name in names)


def test_check_deploy_is_clean_with_the_production_variables(tmp_path: Path) -> None:
    env = {**os.environ, "DEBUG": "0", "HTTPS": "1", "ALLOWED_HOSTS": "planner.example.org",
           "TRUSTED_PROXY_COUNT": "1",
           "SECRET_KEY": "k" * 20 + "Zx9!" * 10 + "q" * 12, "VAR_DIR": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr


def test_one_address_trying_many_user_names_is_locked(db: None) -> None:
    client = Client()
    for i in range(20):
        client.post("/accounts/login/", {"username": f"guess{i}", "password": "wrong"})
    User.objects.create_user("ada", password="pw-ada-123")
    locked = client.post("/accounts/login/", {"username": "ada", "password": "pw-ada-123"})
    assert "Too many failed sign-ins from your address" in locked.content.decode()
    elsewhere = Client(REMOTE_ADDR="198.51.100.7")
    assert elsewhere.post("/accounts/login/",
                          {"username": "ada", "password": "pw-ada-123"}).status_code == 302


def test_behind_a_trusted_proxy_each_client_address_counts_apart(ada: User,
                                                                  settings: Any) -> None:
    settings.TRUSTED_PROXY_COUNT = 1
    attacker = Client(HTTP_X_FORWARDED_FOR="203.0.113.5")  # via the proxy on 127.0.0.1
    for _ in range(5):
        attacker.post("/accounts/login/", {"username": "ada", "password": "wrong"})
    assert "Too many failed" in attacker.post(
        "/accounts/login/", {"username": "ada", "password": "pw-ada-123"}).content.decode()
    owner = Client(HTTP_X_FORWARDED_FOR="198.51.100.7")
    assert owner.post("/accounts/login/",
                      {"username": "ada", "password": "pw-ada-123"}).status_code == 302
    # Not from the proxy: the forwarded address is dropped, REMOTE_ADDR counts.
    direct = Client(REMOTE_ADDR="192.0.2.1", HTTP_X_FORWARDED_FOR="198.51.100.7")
    for _ in range(5):
        direct.post("/accounts/login/", {"username": "ada", "password": "wrong"})
    assert owner.post("/accounts/login/",
                      {"username": "ada", "password": "pw-ada-123"}).status_code == 302


def test_x_forwarded_proto_counts_only_from_a_trusted_proxy(settings: Any,
                                                            loaded_catalog: None) -> None:
    settings.SECURE_SSL_REDIRECT = True
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    proxied = Client(HTTP_X_FORWARDED_PROTO="https").get("/gpus/")
    assert proxied.status_code == 200
    spoofed = Client(REMOTE_ADDR="203.0.113.5", HTTP_X_FORWARDED_PROTO="https").get("/gpus/")
    assert spoofed.status_code == 301 and spoofed["Location"].startswith("https://")
