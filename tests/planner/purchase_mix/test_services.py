import io
import math
from pathlib import Path

import pytest
from django.core.files.storage import default_storage
from django.db.utils import OperationalError

from planner import outbox
from planner.models import AnalysisRun, History
from planner.purchase_mix import offers, selectors, services
from planner.purchase_mix.core.offers import GpuOffer
from planner.purchase_mix.documents import document_current
from tests.planner.conftest import BAD_CSV, GENERIC_CSV, HELIOS


def _create(owner_id: int, text: str, **options: object) -> services.UploadOutcome:
    data = text.encode()
    return services.history_create(
        owner_id=owner_id, upload=io.BytesIO(data), name="jobs.csv", size_bytes=len(data),
        options=services.ParseOptions(fmt="generic", **options),  # type: ignore[arg-type]
    )


def test_offers_from_loaded_prices_aws_us_east_1(loaded_catalog, db):
    offer_set = offers.gpu_offers(
        sizes=[offers.GpuDemandSize("A100", 20.0), offers.GpuDemandSize("P100", 1.0)],
        provider="aws", region="us-east-1", spot_bands={}, accelerator_map={},
    )
    (offer,) = offer_set.offers
    assert isinstance(offer, GpuOffer)
    assert (offer.provider, offer.region, offer.gpus_per_instance) == ("aws", "us-east-1", 8)
    assert offer.instance_type.startswith("p4")
    assert {c.term for c in offer.commitments} == {"reserved_1y", "reserved_3y"}
    payments = {c.payment_option for c in offer.commitments}
    assert payments == {"no_upfront", "partial_upfront", "all_upfront"}
    upfront = next(c for c in offer.commitments if c.payment_option == "all_upfront")
    assert upfront.upfront_usd > 0 and upfront.payment_words.startswith("all upfront")
    assert all(c.usd_per_hour < offer.on_demand_usd_per_hour for c in offer.commitments)
    assert offer.spot_usd_per_hour is not None
    assert offer.spot_interruptions_per_hour == pytest.approx(
        selectors.spot_hazard_per_hour("15-20%")  # the planner's AWS default
    )
    assert "P100" in offer_set.unpriced
    options = {row["purchase_option"] for row in offer_set.prices}
    assert options == {"on_demand", "reserved_1y", "reserved_3y", "spot"}
    assert all(row["source"] and row["as_of"] for row in offer_set.prices)


def test_offers_small_demand_prefers_small_nodes_and_gcp_commitments(loaded_catalog, db):
    offer_set = offers.gpu_offers(
        sizes=[offers.GpuDemandSize("A100-40GB", 1.0)],
        provider="gcp", region="us-central1", spot_bands={"gcp": ">20%"}, accelerator_map={},
    )
    (offer,) = offer_set.offers
    assert offer.gpus_per_instance == 1
    assert offer_set.accelerators["A100-40GB"] == "a100-sxm4-40gb"
    assert {c.term for c in offer.commitments} == {"committed_1y", "committed_3y"}
    if offer.spot_usd_per_hour is not None:
        assert offer.spot_interruptions_per_hour == pytest.approx(
            selectors.spot_hazard_per_hour(">20%")
        )


def test_offers_cheapest_where_offered_uses_accelerator_map(loaded_catalog, db):
    offer_set = offers.gpu_offers(
        sizes=[offers.GpuDemandSize("P100", 16.0)], provider="", region="",
        spot_bands={}, accelerator_map={"P100": "v100-sxm2-16gb"},
    )
    (offer,) = offer_set.offers
    assert offer_set.accelerators == {"P100": "v100-sxm2-16gb"}
    assert offer.gpus_per_instance >= 8


def test_spot_hazard_from_band():
    assert selectors.spot_hazard_per_hour("<5%") == pytest.approx(-math.log(0.975) / 730)
    with pytest.raises(ValueError, match="spot band"):
        selectors.spot_hazard_per_hour("sometimes")


