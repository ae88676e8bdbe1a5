"""One user hitting the plan API as fast as it can is limited (429 with Retry-After), and
another user's plan still finishes within a minute, on real workers as deployed: one taking
every queue and one for the "short" queue alone (planner.fair_shares, CELERY_TASK_ROUTES)."""

import json
import time
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User

from planner.plans.models import PlanScenario
from tests.clients import signed_in
from tests.conftest import app_on_redis, load_catalog, start_worker, stop_worker, wait_ready

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]
PLAN = {"workload": "llama2-7b", "tokens": 1e11, "providers": ["aws", "gcp"],
        "purchase_options": ["on_demand", "spot"]}
HAMMER_SECONDS = 10


def _post(client: Any) -> Any:
    return client.post("/api/plans", json.dumps(PLAN), content_type="application/json")


def test_a_user_flooding_the_plan_api_is_limited_and_another_users_plan_finishes(
        redis_url: str, tmp_path: Path) -> None:
    load_catalog()
    flooder = signed_in(User.objects.create_user("mallory", password="pw-mal-123"))
    other = signed_in(User.objects.create_user("bea", password="pw-bea-123"))
    logs = [tmp_path / "worker.log", tmp_path / "short.log"]
    with app_on_redis(redis_url) as app:
        workers = [start_worker(redis_url, logs[0], node_name="all"),
                   start_worker(redis_url, logs[1], node_name="short", queues="short")]
        try:
            for worker, log in zip(workers, logs, strict=True):
                wait_ready(app, worker, log)
            statuses: list[int] = []
            retry_after: set[str] = set()
            other_id, other_posted = 0, 0.0
            started = time.monotonic()
            while time.monotonic() - started < HAMMER_SECONDS:
                response = _post(flooder)
                statuses.append(response.status_code)
                if response.status_code == 429:
                    retry_after.add(response["Retry-After"])
                    assert response.json()["detail"]
                    if not other_id:  # the flooder's share is queued: now the other user
                        created = _post(other)
                        assert created.status_code == 201, created.content
                        other_id, other_posted = created.json()["id"], time.monotonic()
            assert other_id, f"never limited: {statuses}"
            while time.monotonic() - other_posted < 60:
                plan = PlanScenario.objects.get(pk=other_id)
                if plan.is_finished:
                    break
                time.sleep(0.2)
            waited_s = time.monotonic() - other_posted
        finally:
            for worker in workers:
                stop_worker(worker)
    print(f"flood: {len(statuses)} posts in {HAMMER_SECONDS} s, {statuses.count(201)} "  # noqa: T201
          f"accepted, {statuses.count(429)} refused; the other plan took {waited_s:.1f} s")
    assert set(statuses) <= {201, 429}, statuses
    assert statuses.count(429) > statuses.count(201) > 0
    assert retry_after and all(int(value) > 0 for value in retry_after)
    assert plan.status == "done" and waited_s < 60, (plan.status, plan.error, waited_s)
    assert PlanScenario.objects.filter(owner__username="mallory").count() == statuses.count(201)
