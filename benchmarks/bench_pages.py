"""Single-request time of every main page (the 12 the accessibility test walks, plus a plan
result, a history analysis and a plan's JSON), signed in, gzip accepted as browsers do, after
two warm-up requests (the caches a running server has filled). Target: under 20 ms each.

It uses the database the settings name; a bench account with one stored plan and one analysed
5,000-job history is created first and deleted afterwards.
"""

import csv
import io
import tempfile
import time
from pathlib import Path

from django.contrib.auth.models import User
from django.test import Client

from benchmarks.bench_load import _stored_history
from benchmarks.bench_plans import _stored_plan
from benchmarks.harness import time_calls
from simulator.calibration import services as runs_services
from simulator.services import REFERENCE_RUNS_FILES

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


def _store_measured_runs(user: User) -> int:
    """The first MAX_RUNS_PER_USER published reference rows, stored as the user's own runs."""
    rows: list[dict[str, str]] = []
    for path in REFERENCE_RUNS_FILES[:2]:  # the third, whole_runs.csv, has its own schema
        with Path(path).open(newline="", encoding="utf-8") as source:
            rows += list(csv.DictReader(source))
    rows = [{**row, "run_id": f"bench-{row['run_id']}"}
            for row in rows[:runs_services.MAX_RUNS_PER_USER]]
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(rows[0]), lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    outcome = runs_services.measured_runs_import(owner_id=user.pk, data=out.getvalue().encode())
    if not outcome.is_ok:
        raise SystemExit(f"bench runs refused: {outcome.errors[:3]}")
    return outcome.n_created


def _measured_runs_lines(client: Client, user: User) -> list[str]:
    """The runs page at the 200-run limit: its first view after the runs change predicts
    them all; later views reuse the cached predictions."""
    n_runs = _store_measured_runs(user)
    start = time.perf_counter()
    _get(client, "/simulations/runs")
    first_ms = (time.perf_counter() - start) * 1000
    warm = time_calls(f"measured runs ({n_runs} runs): GET /simulations/runs",
                      lambda: _get(client, "/simulations/runs"), runs=30)
    return [f"{'measured runs (' + str(n_runs) + ' runs): first view after a change':<58} "
            f"{first_ms:8.1f} ms (predicts every run)", warm.line()]


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
            runs_lines = _measured_runs_lines(client, user)
        slow = [t.label for t in timings if t.p95_ms >= TARGET_MS]
        return [t.line() for t in timings] + [
            f"{len(timings) - len(slow)} of {len(timings)} pages under {TARGET_MS:.0f} ms at p95"
            + (f"; over: {', '.join(slow)}" if slow else "")] + runs_lines
    finally:
        user.delete()
