"""Load test: 50 concurrent users on the catalog, pricing, plan result and history pages and
the plan API, against gunicorn (3 workers x 4 threads) on loopback, driven by locust headless
for 25 s (about a minute in all with the set-up), the users starting 10 a second (each fires
its first two requests at once as it starts; `BENCH_SPAWN_PER_SECOND` changes it). Prints
requests/s, p50/p95/p99 and the error count per page and overall, with each error's kind and
any worker gunicorn restarted.

It uses the database the settings name (SQLite in var/ or DATABASE_URL). A bench account, one
stored plan and one analysed 5,000-job history are created first and deleted afterwards with
everything the users submitted (plans posted to the API are queued, not swept: no worker runs,
so the figures are the web tier's; their messages are no-ops for a later worker).
"""

import csv
import os
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from django.conf import settings
from django.contrib.auth.models import User
from django.test import Client

from benchmarks.bench_plans import _stored_plan
from benchmarks.harness import free_port
from planner.purchase_mix import services as mix_services
from planner.purchase_mix.core.synthetic import write_synthetic_jobs_csv
from planner.purchase_mix.models import History
from planner.runs import Attempt

ROOT = Path(__file__).resolve().parents[1]
USERS = int(os.environ.get("BENCH_USERS", "50"))
DURATION_SECONDS = int(os.environ.get("BENCH_LOAD_SECONDS", "25"))
SPAWN_PER_SECOND = int(os.environ.get("BENCH_SPAWN_PER_SECOND", "10"))
GUNICORN = ["--workers", "3", "--threads", "4"]
WARMUP_ROUNDS = 12  # GETs of every page first (one per gunicorn worker) to fill the caches
BENCH_USER, BENCH_PASSWORD = "bench-load-user", "bench-load-password-123"


def _stored_history(user: User, folder: Path) -> History:
    path = folder / "jobs.csv"
    write_synthetic_jobs_csv(path, 5_000, seed=7, days=120)
    with path.open("rb") as handle:
        outcome = mix_services.history_create(
            owner_id=user.pk, upload=handle, name="bench-jobs.csv",
            size_bytes=path.stat().st_size, options=mix_services.ParseOptions(fmt="generic"),
            run_options=mix_services.RunOptions(provider="aws", region="us-east-1"))
    if outcome.history is None or outcome.run is None:
        raise SystemExit(f"bench history refused: {outcome.error}")
    mix_services.run_execute(run_id=outcome.run.pk, attempt=Attempt("bench"))
    return outcome.history


def _start_gunicorn(port: int, log: Path) -> subprocess.Popen[bytes]:
    env = dict(os.environ, DJANGO_SETTINGS_MODULE="planner.settings")
    with log.open("wb") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "planner.wsgi:application",
             "-b", f"127.0.0.1:{port}", *GUNICORN, "--preload", "--graceful-timeout", "5",
             "--log-level", "warning"],
            cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)


