"""What each process keeps of the catalog (pricing.catalog_cache) follows every write."""

from datetime import date

import pandas as pd
import pytest

from pricing.catalog_cache import catalog_memo, current_price_frame
from pricing.models import Accelerator, CatalogStamp, Price
from simulator.services import catalog_gpu_specs


def _stamped() -> None:
    CatalogStamp.objects.get_or_create(pk=1, defaults={"token": "test"})


def test_a_changed_price_is_read_at_once(catalog: date) -> None:
    _stamped()
    price = Price.objects.filter(is_current=True).select_related("region").first()
    assert price is not None

    def usd_per_hour(frame: pd.DataFrame) -> float:
        row = frame[(frame["instance_key"] == price.instance_type_id)
                    & (frame["region"] == price.region.code)
                    & (frame["purchase_option"] == price.purchase_option)
                    & (frame["payment_option"] == price.payment_option)
                    & (frame["offering_class"] == price.offering_class)]
        assert len(row) == 1
        return float(row["usd_per_hour"].iloc[0])

    rows = current_price_frame()
    assert current_price_frame() is rows  # kept while nothing changed
    assert usd_per_hour(rows) == float(price.usd_per_hour)
    Price.objects.filter(pk=price.pk).update(usd_per_hour=price.usd_per_hour * 3)
    assert usd_per_hour(current_price_frame()) == float(price.usd_per_hour * 3)


def test_a_price_no_longer_current_leaves_the_frame(catalog: date) -> None:
    _stamped()
    price = Price.objects.filter(is_current=True).first()
    assert price is not None
    before = len(current_price_frame())
    Price.objects.filter(pk=price.pk).update(is_current=False)
    assert len(current_price_frame()) == before - 1


def test_an_edited_gpu_is_simulated_with_its_new_memory(catalog: date) -> None:
    _stamped()
    h100 = Accelerator.objects.get(slug="h100-sxm5-80gb")
    before = catalog_gpu_specs()[h100.name].memory_gib
    Accelerator.objects.filter(pk=h100.pk).update(memory_gb=h100.memory_gb * 2)
    assert catalog_gpu_specs()[h100.name].memory_gib == pytest.approx(before * 2)


def test_results_are_kept_per_key_and_computed_again_after_a_catalog_write(catalog: date) -> None:
    _stamped()
    calls: list[str] = []

    def build(tag: str) -> str:
        calls.append(tag)
        return tag

    assert catalog_memo("t", "a", lambda: build("a")) == "a"
    assert catalog_memo("t", "a", lambda: build("again")) == "a"  # kept
    assert catalog_memo("t", "b", lambda: build("b")) == "b"  # another key computes
    Price.objects.filter(is_current=True).first().save()  # any catalog write
    assert catalog_memo("t", "a", lambda: build("after")) == "after"
    assert calls == ["a", "b", "after"]


def test_without_a_stamp_nothing_is_kept(catalog: date) -> None:
    CatalogStamp.objects.all().delete()
    calls: list[int] = []
    catalog_memo("t", "a", lambda: calls.append(1))
    catalog_memo("t", "a", lambda: calls.append(1))
    assert len(calls) == 2
