"""The real client address behind the documented proxy (HTTPS=1, TRUSTED_PROXY_COUNT=1): one
client's failed sign-ins, sign-ups and previews do not lock out another, the log names the
client, and `check --deploy` refuses HTTPS=1 behind a proxy without the proxy count."""

import logging
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client, RequestFactory

from planner.client_ip import ClientAddressFilter, client_address

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.django_db


@pytest.fixture
def behind_https_proxy(settings: Any) -> None:
    """What HTTPS=1 with TRUSTED_PROXY_COUNT=1 sets (planner/settings.py), gunicorn behind
    one nginx on 127.0.0.1 (the test client's address)."""
    settings.HTTPS = settings.BEHIND_PROXY = True
    settings.SECURE_SSL_REDIRECT = True
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    settings.SESSION_COOKIE_SECURE = settings.CSRF_COOKIE_SECURE = True
    settings.TRUSTED_PROXY_COUNT = 1


def _via_proxy(address: str) -> Client:
    # nginx appends the address it saw; the client may have sent its own made-up entries.
    return Client(HTTP_X_FORWARDED_FOR=f"10.9.9.9, {address}", HTTP_X_FORWARDED_PROTO="https")


def test_25_bad_sign_ins_from_one_client_leave_another_able_to_sign_in(
        behind_https_proxy: None) -> None:
    User.objects.create_user("ada", password="pw-ada-123")
    attacker = _via_proxy("203.0.113.5")
    for i in range(25):
        attacker.post("/accounts/login/", {"username": f"made-up-{i}", "password": "wrong"})
    refused = attacker.post("/accounts/login/", {"username": "ada", "password": "pw-ada-123"})
    assert "Too many failed sign-ins from your address" in refused.content.decode()
    signed = _via_proxy("198.51.100.7").post("/accounts/login/",
                                             {"username": "ada", "password": "pw-ada-123"})
    assert signed.status_code == 302 and signed["Location"] == "/"


def test_the_client_address_is_the_proxys_entry_not_what_the_client_wrote(settings: Any
                                                                          ) -> None:
    settings.TRUSTED_PROXY_COUNT = 1
    factory = RequestFactory()
    request = factory.get("/", REMOTE_ADDR="127.0.0.1",
                          HTTP_X_FORWARDED_FOR="1.2.3.4, 203.0.113.5")
    assert client_address(request) == "203.0.113.5"
    settings.TRUSTED_PROXY_COUNT = 2  # two proxies: the outer one wrote the second from right
    assert client_address(request) == "1.2.3.4"
    settings.TRUSTED_PROXY_COUNT = 0
    assert client_address(request) == "127.0.0.1"


def test_sign_up_is_limited_per_client_address(behind_https_proxy: None, settings: Any) -> None:
    settings.SIGNUPS_PER_HOUR = 3
    maker = _via_proxy("203.0.113.5")
    for i in range(3):
        made = maker.post("/accounts/signup/", {"username": f"bot{i}",
                                                "password1": "a-long-pass-42x",
                                                "password2": "a-long-pass-42x"})
        assert made.status_code == 302
        maker.cookies.clear()
    refused = maker.post("/accounts/signup/", {"username": "bot9", "password1": "a-long-pass-42x",
                                               "password2": "a-long-pass-42x"})
    assert refused.status_code == 429 and int(refused["Retry-After"]) > 3000
    assert "Too many accounts made from your address" in refused.content.decode()
    assert not User.objects.filter(username="bot9").exists()
    other = _via_proxy("198.51.100.7").post(
        "/accounts/signup/", {"username": "carol", "password1": "a-long-pass-42x",
                              "password2": "a-long-pass-42x"})
    assert other.status_code == 302


def test_the_preview_limit_counts_each_client_behind_the_proxy(
        behind_https_proxy: None, settings: Any, loaded_catalog: None) -> None:
    settings.ANONYMOUS_PREVIEWS_PER_10_MINUTES = 1
    query = "workload=llama2-7b&tokens=1e11&providers=aws&deadline_days="
    first = _via_proxy("203.0.113.5")
    assert first.get(f"/plans/whatif?{query}30").status_code == 200
    refused = first.get(f"/plans/whatif?{query}31")
    assert refused.status_code == 429 and refused["Retry-After"] == "600"
    assert _via_proxy("198.51.100.7").get(f"/plans/whatif?{query}32").status_code == 200


def test_log_lines_name_the_client_not_the_proxy(settings: Any) -> None:
    settings.TRUSTED_PROXY_COUNT = 1
    request = RequestFactory().get("/x", REMOTE_ADDR="127.0.0.1",
                                   HTTP_X_FORWARDED_FOR="203.0.113.5")
    record = logging.LogRecord("django.request", logging.WARNING, __file__, 1, "Not Found: /x",
                               None, None)
    record.request = request
    assert ClientAddressFilter().filter(record)
    assert record.client == "203.0.113.5"
    formatter = logging.Formatter(settings.LOGGING["formatters"]["client"]["format"])
    assert "[203.0.113.5] Not Found: /x" in formatter.format(record)


def test_check_deploy_fails_with_https_behind_a_proxy_and_no_proxy_count(tmp_path: Path
                                                                          ) -> None:
    env = {**os.environ, "DEBUG": "0", "HTTPS": "1", "ALLOWED_HOSTS": "planner.example.org",
           "SECRET_KEY": "k" * 20 + "Zx9!" * 10 + "q" * 12, "VAR_DIR": str(tmp_path)}
    env.pop("TRUSTED_PROXY_COUNT", None)
    done = subprocess.run([sys.executable, "manage.py", "check", "--deploy"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode != 0
    assert "planner.E001" in done.stderr and "TRUSTED_PROXY_COUNT=1" in done.stderr
