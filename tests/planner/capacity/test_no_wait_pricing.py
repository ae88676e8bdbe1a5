"""The purchase mix's no-wait commitments on the capacity page cost what the purchase mix
says they cost: priced as it buys them (its terms), not at the sweep's one pool price, and
the page says what the sweep's pool price assumes."""

import pytest

from planner.capacity import services
from planner.capacity.models import CapacityRun
from planner.core import formatting as fmt
from tests.clients import signed_in


@pytest.fixture
def steady_swept(steady_analysed, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        run = services.capacity_create(history=steady_analysed,
                                       raw={"policies": ["none", "constant"]})
    run.refresh_from_db()
    assert run.status == CapacityRun.Status.DONE, run.error
    return steady_analysed, run.result


def _mix(history):
    return history.runs.get().result


def test_what_to_buy_now_costs_what_the_purchase_mix_says(steady_swept):
    history, doc = steady_swept
    buy = _mix(history)["what_to_buy"]
    assert {line["term"] for line in buy["lines"]} == {"reserved_1y", "reserved_3y"}
    mix = buy["replay"]["plans"][0]["expected"]
    against = {a["name"]: a for a in doc["against"]}
    now = against["what to buy now"]
    assert now["reference"]["pool_gpus"] == sum(line["gpus"] for line in buy["lines"])
    assert now["reference"]["pool_usd"] == pytest.approx(mix["commitment_cost_usd"], rel=1e-9)
    assert now["reference"]["total_usd"] == pytest.approx(mix["cost_usd"], rel=1e-9)
    assert "Reserved 1 year" in now["bought_as"] and "Reserved 3 years" in now["bought_as"]
    assert f"gives the same {fmt.usd(mix['cost_usd'])}" in now["note"]
    hindsight = _mix(history)["hindsight_reference"]["plans"][0]["expected"]
    assert against["no-wait hindsight optimum"]["reference"]["total_usd"] == pytest.approx(
        hindsight["cost_usd"], rel=1e-9)


def test_the_pool_price_is_stated_with_why_a_swept_pool_of_that_size_costs_less(steady_swept):
    _, doc = steady_swept
    now = next(a for a in doc["against"] if a["name"] == "what to buy now")
    gpus = now["reference"]["pool_gpus"]
    same = next(p for p in doc["points"] if p["pool_gpus"] == gpus and p["policy"] == "none")
    # One rate for every GPU (the cheapest commitment) is cheaper than the 1-year layer.
    assert same["pool_usd"] < now["reference"]["pool_usd"]
    assert same["burst_usd"] == pytest.approx(now["reference"]["burst_usd"])
    statement = doc["prices"]["pool_statement"]
    source = doc["prices"]["sources"][0]
    for words in ("Reserved 3 years, All upfront", fmt.usd_per(
            doc["prices"]["pool_usd_per_gpu_hour"], "GPU-hour"), source["source"],
            f"as of {source['as_of']}", "the cheapest commitment sold",
            f"a swept pool of {gpus} GPUs costs {fmt.usd(same['total_usd'])}",
            f"“what to buy now” with the same GPUs {fmt.usd(now['reference']['total_usd'])}"):
        assert words in statement


def test_the_page_shows_how_each_commitment_is_bought_and_priced(steady_swept, user):
    history, doc = steady_swept
    html = signed_in(user).get(f"/history/{history.pk}/capacity").content.decode()
    now = next(a for a in doc["against"] if a["name"] == "what to buy now")
    assert "Bought as" in html and "Its pool cost" in html
    assert fmt.usd(now["reference"]["total_usd"]) in html
    assert fmt.usd(now["reference"]["pool_usd"]) in html
    assert 'id="pool-price-statement"' in html and "the purchase mix buys it" in html
