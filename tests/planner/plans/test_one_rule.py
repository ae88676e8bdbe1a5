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
    # Every acceptable option is ranked: those left out for another reason (spot capacity,
    # ...) are listed apart, never acceptable.
    acceptable = [o for o in result["options"] if o["acceptable"]]
    assert all(o["rank"] for o in acceptable)
    assert result["excluded_options"]
    assert not any(o["acceptable"] or o["rank"] for o in result["excluded_options"])
    assert all(o["infeasible_reason"] for o in result["excluded_options"])
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


def test_the_results_table_shows_the_chance_the_rule_reads(client_ana: Any, user: Any) -> None:
    """The page's table gives each option's combined chance of missing the limits set (what
    `acceptable` reads), named for those limits, and marks the options over the threshold."""
    import re

    from planner.core import formatting as fmt
    for name, extra, words in (("sixty", CASES["60 days"], "deadline"),
                               ("seven million", CASES["60 days, $7 M"], "deadline or budget")):
        plan = _stored(user, name, extra)
        page = client_ana.get(f"/plans/{plan.id}").content.decode()
        table = page.split('id="plan-table"', 1)[1].split("</table>", 1)[0]
        assert f">P(miss {words})</a></th>" in table
        cells = re.findall(r'<td class="c-miss num">(.*?)</td>', table)
        ranked = sorted((o for o in plan.result["options"] if o["rank"]),
                        key=lambda o: o["rank"])
        first = ranked[0]
        assert cells[0].startswith(fmt.percent(first["miss_probability"]))
        assert ("not acceptable" in cells[0]) == (not first["acceptable"])
        if words == "deadline or budget":  # over $7 M nothing is acceptable
            assert all("not acceptable" in cell for cell in cells)
