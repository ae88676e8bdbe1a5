"""Single-request time of every main page (the 12 the accessibility test walks, plus a plan
result, a history analysis and a plan's JSON), signed in, gzip accepted as browsers do, after
two warm-up requests (the caches a running server has filled). Target: under 20 ms each.

It uses the database the settings name; a bench account with one stored plan and one analysed
5,000-job history is created first and deleted afterwards.
"""

import tempfile
from pathlib import Path

from django.contrib.auth.models import User
from django.test import Client

from benchmarks.bench_load import _stored_history
from benchmarks.bench_plans import _stored_plan
from benchmarks.harness import time_calls

BENCH_USER = "bench-pages-user"
TARGET_MS = 20.0
MAIN_PAGES = {
    "home": "/", "catalog": "/gpus/", "compare": "/compare/?gpu=h100-sxm5-80gb&gpu=a100-sxm4-80gb",
    "prices": "/prices/", "prices, spot": "/prices/?purchase_option=spot",
    "instance": "/instances/aws/p4d.24xlarge/", "plan form": "/plans/new",
    "plans": "/plans/", "simulation form": "/simulations/new",
    "accuracy": "/simulations/accuracy", "history upload": "/history/upload",
    "reports": "/reports/", "tokens": "/accounts/tokens/", "what-if example": "/plans/example",
}


def _get(client: Client, url: str) -> None:
    response = client.get(url, HTTP_ACCEPT_ENCODING="gzip")
    if response.status_code != 200:
        raise SystemExit(f"{url} answered {response.status_code}")


def run() -> list[str]:
    User.objects.filter(username=BENCH_USER).delete()
    user = User.objects.create_user(BENCH_USER, password="bench-pages-password-123")
    try:
        with tempfile.TemporaryDirectory() as folder:
            pages = {**MAIN_PAGES, "plan result": f"/plans/{_stored_plan(user).pk}",
                     "history analysis": f"/history/{_stored_history(user, Path(folder)).pk}"}
            pages["plan JSON (API)"] = pages["plan result"].replace("/plans/", "/api/plans/")
            client = Client()
            client.force_login(user)
            example = client.get(pages["what-if example"])  # the example redirects to its plan
            if example.status_code == 302:
                pages["what-if example"] = example["Location"]
            timings = [time_calls(f"{name}: GET {path}"[:58], lambda p=path: _get(client, p),
                                  runs=30) for name, path in pages.items()]
        slow = [t.label for t in timings if t.p95_ms >= TARGET_MS]
        return [t.line() for t in timings] + [
            f"{len(timings) - len(slow)} of {len(timings)} pages under {TARGET_MS:.0f} ms at p95"
            + (f"; over: {', '.join(slow)}" if slow else "")]
    finally:
        user.delete()
