"""Locust users of the load test (benchmarks/bench_load.py): a signed-in user browsing the
catalog, prices, a plan result, a purchase-mix history, and using the plan API.

The benchmark passes the session cookie and the ids of the stored plan and history in the
environment; every user shares the one bench account.
"""

import json
import os

from locust import HttpUser, between, task

PLAN_ID = os.environ.get("BENCH_PLAN_ID", "0")
HISTORY_ID = os.environ.get("BENCH_HISTORY_ID", "0")
SESSION_COOKIE = os.environ.get("BENCH_SESSION_COOKIE", "")
# A plan the API request checks and queues (the sweep is the worker's job).
PLAN_REQUEST = {"workload": "llama2-7b", "tokens": 1e12, "providers": ["aws"],
                "purchase_options": ["on_demand"]}


class PlannerUser(HttpUser):
    wait_time = between(0.5, 1.5)

    def on_start(self) -> None:
        name, _, value = SESSION_COOKIE.partition("=")
        self.client.cookies.set(name, value)
        # The plan form sets the CSRF cookie that the API's session auth checks on POST.
        self.client.get("/plans/new", name="/plans/new")
        self.csrf = self.client.cookies.get("csrftoken", "")

    @task(4)
    def catalog(self) -> None:
        self.client.get("/gpus/", name="/gpus/ (catalog)")

    @task(3)
    def prices(self) -> None:
        self.client.get("/prices/?purchase_option=spot", name="/prices/ (pricing)")

    @task(4)
    def plan_result(self) -> None:
        self.client.get(f"/plans/{PLAN_ID}", name="/plans/<id> (plan result)")

    @task(3)
    def history(self) -> None:
        self.client.get(f"/history/{HISTORY_ID}", name="/history/<id> (history)")

    @task(3)
    def plan_api_get(self) -> None:
        self.client.get(f"/api/plans/{PLAN_ID}", name="GET /api/plans/<id>")

    @task(1)
    def plan_api_post(self) -> None:
        with self.client.post("/api/plans", data=json.dumps(PLAN_REQUEST),
                              headers={"Content-Type": "application/json",
                                       "X-CSRFToken": self.csrf},
                              name="POST /api/plans", catch_response=True) as response:
            if response.status_code != 201:
                response.failure(f"{response.status_code}: {response.text[:200]}")
