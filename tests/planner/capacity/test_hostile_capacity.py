"""Hostile JSON bodies for POST /api/histories/{id}/capacity (the issue-21 corpus, on the
capacity sweep): every answer is a 4xx naming the field or a sweep that is stored and then
finishes; never a 5xx, never a sweep accepted and then failed."""

from typing import Any

from planner.capacity.api import CapacityIn
from planner.capacity.models import CapacityRun
from tests.clients import signed_in
from tests.planner.capacity.conftest import SMALL_SWEEP
from tests.test_hostile_api import HOSTILE_VALUES, Tally, _post, _with

OWNED = {"purchase_usd_per_gpu": 25_000, "lifetime_years": 4, "power_kw_per_gpu": 0.7,
         "pue": 1.3, "usd_per_kwh": 0.1}
PATHS: tuple[tuple[str, ...], ...] = (
    ("zzz",), *((name,) for name in CapacityIn.model_fields),
    ("owned", "zzz"), *(("owned", name) for name in OWNED),
)


def test_the_hostile_capacity_corpus_gives_no_5xx_and_no_failed_sweep(
        analysed: Any, user: Any, django_capture_on_commit_callbacks: Any, settings: Any
) -> None:
    # The corpus starts dozens of sweeps in seconds: above one user's fair share, which
    # tests/test_fair_shares.py checks.
    settings.CAPACITY_RUNS_PER_MINUTE = settings.USER_MAX_CAPACITY_RUNS = 10_000
    client = signed_in(user)
    url = f"/api/histories/{analysed.pk}/capacity"
    tally = Tally()
    for path in PATHS:
        base = {**SMALL_SWEEP, "pool_price": "owned", "owned": OWNED} if path[0] == "owned" \
            else SMALL_SWEEP
        for value in HOSTILE_VALUES:
            what = f"{'.'.join(path)}={str(value)[:20]!r}"
            with django_capture_on_commit_callbacks(execute=True):
                response = _post(client, url, _with(base, path, value))
            tally.add(what, response.status_code)
            if response.status_code == 202:
                run = CapacityRun.objects.get(pk=response.json()["run_id"])
                if run.status != "done":
                    tally.failed_runs.append(f"{what}: {run.status} {run.error}")
            else:
                assert response.status_code in (400, 409, 422), (what, response.status_code)
                assert response.json().get("detail"), what
    print(f"capacity: {sum(tally.statuses.values())} hostile bodies, {tally.statuses}")  # noqa: T201
    assert not tally.server_errors, tally.server_errors
    assert not tally.failed_runs, tally.failed_runs
    assert tally.statuses.get(422, 0) > 100 and tally.statuses.get(202, 0) > 5
