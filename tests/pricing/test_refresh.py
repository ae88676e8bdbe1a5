"""refresh_prices end to end on recorded responses served over HTTP from this machine."""

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from io import StringIO
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from django.core.management import CommandError, call_command

from pricing.models import Price

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("loaded_catalog")]
RECORDED = Path(__file__).resolve().parents[1] / "fixtures" / "pricing" / "recorded"


class _Recorded(BaseHTTPRequestHandler):
    requests: list[str] = []

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        parts = urlsplit(self.path)
        query = parse_qs(parts.query)
        self.requests.append(self.path)
        name = None
        if parts.path == "/offers/v1.0/aws/AmazonEC2/current/us-east-1/index.json":
            name = "aws_ec2_us-east-1_index.json"
        elif parts.path == "/api/retail/prices" and "eastus" in query.get("$filter", [""])[0]:
            name = "azure_retail_eastus_page2.json" if "$skip" in query else (
                "azure_retail_eastus_page1.json")
        elif parts.path == "/v1/services/6F81-5844-456A/skus" and query.get("key") == ["k"]:
            name = "gcp_skus_page2.json" if query.get("pageToken") else "gcp_skus_page1.json"
        if name is None:
            self.send_error(404)
            return
        base = f"http://127.0.0.1:{self.server.server_address[1]}"
        body = (RECORDED / name).read_text().replace("{base}", base).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def price_service(settings: Any) -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Recorded)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    settings.PRICE_REFRESH_AWS_URL = settings.PRICE_REFRESH_AZURE_URL = base
    settings.PRICE_REFRESH_GCP_URL = base
    settings.GCP_BILLING_API_KEY = "k"
    _Recorded.requests = []
    yield base
    server.shutdown()
    server.server_close()


def _refresh(*args: str) -> str:
    out = StringIO()
    call_command("refresh_prices", *args, stdout=out)
    return out.getvalue()


def test_aws_refresh_imports_the_offer_file_and_a_second_run_changes_nothing(
    price_service: str,
) -> None:
    first = _refresh("--provider", "aws", "--region", "us-east-1")
    assert "aws us-east-1:" in first and " 0 created" not in first
    reserved = Price.objects.filter(source__slug__startswith="refresh-aws-us-east-1",
                                    purchase_option="reserved_3y",
                                    instance_type__name="p4d.24xlarge")
    assert reserved.filter(payment_option="partial_upfront").exists()
    count = Price.objects.count()
    second = _refresh("--provider", "aws", "--region", "us-east-1")
    assert " 0 created, 0 updated," in second and Price.objects.count() == count


def test_azure_follows_next_page_links(price_service: str) -> None:
    output = _refresh("--provider", "azure", "--region", "eastus")
    assert len([r for r in _Recorded.requests if r.startswith("/api/retail/prices")]) == 2
    assert Price.objects.filter(source__slug__startswith="refresh-azure-eastus").exists(), output


def test_gcp_reads_every_page_with_the_api_key(price_service: str) -> None:
    _refresh("--provider", "gcp")
    assert len([r for r in _Recorded.requests if "/skus" in r]) == 2
    assert Price.objects.filter(source__slug__startswith="refresh-gcp").exists()


def test_gcp_without_a_key_says_so_and_writes_nothing(price_service: str, settings: Any) -> None:
    settings.GCP_BILLING_API_KEY = ""
    count = Price.objects.count()
    with pytest.raises(CommandError, match="GCP_BILLING_API_KEY"):
        _refresh("--provider", "gcp")
    assert Price.objects.count() == count


def test_an_unreachable_service_is_a_clear_error(settings: Any) -> None:
    settings.PRICE_REFRESH_AWS_URL = "http://127.0.0.1:9"  # nothing listens on the discard port
    with pytest.raises(CommandError, match="aws: nothing imported"):
        _refresh("--provider", "aws", "--region", "us-east-1")


def test_the_daily_schedule_is_off_by_default_and_one_setting_turns_it_on() -> None:
    import os
    import subprocess
    import sys

    code = ("import django, os; os.environ['DJANGO_SETTINGS_MODULE']='planner.settings'; "
            "django.setup(); from django.conf import settings; "
            "print(sorted(settings.CELERY_BEAT_SCHEDULE))")
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "SECRET_KEY": "t"}
    # Both processes at once: each spends seconds importing Django.
    runs = [subprocess.Popen([sys.executable, "-c", code], cwd=root, env=run_env, text=True,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            for run_env in (env, {**env, "PRICE_REFRESH_DAILY": "1"})]
    outputs = [run.communicate(timeout=120) for run in runs]
    for run, (_, stderr) in zip(runs, outputs, strict=True):
        assert run.returncode == 0, stderr
    off, on = (stdout.strip() for stdout, _ in outputs)
    assert (off, on) == ("['sweep-runs']", "['refresh-prices-daily', 'sweep-runs']")
