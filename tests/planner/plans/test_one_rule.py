"""One picking rule (issue 38): on the whole catalog, `acceptable` is the combined chance of
missing the deadline or budget at or below the threshold; the cheapest card picks the
cheapest acceptable option and no acceptable option is cheaper; every other card whose
option is not acceptable says so; meets_deadline and within_budget follow the same rule."""

import json
from io import StringIO
from typing import Any

import pytest
from django.core.management import call_command

pytestmark = pytest.mark.django_db
BASE = ["--workload", "llama2-70b", "--tokens", "2e12", "--json"]
CASES = {
    "60 days": ["--deadline-days", "60"],
    "60 days, $7 M": ["--deadline-days", "60", "--budget-usd", "7000000"],
    "30 days": ["--deadline-days", "30"],
}


@pytest.fixture(scope="module")
def documents(loaded_catalog: None, django_db_blocker: Any) -> dict[str, dict[str, Any]]:
    found = {}
    with django_db_blocker.unblock():
        for name, extra in CASES.items():
            out = StringIO()
            call_command("plan", *BASE, *extra, stdout=out)
            found[name] = json.loads(out.getvalue())["result"]
    return found


@pytest.mark.parametrize("case", list(CASES))
def test_every_option_is_acceptable_exactly_by_the_stated_rule(
        documents: dict[str, dict[str, Any]], case: str) -> None:
    result = documents[case]
    threshold = result["miss_threshold_pct"] / 100.0
    assert threshold == pytest.approx(0.10)
    assert "at most 10% chance of missing" in result["decision_rule"]
    for option in result["options"]:
        assert option["acceptable"] == (option["miss_probability"] <= threshold + 1e-9)
        assert option["meets_deadline"] == (
            option["deadline_miss_probability"] <= threshold + 1e-9)
        assert option["within_budget"] == (
            option["budget_overrun_probability"] <= threshold + 1e-9)


@pytest.mark.parametrize("case", list(CASES))
def test_the_cheapest_card_is_acceptable_and_nothing_acceptable_is_cheaper(
        documents: dict[str, dict[str, Any]], case: str) -> None:
    result = documents[case]
    by_index = {o["row_index"]: o for o in result["options"]}
    cards = {c["key"]: c for c in result["recommendations"]}
    acceptable = [o for o in result["options"] if o["acceptable"] and o["rank"]]
    cheapest = cards.get("cheapest_meeting_deadline")
    if not acceptable:
        assert cheapest is None
        assert "No ranked option is acceptable" in cards["lowest_risk"]["why"]
    else:
        pick = by_index[cheapest["row_index"]]
        assert pick["acceptable"] and pick["rank"] == 1
        assert min(o["total_usd"] for o in acceptable) == pytest.approx(pick["total_usd"])
        assert "Nearest cheaper:" in cheapest["why"] and "points of risk saves $" in \
            cheapest["why"]
    for card in result["recommendations"]:
        assert card["rule"], card["key"]
        option = by_index[card["row_index"]]
        if not option["acceptable"]:
            assert "Not acceptable" in card["why"], card["key"]
            assert f"{100 * option['miss_probability']:.1f}%" in card["why"], card["key"]
    assert result["pick"]["acceptable"] == bool(acceptable)


def test_a_tighter_deadline_never_gives_a_cheaper_acceptable_pick(
        documents: dict[str, dict[str, Any]]) -> None:
    loose, tight = documents["60 days"]["pick"], documents["30 days"]["pick"]
    if tight["acceptable"]:
        assert tight["total_usd"] >= loose["total_usd"]
    else:
        assert tight["key"] == "lowest_risk"


def _stored(user: Any, name: str, extra: list[str]) -> Any:
    from planner.plans.models import PlanScenario
    out = StringIO()
    call_command("plan", *BASE, *extra, stdout=out)
    document = json.loads(out.getvalue())
    return PlanScenario.objects.create(owner=user, name=name, inputs=document["inputs"],
                                       result=document["result"], progress_pct=100,
                                       status=PlanScenario.Status.DONE)


def test_compare_says_why_a_tighter_deadline_looks_cheaper(client_ana: Any, user: Any) -> None:
    loose = _stored(user, "sixty days", CASES["60 days"])
    # Nothing is acceptable at 30 days within $5 M: the pick is the closest, cheaper, option.
    tight = _stored(user, "thirty days five million",
                    ["--deadline-days", "30", "--budget-usd", "5000000"])
    assert tight.result["pick"]["total_usd"] < loose.result["pick"]["total_usd"]
    page = client_ana.get(f"/plans/compare?id={loose.id}&id={tight.id}").content.decode()
    note = page.split('class="note tighter-deadline">', 1)[1].split("</p>", 1)[0]
    assert "“thirty days five million” has the tighter deadline" in note
    assert "not acceptable" in note
    assert "(not acceptable)" in page.split('id="compare-outcomes"', 1)[1]
