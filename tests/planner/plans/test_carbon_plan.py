"""Carbon in a plan on the shipped catalog: every option of `plan --json` carries energy,
CO2e and its basis; the CO2e of one instance type in two regions is in the ratio of their
grids; a region without data says why; `--max-co2e-kg` refuses options above it."""

import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("loaded_catalog")]
ARGS = ("--workload", "llama2-7b", "--tokens", "1e11", "--purchase-options", "on_demand")


def _plan(*args: str) -> dict:
    out = StringIO()
    call_command("plan", *ARGS, *args, "--json", stdout=out)
    return json.loads(out.getvalue())["result"]


def test_every_option_carries_energy_co2e_and_basis() -> None:
    result = _plan("--providers", "aws,lambda")
    for option in result["options"]:
        assert option["energy_kwh"] > 0
        assert {"co2e_kg", "carbon_basis", "carbon_note"} <= set(option)
        if option["provider"] == "aws" and option["co2e_kg"] is not None:
            basis = option["carbon_basis"]
            assert basis["accounting"] == "location" and basis["pue"] == 1.135
            assert option["co2e_kg"] == pytest.approx(
                option["energy_kwh"] * basis["pue"] * basis["g_co2e_per_kwh"] / 1000)
    lambdas = [o for o in result["options"] if o["provider"] == "lambda"]
    assert lambdas and all(o["co2e_kg"] is None and o["carbon_basis"] is None for o in lambdas)
    assert all("Lambda publishes no grid intensity" in o["carbon_note"] for o in lambdas)
    assert result["carbon"]["accounting"] == "location"
    assert "TDP" in result["carbon"]["energy_counts"]


def test_one_instance_type_in_two_regions_emits_in_the_ratio_of_their_grids() -> None:
    result = _plan("--providers", "aws", "--regions", "us-east-1,us-west-2")
    by_offer: dict = {}
    for option in result["options"]:
        key = (option["instance_type"], option["nodes"], option["purchase_option"])
        by_offer.setdefault(key, {})[option["region"]] = option
    pairs = [regions for regions in by_offer.values() if len(regions) == 2]
    assert pairs
    for regions in pairs:
        east, west = regions["us-east-1"], regions["us-west-2"]
        assert east["carbon_basis"]["pue"] == west["carbon_basis"]["pue"]
        # CCF (eGRID 2020): SERC 379.069 and WECC 322.167 gCO2e/kWh.
        assert east["co2e_kg"] / west["co2e_kg"] == pytest.approx(379.069 / 322.167, rel=0.01)


def test_max_co2e_kg_refuses_options_above_it() -> None:
    free = _plan("--providers", "aws,gcp")
    ranked = [o for o in free["options"] if o["rank"] is not None]
    emissions = sorted(o["co2e_kg"] for o in ranked if o["co2e_kg"] is not None)
    limit = emissions[len(emissions) // 2]
    limited = _plan("--providers", "aws,gcp", "--max-co2e-kg", str(limit))
    kept = [o for o in limited["options"] if o["rank"] is not None]
    assert kept and all(o["co2e_kg"] <= limit for o in kept)
    assert limited["n_feasible"] < free["n_feasible"]
    assert limited["infeasible"]["over the CO2e limit"] > 0
    above = [o for o in limited["options"] if o["co2e_kg"] and o["co2e_kg"] > limit]
    assert all("over the CO2e limit" in o["infeasible_reason"] for o in above)
    with pytest.raises(CommandError, match="Most CO2e must be a positive number"):
        call_command("plan", *ARGS, "--max-co2e-kg", "-5")


def test_lowest_carbon_card_and_market_accounting() -> None:
    result = _plan("--providers", "aws,gcp")
    cards = {c["key"]: c for c in result["recommendations"]}
    card = cards["lowest_carbon"]
    chosen = next(o for o in result["options"] if o["row_index"] == card["row_index"])
    ranked = [o["co2e_kg"] for o in result["options"]
              if o["rank"] is not None and o["co2e_kg"] is not None]
    assert chosen["co2e_kg"] == min(ranked)
    market = _plan("--providers", "aws,gcp", "--carbon-accounting", "market")
    for option in market["options"]:
        if option["provider"] == "aws":
            assert option["co2e_kg"] is None and "market-based" in option["carbon_note"]
        elif option["co2e_kg"] is not None:
            assert option["carbon_basis"]["accounting"] == "market"
    with pytest.raises(CommandError, match="carbon_accounting"):
        call_command("plan", *ARGS, "--carbon-accounting", "scope3")


def test_api_takes_the_co2e_limit_and_refuses_a_bad_one(
    client_ana, eager_celery, django_capture_on_commit_callbacks
) -> None:
    body = {"workload": "llama2-7b", "tokens": 1e11, "providers": ["aws"],
            "purchase_options": ["on_demand"], "max_co2e_kg": 400}
    with django_capture_on_commit_callbacks(execute=True):
        created = client_ana.post("/api/plans", json.dumps(body), content_type="application/json")
    assert created.status_code == 201
    result = client_ana.get(f"/api/plans/{created.json()['id']}").json()["result"]
    assert result["constraints"]["max_co2e_kg"] == 400
    ranked = [o for o in result["options"] if o["rank"] is not None]
    assert ranked and all(o["co2e_kg"] <= 400 for o in ranked)
    bad = client_ana.post("/api/plans", json.dumps({**body, "max_co2e_kg": -1}),
                          content_type="application/json")
    assert bad.status_code == 422
    assert "max_co2e_kg: Most CO2e must be a positive number" in bad.content.decode()
    wrong = client_ana.post("/api/plans", json.dumps({**body, "carbon_accounting": "scope3"}),
                            content_type="application/json")
    assert wrong.status_code in (400, 422) and "carbon_accounting" in wrong.content.decode()


def test_a_co2e_limit_no_option_meets_says_so_not_deadline_and_budget(
    client_ana, eager_celery, django_capture_on_commit_callbacks
) -> None:
    # Neither a deadline nor a budget was set: the page blamed them all the same.
    body = {"workload": "llama2-7b", "tokens": 1e11, "providers": ["aws"],
            "purchase_options": ["on_demand"], "max_co2e_kg": 1.5}
    with django_capture_on_commit_callbacks(execute=True):
        created = client_ana.post("/api/plans", json.dumps(body), content_type="application/json")
    assert created.status_code == 201
    plan_id = created.json()["id"]
    result = client_ana.get(f"/api/plans/{plan_id}").json()["result"]
    assert result["no_option"] == "No option meets the CO2e limit of 1.5 kg"
    page = client_ana.get(f"/plans/{plan_id}").content.decode()
    assert "No option meets the CO2e limit of 1.5 kg; see the reasons below." in page
    assert "deadline and budget" not in page


@pytest.mark.parametrize(("limits", "words"), [
    ({}, "No option is left"),
    ({"max_co2e_kg": 500.0}, "No option meets the CO2e limit of 500 kg"),
    ({"deadline_hours": 48.0, "budget_usd": 1e5},
     "No option meets the deadline of 2.0 days and the budget of $100,000"),
    ({"deadline_hours": 48.0, "budget_usd": 1e5, "max_co2e_kg": 20.0},
     "No option meets the deadline of 2.0 days, the budget of $100,000 and the CO2e limit "
     "of 20 kg"),
])
def test_no_option_names_only_the_limits_set(limits: dict, words: str) -> None:
    from planner.plans.core.assumptions import PlanConstraints
    from planner.plans.core.plan import no_option_words

    assert no_option_words(PlanConstraints(**limits)) == words
