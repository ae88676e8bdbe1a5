"""One buying rule, one line format: for one 150-day history, the purchase mix's page, its
report, the API and `recommend_mix`, and the capacity page, its report, the API and
`capacity_plan`, show the same purchase lines (the same fields, the same sentence)."""

import io
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from django.core.management import call_command
from django.utils.html import escape

from planner.capacity import services
from planner.capacity.core.inputs import capacity_inputs
from planner.capacity.core.jobs import PoolJobs
from planner.capacity.core.prices import CapacityPrices
from planner.capacity.models import CapacityRun
from planner.capacity.purchase import is_buyable, pool_gate, pool_purchase
from planner.purchase_mix.core.buying_rule import LINE_FIELDS
from tests.clients import signed_in
from tests.planner.capacity.conftest import steady_csv

POOLS = {"pool_gpus": [0, 16, 24, 32, 48], "max_wait_hours": [2]}


def _cli(command: str, *args: str) -> str:
    out = io.StringIO()
    call_command(command, *args, stdout=out, stderr=io.StringIO())
    return out.getvalue()


def test_every_surface_shows_the_same_purchase_lines(
        steady_analysed: Any, user: Any, django_capture_on_commit_callbacks: Any,
        tmp_path: Path) -> None:
    client = signed_in(user)
    history = steady_analysed
    mix = client.get(f"/api/histories/{history.pk}").json()["document"]["what_to_buy"]["lines"]
    assert mix, "150 steady days commit something"
    with django_capture_on_commit_callbacks(execute=True):
        run = services.capacity_create(history=history, raw=POOLS)
    run.refresh_from_db()
    assert run.status == CapacityRun.Status.DONE, run.error
    api = client.get(f"/api/histories/{history.pk}/capacity").json()
    purchase = api["purchase"]
    pool = purchase["lines"]
    assert pool and api["recommended"]["pool_gpus"] == purchase["gpus"] > 0
    # one line format: the capacity pool's lines carry every field of what to buy's
    for line in [*mix, *pool]:
        assert set(LINE_FIELDS) <= set(line)
        assert set(line["savings_usd"]) == {"p10", "p50", "p90"}
        assert line["gpus"] == line["count"] * line["gpus_per_instance"]
    assert set(mix[0]) == set(pool[0])
    assert purchase["full_term_cost_usd"] == sum(x["full_term_cost_usd"] for x in pool)

    # The purchase mix: page, report, API (above) and command line.
    page = client.get(f"/history/{history.pk}").content.decode()
    report = client.get(f"/history/{history.pk}/report.html").content.decode()
    path = tmp_path / "steady.csv"
    path.write_bytes(steady_csv())
    printed = _cli("recommend_mix", str(path))
    as_json = json.loads(_cli("recommend_mix", str(path), "--json"))
    assert as_json["document"]["what_to_buy"]["lines"] == mix
    for line in mix:
        assert escape(line["sentence"]) in page and escape(line["sentence"]) in report
        assert line["sentence"] in printed

    # Capacity: page, report, API (above) and command line, the same sweep.
    cap_page = client.get(f"/history/{history.pk}/capacity").content.decode()
    cap_report = client.get(f"/history/{history.pk}/capacity/report.html").content.decode()
    args = [str(path), "--pool-gpus", "0,16,24,32,48", "--max-wait-hours", "2"]
    cap_printed = _cli("capacity_plan", *args)
    cap_json = json.loads(_cli("capacity_plan", *args, "--json"))
    assert cap_json["purchase"]["lines"] == pool
    for line in pool:
        assert escape(line["sentence"]) in cap_page and escape(line["sentence"]) in cap_report
        assert f"to buy it: {line['sentence']}" in cap_printed
    assert escape(api["headline"]) in cap_page and api["headline"] in cap_printed


@pytest.mark.parametrize("days", [20, 60, 120])
def test_an_owned_pool_is_recommended_only_when_the_rule_buys_it(days: int) -> None:
    """Owned hardware is a term of its lifetime (5 years by default): on 60 days the rule
    buys no term over 3 years, so the sweep may not recommend a pool it would not buy."""
    n = days * 24
    jobs = PoolJobs("H100", np.arange(n) * 3600.0, np.full(n, 3600.0),
                    np.full(n, 8, dtype=np.int64), np.zeros(n, dtype=bool))
    inputs = capacity_inputs({"pool_price": "owned", "pool_gpus": [0, 8]})
    bought = pool_purchase({}, jobs, inputs, 8, CapacityPrices(1.0, 4.0, None, "owned"))
    assert is_buyable({}, jobs, inputs, pool_gate(jobs)) == bool(bought["lines"])
    assert bool(bought["lines"]) == (days >= 90)


def test_an_owned_gpu_is_bought_on_its_cost_lines() -> None:
    """The buying rule's owned term pays the price with its network and storage upfront and
    the running lines (power, space and cooling, staff) hourly; its rate is every line's."""
    from planner.capacity.core.owned import owned_cost
    from planner.capacity.purchase import owned_option

    given = {"purchase_usd_per_gpu": 20_000.0, "network_pct": 10.0, "storage_pct": 5.0}
    cost = owned_cost("A100", given)
    option = owned_option("A100", capacity_inputs({"pool_price": "owned", "owned": given}))
    by_name = {line["name"]: line["usd_per_gpu_hour"] for line in cost.lines}
    assert option.upfront_usd == cost.upfront_usd_per_gpu == pytest.approx(23_000.0)
    assert option.recurring_usd_per_hour == cost.running_usd_per_gpu_hour == pytest.approx(
        by_name["power"] + by_name["space and cooling"] + by_name["staff"])
    assert option.usd_per_hour == cost.usd_per_gpu_hour == pytest.approx(sum(by_name.values()))
    assert option.term_years == cost.hardware.lifetime_years == 5.0
