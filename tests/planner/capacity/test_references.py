"""Why the purchase mix's own replay of a no-wait commitment differs from the sweep's, each
reason only when it applies; the prices used with their age, staleness and basis."""

from datetime import date

import pytest

from planner.capacity.documents import dated_sources
from planner.capacity.references import reference_note

PURCHASE = {"name": "what to buy now", "gpus": 24, "usd_per_hour": 36.64,
            "bought_as": "2 x p4de.24xlarge on Reserved 3 years, All upfront and 1 x "
                         "p4de.24xlarge on Reserved 1 year, All upfront",
            "purchase_mix_total_usd": 269_714.0, "purchase_mix_pool_gpu_hours": 88_704.0,
            "is_purchase_mix_spot": True, "purchase_mix_hours": 3696}
POINT = {"total_usd": 289_252.0, "pool_usd": 135_418.0, "pool_gpu_hours": 88_704.0,
         "span_hours": 3696.0}


def test_the_same_total_is_said_to_be_the_same():
    note = reference_note(PURCHASE, {**POINT, "total_usd": 269_714.0}, is_spot_allowed=True)
    assert "gives the same $269,714" in note and "$36.64/hour, $135,418" in note


@pytest.mark.parametrize(("changes", "spot", "said", "not_said"), [
    ({}, False, "runs interruptible jobs on spot, this sweep bursts them on demand",
     "hour by hour"),
    ({"is_purchase_mix_spot": False}, True, "runs interruptible jobs on demand, this sweep "
     "bursts them to spot", "look-back"),
    ({"purchase_mix_hours": 720}, True, "look-back window (720 h)", "spot"),
    ({"purchase_mix_pool_gpu_hours": 95_000.0}, True, "95,000 GPU-hours on it", "look-back"),
])
def test_a_different_total_says_why(changes, spot, said, not_said):
    note = reference_note({**PURCHASE, **changes}, POINT, is_spot_allowed=spot)
    assert "The purchase mix's replay of it is $269,714, here $289,252" in note
    assert said in note and not_said not in note


def test_a_purchase_of_nothing_says_every_job_runs_in_the_cloud():
    note = reference_note({**PURCHASE, "gpus": 0, "usd_per_hour": 0.0},
                          {**POINT, "pool_usd": 0.0, "total_usd": 269_714.0},
                          is_spot_allowed=True)
    assert note.startswith("“what to buy now” commits nothing for this type")


@pytest.mark.parametrize(("as_of", "basis", "age", "is_stale", "words"), [
    ("2026-06-05", "listed", 180, False, "listed price"),
    ("2026-06-04", "derived", 181, True, "published discount level"),
    ("2026-06-04T00:00:00", "listed", 181, True, "listed price"),
    (None, "estimated", None, False, "owned-hardware inputs"),
    (None, None, None, False, "not known"),
])
def test_prices_used_carry_their_age_staleness_and_basis(as_of, basis, age, is_stale, words):
    row = dated_sources([{"as_of": as_of, "basis": basis}], today=date(2026, 12, 2),
                        stale_days=180)[0]
    assert (row["age_days"], row["is_stale"]) == (age, is_stale)
    assert words in row["basis_words"]
