"""The storage what-if (/storage/, POST /api/storage/whatif, `price_storage`): the field
report's move from block volumes to Intelligent-Tiering + lifecycle + compression comes out
in its direction and size from the stated inputs, every assumption shown."""

import json
import math
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from hypothesis import given
from hypothesis import strategies as st

from planner.core.storage_tiers import parse_storage_prices
from planner.storage.core.fleet import FleetInputs, FleetModel, price_fleet
from planner.storage.core.inputs import FIELD_REPORT_EXAMPLE, fleet_inputs
from pricing.shipped_tables import STORAGE_PRICES_CSV
from tests.hostile import HOSTILE_SETTINGS, cells

TIERS = parse_storage_prices(STORAGE_PRICES_CSV.read_text(encoding="utf-8"))


def _aws(result: dict, policy: str) -> dict:
    return next(p for p in result["policies"] if p["provider"] == "aws"
                and p["policy"] == policy)


def test_the_field_report_example_saves_in_its_direction_and_size() -> None:
    inputs, providers = fleet_inputs(FIELD_REPORT_EXAMPLE)
    result = price_fleet(TIERS, inputs, providers)
    before, after = _aws(result, "block"), _aws(result, "tiered")
    assert before["total_usd_per_year"] == pytest.approx(120_000, rel=0.05)
    assert after["total_usd_per_year"] == pytest.approx(38_000, rel=0.15)
    assert 60 < after["saving_pct"] < 75  # the report: 68 %
    # By hand: 5 models × 4 a day × 60 days × 60 GB on gp3 with 25 % headroom, $0.08/GB-month.
    assert before["usd_per_year"]["gp3 (General Purpose SSD): checkpoints"] == pytest.approx(
        5 * 4 * 60 * 60 * 1.25 * 0.08 * 12)
    assert any("65 % smaller is beyond lossless" in line for line in result["assumptions"])
    assert result["lossless_only"] and all(
        p["total_usd_per_year"] > after["total_usd_per_year"] * 0.99
        for p in result["lossless_only"] if p["policy"] == "tiered")
    assert result["providers_without_prices"] == ["azure"]


def test_the_prices_line_dates_the_rows_priced_and_no_other() -> None:
    """The as-of dates come from the table rows each policy is priced with: gp3 and S3 as of
    2024-07-01, pd-balanced 2026-08-20; Azure (no block-volume row, not priced) is not dated."""
    inputs, providers = fleet_inputs(FIELD_REPORT_EXAMPLE)
    prices = next(line for line in price_fleet(TIERS, inputs, providers)["assumptions"]
                  if line.startswith("Prices:"))
    assert "gp3 (General Purpose SSD) us-west-2, list price as of 2024-07-01" in prices
    assert "Persistent Disk balanced (pd-balanced) us-central1, list price as of 2026-08-20" \
        in prices
    assert "Azure" not in prices and "Hot " not in prices
    assert prices.count("S3 Standard us-east-1") == 1


def test_a_thirty_day_minimum_class_is_not_used_for_shorter_lifecycles() -> None:
    inputs = FleetInputs(models=(FleetModel("m", 100, 24),), after_days=7)
    result = price_fleet(TIERS, inputs, ("aws", "gcp"))
    cheapest = [p for p in result["policies"] if p["policy"] == "tiered_cheapest"]
    assert cheapest and all("IA" not in p["label"] and "Nearline" not in p["label"]
                            for p in cheapest)


@pytest.mark.parametrize(("raw", "field"), [
    ({"models": "a, 60"}, "models"), ({"models": "a, x, 4"}, "models"),
    ({"models": "a, 60, 4", "after_days": -3}, "after_days"),
    ({"models": "a, 60, 4", "compression_ratio": "lots"}, "compression_ratio"),
    ({"models": "a, 60, 4", "providers": "ibm"}, "providers"),
    ({"models": "a, 60, 4", "colour": 1}, "colour")])
def test_bad_input_names_its_field(raw: dict, field: str) -> None:
    with pytest.raises(ValueError, match=f"^{field}: "):
        fleet_inputs(raw)


@pytest.mark.django_db
def test_page_api_and_command(client, django_user_model) -> None:
    page = client.get("/storage/")
    assert page.status_code == 200
    text = page.content.decode()
    assert 'id="example-note"' in text and 'data-policy="tiered"' in text
    assert "Every assumption" in text
    bad = client.get("/storage/", {"models": "a, 60, 4", "after_days": "-1"})
    assert bad.status_code == 200 and "has-error" in bad.content.decode()
    user = django_user_model.objects.create_user("ana", password="pw-ana-123")
    client.force_login(user)
    body = {"models": [{"name": "a", "checkpoint_gb": 980, "checkpoints_per_day": 24}],
            "providers": ["aws"], "after_days": 3, "compression_ratio": 1.5}
    answer = client.post("/api/storage/whatif", json.dumps(body),
                         content_type="application/json")
    assert answer.status_code == 200, answer.content
    assert {p["policy"] for p in answer.json()["policies"]} >= {"block", "object", "tiered"}
    refused = client.post("/api/storage/whatif", json.dumps({**body, "after_days": 0}),
                          content_type="application/json")
    assert refused.status_code == 422 and "after_days" in refused.content.decode()
    out = StringIO()
    call_command("price_storage", "--example", "--json", stdout=out)
    assert _aws(json.loads(out.getvalue()), "tiered")["saving_pct"] > 60
    with pytest.raises(CommandError, match="models"):
        call_command("price_storage", "--model", "a,60", stdout=StringIO())


@HOSTILE_SETTINGS
@given(raw=st.dictionaries(
    st.sampled_from(["models", "before_days", "headroom_pct", "hot_data_gb", "hot_keep_last",
                     "after_days", "compression_ratio", "files_per_checkpoint", "providers"]),
    st.one_of(cells(), st.floats(allow_nan=True, allow_infinity=True), st.integers(),
              st.lists(st.dictionaries(st.sampled_from(["name", "checkpoint_gb",
                                                        "checkpoints_per_day"]), cells()),
                       max_size=3))))
def test_hostile_inputs_give_a_field_error_or_finite_dollars(raw: dict) -> None:
    try:
        inputs, providers = fleet_inputs(raw)
    except ValueError as exc:
        assert str(exc).split(":", 1)[0] in (*raw, "models")
        return
    result = price_fleet(TIERS, inputs, providers)
    assert all(math.isfinite(p["total_usd_per_year"]) for p in result["policies"])


@pytest.mark.parametrize("providers", [5, [{"a": 1}], "ibm,aws", None])
def test_providers_of_any_shape_are_checked(providers: object) -> None:
    raw = {"models": "a, 60, 4", "providers": providers}
    if providers is None:
        assert fleet_inputs(raw)[1] == ("aws", "gcp", "azure")
        return
    with pytest.raises(ValueError, match="^providers: "):
        fleet_inputs(raw)