def _wait(url: str, server: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and server.poll() is None:
        try:
            urllib.request.urlopen(url, timeout=1).close()
            return
        except OSError:
            time.sleep(0.2)
    raise SystemExit(f"gunicorn at {url} did not start:\n{log.read_text()[-2000:]}")


def _stop(server: subprocess.Popen[bytes]) -> None:
    server.send_signal(signal.SIGINT)  # gunicorn's quick shutdown: the load is over
    try:
        server.wait(timeout=15)
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait(timeout=5)


def _warm_up(base: str, env: dict[str, str]) -> None:
    paths = ["/", "/gpus/", "/plans/new", "/prices/?purchase_option=spot",
             f"/plans/{env['BENCH_PLAN_ID']}",
             f"/history/{env['BENCH_HISTORY_ID']}", f"/api/plans/{env['BENCH_PLAN_ID']}"]

    def get(path: str) -> None:
        request = urllib.request.Request(base + path, headers={
            "Cookie": env["BENCH_SESSION_COOKIE"], "Accept-Encoding": "gzip"})
        urllib.request.urlopen(request, timeout=60).close()

    # Concurrent rounds, so that every gunicorn worker (each has its own cache) renders once.
    with ThreadPoolExecutor(max_workers=WARMUP_ROUNDS) as pool:
        list(pool.map(get, paths * WARMUP_ROUNDS))


def _session_cookie() -> str:
    client = Client()
    client.login(username=BENCH_USER, password=BENCH_PASSWORD)
    return f"{settings.SESSION_COOKIE_NAME}={client.cookies[settings.SESSION_COOKIE_NAME].value}"


def _locust(base: str, env: dict[str, str], prefix: Path) -> None:
    subprocess.run(
        [sys.executable, "-m", "locust", "-f", str(ROOT / "benchmarks" / "locustfile.py"),
         "--headless", "--host", base, "-u", str(USERS), "-r", str(SPAWN_PER_SECOND),
         "-t", f"{DURATION_SECONDS}s", "--stop-timeout", "5", "--csv", str(prefix),
         "--only-summary", "--loglevel", "WARNING"],
        cwd=ROOT, env=dict(os.environ, **env), stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL, check=False)  # exits 1 when any request failed


def _failures(failures_csv: Path) -> list[str]:
    with failures_csv.open() as handle:
        rows = list(csv.DictReader(handle))
    return [f"  error x{row['Occurrences']}: {row['Method']} {row['Name']}: {row['Error'][:120]}"
            for row in rows]


def _server_trouble(log: Path) -> list[str]:
    # A worker that misses its heartbeat (CPU starved) is killed; its connections are reset.
    text = log.read_text(errors="replace")
    timeouts = text.count("WORKER TIMEOUT")
    return [f"  gunicorn restarted {timeouts} worker(s) that missed their 30 s heartbeat"] \
        if timeouts else []


def _lines(stats_csv: Path) -> list[str]:
    with stats_csv.open() as handle:
        rows = list(csv.DictReader(handle))
    lines = [f"{'':<34}{'requests':>9}{'errors':>8}{'req/s':>8}{'p50 ms':>8}{'p95 ms':>8}"
             f"{'p99 ms':>8}"]
    for row in rows:
        label = "all" if row["Name"] == "Aggregated" else row["Name"]
        lines.append(f"{label:<34}{row['Request Count']:>9}{row['Failure Count']:>8}"
                     f"{float(row['Requests/s']):>8.1f}{row['50%']:>8}{row['95%']:>8}"
                     f"{row['99%']:>8}")
    return lines


def run() -> list[str]:
    User.objects.filter(username=BENCH_USER).delete()
    user = User.objects.create_user(BENCH_USER, password=BENCH_PASSWORD)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryDirectory() as folder:
        try:
            env = {"BENCH_PLAN_ID": str(_stored_plan(user).pk),
                   "BENCH_HISTORY_ID": str(_stored_history(user, Path(folder)).pk),
                   "BENCH_SESSION_COOKIE": _session_cookie()}
            log = Path(folder) / "gunicorn.log"
            server = _start_gunicorn(port, log)
            try:
                _wait(f"{base}/accounts/login/", server, log)
                _warm_up(base, env)
                started = time.perf_counter()
                _locust(base, env, Path(folder) / "load")
                seconds = time.perf_counter() - started
            finally:
                _stop(server)
            database = settings.DATABASES["default"]["ENGINE"].rsplit(".", 1)[-1]
            return [f"{USERS} users ({SPAWN_PER_SECOND} a second at the start) for "
                    f"{DURATION_SECONDS} s ({seconds:.0f} s with start and stop), locust on "
                    f"loopback, gunicorn {' '.join(GUNICORN)}, {database}",
                    *_lines(Path(folder) / "load_stats.csv"),
                    *_failures(Path(folder) / "load_failures.csv"),
                    *_server_trouble(log)]
        finally:
            user.delete()
