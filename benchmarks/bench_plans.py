"""Whole-catalog plan time (service and what-if page) and the result page under 20 users.

The concurrent part runs gunicorn in its own process on loopback, as a deployment would, and
20 client threads each fetch a stored plan's result page.
"""

import os
import statistics
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

from django.conf import settings
from django.contrib.auth.models import User
from django.test import Client
from django.utils import timezone

from benchmarks.harness import free_port, percentile, time_calls
from planner.models import PlanScenario
from planner.plans.scenario import scenario_from_input
from planner.plans.services import plan_compute

ROOT = Path(__file__).resolve().parents[1]
TOKENS = 2e12
SCENARIO = {"workload": "llama2-70b", "tokens": TOKENS,
            "purchase_options": ["on_demand", "spot", "reserved_1y", "committed_1y"]}
USERS, REQUESTS_PER_USER = 20, 15
BENCH_USER, BENCH_PASSWORD = "bench-user", "bench-password-123"


def _stored_plan(user: User) -> PlanScenario:
    scenario = scenario_from_input(SCENARIO, today=timezone.now().date())
    document = plan_compute(scenario=scenario, owner_id=user.id)
    return PlanScenario.objects.create(owner=user, name="benchmark plan", inputs=scenario.data,
                                       status=PlanScenario.Status.DONE, progress_pct=100,
                                       result=document, started_at=timezone.now(),
                                       finished_at=timezone.now())


def _session_cookie(base: str) -> str:
    client = Client()
    client.login(username=BENCH_USER, password=BENCH_PASSWORD)
    return f"{settings.SESSION_COOKIE_NAME}={client.cookies[settings.SESSION_COOKIE_NAME].value}"


def _start_gunicorn(port: int) -> subprocess.Popen[bytes]:
    env = dict(os.environ, DJANGO_SETTINGS_MODULE="planner.settings")
    return subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "planner.wsgi:application", "-b", f"127.0.0.1:{port}",
         "--workers", "2", "--threads", "8", "--preload", "--log-level", "warning"],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _wait(url: str) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(url, timeout=1).close()
            return
        except OSError:
            time.sleep(0.2)
    raise SystemExit(f"server at {url} did not start")


def _load(url: str, cookie: str) -> list[float]:
    samples: list[float] = []
    lock = threading.Lock()

    def user() -> None:
        for _ in range(REQUESTS_PER_USER):
            request = urllib.request.Request(url, headers={"Cookie": cookie})
            start = time.perf_counter()
            with urllib.request.urlopen(request, timeout=30) as response:
                response.read()
            with lock:
                samples.append((time.perf_counter() - start) * 1000)

    threads = [threading.Thread(target=user) for _ in range(USERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return samples


def _concurrent_page(plan: PlanScenario) -> str:
    port = free_port()  # not a fixed one: `make run` or another server may hold it
    server = _start_gunicorn(port)
    try:
        base = f"http://127.0.0.1:{port}"
        _wait(f"{base}/accounts/login/")
        cookie = _session_cookie(base)
        _load(f"{base}/plans/{plan.id}", cookie)  # warm-up: first renders fill each cache
        samples = _load(f"{base}/plans/{plan.id}", cookie)
    finally:
        server.terminate()
        server.wait(timeout=20)
    return (f"GET /plans/<id> result page, {USERS} concurrent users x {REQUESTS_PER_USER} "
            f"(gunicorn 2x8 on loopback): p50 {statistics.median(samples):.0f} ms, "
            f"p95 {percentile(samples, 95):.0f} ms (target p95 < 300 ms)")


def run() -> list[str]:
    User.objects.filter(username=BENCH_USER).delete()
    user = User.objects.create_user(BENCH_USER, password=BENCH_PASSWORD)
    try:
        today = timezone.now().date()
        scenario = scenario_from_input(SCENARIO, today=today)
        # What-if use: the same workload under a new deadline each call. The sweep and the
        # spot draws depend on neither, so each process reuses them (simulator_sweep,
        # spot_risk.sorted_run_samples); pricing, risk, ranking and the document are redone.
        deadlines = iter(range(30, 1000))
        lines = [time_calls(
            "whole-catalog plan, Llama 2 70B, 4 purchase options, a new deadline each call",
            lambda: plan_compute(scenario=scenario_from_input(
                {**SCENARIO, "deadline_days": next(deadlines)}, today=today), owner_id=None),
            runs=10, warmup=1).line() + "  (target p95 < 200 ms)"]
        lines.append(time_calls("the same plan repeated (service)",
                                lambda: plan_compute(scenario=scenario, owner_id=None),
                                runs=10, warmup=1).line())
        # The same plan for a goal no earlier call swept: what the first plan of a workload
        # costs (each process keeps its recent sweeps, simulator.services.simulator_sweep).
        extra_tokens = iter(range(1, 1000))
        lines.append(time_calls(
            "the same, a new token count each call (nothing swept before)",
            lambda: plan_compute(scenario=scenario_from_input(
                {**SCENARIO, "tokens": TOKENS + next(extra_tokens) * 1e9},
                today=today), owner_id=None),
            runs=10, warmup=1).line())
        client = Client()
        client.force_login(user)
        query = "/plans/whatif?workload=llama2-70b&tokens=2e12&purchase_options=on_demand"
        lines.append(time_calls("GET /plans/whatif (whole-catalog plan over HTTP)",
                                lambda: client.get(query), runs=10, warmup=1).line())
        plan = _stored_plan(user)
        lines.append(_concurrent_page(plan))
        return lines
    finally:
        user.delete()