def test_history_create_stores_files_and_queues_a_run(
    user, settings, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks() as callbacks:
        outcome = _create(user.pk, GENERIC_CSV)
    assert outcome.history is not None and outcome.run is not None
    assert len(callbacks) == 1
    history = History.objects.get()
    assert history.records == 3 and history.gpu_types == ["A100-80GB", "H100"]
    for field in (history.upload, history.parsed, history.demand):
        assert (Path(settings.MEDIA_ROOT) / field.name).is_file()
    assert "jobs" not in history.upload.name  # stored under a random name
    demand = services.history_demand(history)
    assert demand.gpu_types == ("A100-80GB", "H100")
    assert demand.total_gpus["A100-80GB"].iloc[0] == pytest.approx(8.0)


def test_history_create_with_bad_rows_stores_nothing(user, settings):
    outcome = _create(user.pk, BAD_CSV)
    assert outcome.history is None
    assert [(e["line"], e["field"]) for e in outcome.errors] == [(3, "start"), (4, "gpu_count")]
    assert History.objects.count() == 0 and AnalysisRun.objects.count() == 0
    assert not (Path(settings.MEDIA_ROOT) / "histories").exists()


def test_history_create_removes_files_when_the_transaction_fails(user, settings, monkeypatch):
    def boom(**kwargs):
        raise RuntimeError("database went away")

    monkeypatch.setattr(services, "run_create", boom)
    with pytest.raises(RuntimeError):
        _create(user.pk, GENERIC_CSV)
    assert History.objects.count() == 0
    assert list((Path(settings.MEDIA_ROOT) / "histories").iterdir()) == []


def test_history_create_size_limit(user, settings):
    settings.UPLOAD_MAX_BYTES = 10
    with pytest.raises(services.UploadTooLargeError, match="limit"):
        _create(user.pk, GENERIC_CSV)


def test_recommendation_document_has_demand_prices_and_metrics(loaded_catalog, db):
    with HELIOS.open("rb") as handle:
        parsed = services.history_parse(handle, options=services.ParseOptions(
            fmt="usage", column_map={"timestamp": "time", "gpus_in_use": "running_gpu_num"},
            default_gpu_type="V100",
        ))
    assert parsed.history is not None
    document = services.recommendation_document(
        parsed.history, options=services.RunOptions(provider="aws", region="us-east-1")
    )
    assert set(document["hourly_demand"]["firm"]["series"]) == {"V100"}
    assert len(document["hourly_demand"]["firm"]["hours"]) == 84
    assert document["prices"][0]["purchase_option"] == "on_demand"
    plan = document["what_to_buy"]["replay"]["plans"][0]
    assert plan["offer"]["provider"] == "aws"
    # The windows, then the whole history, which what to buy was sized on.
    results = document["lookback_sensitivity"]["results"]
    assert [r["days"] for r in results] == [7, 30, 60, 90, None]
    assert [r["is_recommendation"] for r in results] == [False] * 4 + [True]
    assert document["backtest"]["strategies"][0]["name"] == "all_on_demand"


def test_a_document_stored_before_the_one_split_reads_its_replay_split():
    """An analysis stored before the fix (history 4) showed the sizing's forecast share
    (committed 71.5 %) and a burst scaled from it (30,870 GPU-hours); read back, it gives
    its own replay's split (88,704 of 133,542 committed, 37,592 on demand) everywhere."""
    expected = {"demand_gpu_hours": 133_542.0, "committed_gpu_hours_used": 88_704.0,
                "on_demand_gpu_hours": 37_592.0, "spot_gpu_hours": 7_246.0}
    old = {"settings": {"lookback_days": None},
           "what_to_buy": {"types": [{"gpu_type": "A100", "committed_share_pct": 71.5,
                                      "on_demand_share_pct": 23.1, "spot_share_pct": 5.4}],
                           "replay": {"plans": [{"offer": {"gpu_type": "A100"},
                                                 "expected": expected}]}},
           "carbon": {"burst": [{"gpu_type": "A100", "burst_gpu_hours": 30_870.0,
                                 "co2e_saved_kg": 5_230.0, "cost_change_usd": 52_150.0}],
                      "totals": {"energy_kwh": 1.0}}}
    new = document_current(old)
    (item,) = new["what_to_buy"]["types"]
    assert item["committed_share_pct"] == pytest.approx(100 * 88_704 / 133_542)  # 66.4 %
    assert item["on_demand_share_pct"] == pytest.approx(100 * 37_592 / 133_542)
    assert item["committed_gpu_hours"] == 88_704.0
    (move,) = new["carbon"]["burst"]
    assert move["burst_gpu_hours"] == 37_592.0
    assert move["co2e_saved_kg"] == pytest.approx(5_230.0 * 37_592 / 30_870)
    assert new["carbon"]["totals"] == {"energy_kwh": 1.0, "co2e_saved_kg": move["co2e_saved_kg"],
                                       "cost_change_usd": move["cost_change_usd"]}
    assert document_current(new) is new  # a current document is left as it is


def test_a_document_stored_before_the_fixes_says_which_tables_are_old():
    old = {"lookback_sensitivity": {"results": [{"days": 7, "hourly_commitment_usd": 40.8}]},
           "backtest": {"strategies": [
               {"name": "p50", "whole_term_cost_usd": 1_094_662.0},
               {"name": "hindsight", "instances_by_term": {"3-year reservation": 4},
                "whole_term_cost_usd": 157_821.0, "whole_term_regret_usd": 0.0}]}}
    new = document_current(old)
    assert new["lookback_sensitivity"]["note"].startswith("Stored before look-back windows")
    assert new["backtest"]["note"].startswith("Stored before the whole-term optimum")
    hindsight = new["backtest"]["strategies"][1]
    # Its whole-term cost was another purchase's ($157,821 beside '4 x 3-year'): not shown.
    assert hindsight["whole_term_cost_usd"] is None and hindsight["whole_term_regret_usd"] is None
    assert new["backtest"]["strategies"][0]["whole_term_cost_usd"] == 1_094_662.0


@pytest.mark.django_db(transaction=True)
def test_a_failure_after_the_commit_keeps_the_files_the_history_points_to(user, monkeypatch):
    # The connection lost while the committed run's task is sent (a database restart): the
    # history and its run are saved and need their files.
    def lost_connection(entry_id: int) -> bool:
        raise OperationalError("server closed the connection unexpectedly")

    monkeypatch.setattr(outbox, "outbox_send", lost_connection)
    with pytest.raises(OperationalError):
        _create(user.pk, GENERIC_CSV)
    history = History.objects.get()
    assert AnalysisRun.objects.filter(history=history).exists()
    for name in (history.upload.name, history.parsed.name, history.demand.name):
        assert default_storage.exists(name), name
