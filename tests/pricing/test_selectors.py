from datetime import date

import pytest
from django.db import connection
from django.http import Http404

from pricing import selectors
from pricing.models import Accelerator, CatalogStamp, Price, PurchaseOption, Region


def test_per_gpu_hour_is_a_float_division_even_for_whole_dollar_prices(catalog: date) -> None:
    prices = selectors.price_queryset(today=catalog)
    for price in prices:
        expected = float(price.usd_per_hour) / price.instance_type.gpu_count
        assert price.usd_per_gpu_hour_value == pytest.approx(expected)


def test_cheapest_by_accelerator_is_the_minimum_current_on_demand(catalog: date) -> None:
    cheapest = selectors.cheapest_by_accelerator(today=catalog)
    h100 = Accelerator.objects.get(slug="h100-sxm5-80gb")
    offers = Price.objects.filter(
        is_current=True, purchase_option="on_demand", instance_type__accelerator=h100
    ).select_related("instance_type")
    assert cheapest[h100.id].usd_per_gpu_hour == pytest.approx(
        min(p.usd_per_gpu_hour for p in offers)
    )
    assert all(p.is_current and p.purchase_option == "on_demand" for p in cheapest.values())


def test_cheapest_by_accelerator_skips_gpus_without_offers(catalog: date) -> None:
    cheapest = selectors.cheapest_by_accelerator(today=catalog)
    gaudi = Accelerator.objects.get(slug="gaudi2-oam-96gb")
    assert gaudi.id not in cheapest


def test_cheapest_by_accelerator_per_purchase_option(catalog: date) -> None:
    spot = selectors.cheapest_by_accelerator(today=catalog, purchase_option=PurchaseOption.SPOT)
    assert spot
    assert {p.purchase_option for p in spot.values()} == {"spot"}


def test_price_list_returns_current_prices_unless_history_is_asked(catalog: date) -> None:
    current = selectors.price_list(today=catalog)
    everything = selectors.price_list(today=catalog, include_history=True)
    assert not current.filter(is_current=False).exists()
    assert everything.filter(is_current=False).exists()
    assert everything.count() == Price.objects.count()


def test_price_list_filters(catalog: date) -> None:
    prices = selectors.price_list(
        today=catalog, gpu="a100-sxm4-80gb", provider="aws", region="us-east-1",
        purchase_option="on_demand",
    )
    assert prices.exists()
    for price in prices:
        assert price.instance_type.accelerator.slug == "a100-sxm4-80gb"
        assert price.instance_type.provider.slug == "aws"
        assert price.region.code == "us-east-1"
        assert price.purchase_option == "on_demand"


def test_stale_flag_follows_the_as_of_date(catalog: date) -> None:
    prices = selectors.price_list(today=catalog, include_history=True)
    skypilot = prices.filter(source__slug="skypilot-aws-v7").first()
    cyclenerd = prices.filter(source__slug="cyclenerd-gcp-2026-07").first()
    assert skypilot is not None and skypilot.is_stale_value
    assert cyclenerd is not None and not cyclenerd.is_stale_value


def test_stale_is_judged_against_the_providers_newest_price(catalog: date,
                                                            settings: object) -> None:
    # AWS's newest prices are of 2026-01-21 (the vantage snapshot): 180 days before it, the
    # mid-2025 SkyPilot file is stale (its P4/P5 prices predate AWS's June 2025 cut), the
    # November 2025 reservations are not, whatever today's date.
    assert selectors.stale_before()["aws"] == "2025-07-25"
    assert selectors.is_stale(date(2025, 6, 1), "aws")
    assert not selectors.is_stale(date(2025, 11, 30), "aws")
    # A provider's only snapshot is its newest: old, but not stale.
    assert not selectors.is_stale(date(2026, 5, 20), "lambda")
    settings.PRICE_STALE_DAYS = 10  # type: ignore[attr-defined]
    assert selectors.is_stale(date(2025, 11, 30), "aws")
    assert not selectors.is_stale(date(2026, 1, 11), "aws")


def test_stale_marks_the_exceptions_not_most_prices(catalog: date) -> None:
    """Judged by age on today's date, 7 of the 11 shipped sources and most current prices
    were stale; judged against each provider's newest price only the SkyPilot AWS file is."""
    sources = selectors.source_rows(today=catalog)
    assert [s.source.slug for s in sources if s.is_stale] == ["skypilot-aws-v7"]
    current = selectors.price_queryset(today=catalog).filter(is_current=True)
    n_stale = current.filter(is_stale_value=True).count()
    assert 0 < n_stale < current.count() / 10
    history = selectors.price_queryset(today=catalog).filter(
        source__slug="skypilot-aws-v7", instance_type__name="p5.48xlarge",
        purchase_option="on_demand")
    assert history.exists() and all(p.is_stale_value for p in history)


def test_price_rows_compute_discount_against_on_demand_of_same_instance_and_region(
    catalog: date,
) -> None:
    spot = selectors.price_list(today=catalog, purchase_option="spot", provider="aws").first()
    assert spot is not None
    on_demand = Price.objects.get(
        instance_type=spot.instance_type, region=spot.region, purchase_option="on_demand",
        is_current=True,
    )
    [row] = selectors.price_rows([spot])
    assert row.on_demand_usd_per_hour == pytest.approx(float(on_demand.usd_per_hour))
    expected = 100 * (1 - float(spot.usd_per_hour) / float(on_demand.usd_per_hour))
    assert row.discount_pct == pytest.approx(expected)


def test_on_demand_rows_have_no_discount(catalog: date) -> None:
    price = selectors.price_list(today=catalog, purchase_option="on_demand").first()
    assert price is not None
    [row] = selectors.price_rows([price])
    assert row.discount_pct is None


def test_source_rows_flag_stale_snapshots(catalog: date) -> None:
    rows = {r.source.slug: r for r in selectors.source_rows(today=catalog)}
    assert rows["skypilot-aws-v7"].is_stale
    assert rows["skypilot-aws-v7"].age_days == (catalog - date(2025, 6, 1)).days
    assert not rows["cyclenerd-gcp-2026-07"].is_stale
    assert rows["skypilot-aws-v7"].price_count > 0


def test_catalog_rows_filter_by_vendor_memory_and_precision(catalog: date) -> None:
    amd = selectors.catalog_rows(today=catalog, vendor="AMD")
    assert amd and {r.gpu.vendor for r in amd} == {"AMD"}
    big = selectors.catalog_rows(today=catalog, min_memory_gb=100)
    assert big and all(r.gpu.memory_gb >= 100 for r in big)
    fp8 = selectors.catalog_rows(today=catalog, precision="fp8")
    assert fp8 and all(r.gpu.fp8_tflops_dense is not None for r in fp8)
    assert all(r.precision == "fp8" for r in fp8)


def test_peak_defaults_to_bf16_and_falls_back_to_fp16(catalog: date) -> None:
    rows = {r.gpu.slug: r for r in selectors.catalog_rows(today=catalog)}
    assert (rows["h100-sxm5-80gb"].precision, rows["h100-sxm5-80gb"].peak_tflops) == ("bf16", 989.5)
    assert (rows["v100-sxm2-16gb"].precision, rows["v100-sxm2-16gb"].peak_tflops) == ("fp16", 125)


def test_catalog_rows_sort_descending_with_missing_values_last(catalog: date) -> None:
    rows = selectors.catalog_rows(today=catalog, sort="-usd_per_gpu_hour")
    prices = [r.usd_per_gpu_hour for r in rows]
    present = [p for p in prices if p is not None]
    assert present == sorted(present, reverse=True)
    assert prices[len(present):] == [None] * (len(prices) - len(present))


def test_tflops_per_dollar_is_peak_over_price(catalog: date) -> None:
    row = next(r for r in selectors.catalog_rows(today=catalog) if r.gpu.slug == "h100-sxm5-80gb")
    assert row.usd_per_gpu_hour is not None
    assert row.tflops_per_usd_per_gpu_hour == pytest.approx(989.5 / row.usd_per_gpu_hour)


def test_gpu_points_keep_only_gpus_with_peak_and_price(catalog: date) -> None:
    rows = selectors.catalog_rows(today=catalog)
    points = selectors.gpu_points(rows)
    names = {p.name for p in points}
    assert "H100 SXM5-80GB" in names
    assert "Gaudi2 OAM-96GB" not in names  # no current price loaded
    assert "A10G PCIe-24GB" not in names  # no 16-bit (tensor-core) peak published


def test_catalog_rows_for_keeps_the_requested_order(catalog: date) -> None:
    rows = selectors.catalog_rows_for(today=catalog, slugs=["l4-pcie-24gb", "a10-pcie-24gb"])
    assert [r.gpu.slug for r in rows] == ["l4-pcie-24gb", "a10-pcie-24gb"]


def test_instance_detail_includes_history_and_404s_unknown(catalog: date) -> None:
    detail = selectors.instance_detail(provider="aws", name="p4d.24xlarge", today=catalog)
    assert detail.instance.gpu_count == 8
    assert any(not r.price.is_current for r in detail.rows)
    with pytest.raises(Http404):
        selectors.instance_detail(provider="aws", name="nope.xlarge", today=catalog)


def test_current_region_prices_drop_history(catalog: date) -> None:
    detail = selectors.instance_detail(provider="aws", name="p4d.24xlarge", today=catalog)
    points = selectors.current_region_prices(detail.rows)
    current = [r.price for r in detail.rows if r.price.is_current]
    # One bar per region and series (purchase option, payment option, offering class): two
    # prices on one bar would stack into a price no one sells.
    assert len({(p.region, p.purchase_option) for p in points}) == len(points)
    assert len(points) <= len(current)
    labels = {str(label) for label in PurchaseOption.labels}
    assert {p.purchase_option.split(",")[0] for p in points} <= labels
    assert "Reserved 3 years, all upfront, standard" in {p.purchase_option for p in points}
    on_demand = {p.region: p.usd_per_hour for p in points if p.purchase_option == "On-demand"}
    assert all(p.usd_per_hour < on_demand[p.region] for p in points
               if p.purchase_option.startswith("Reserved") and p.region in on_demand)


def test_interconnect_label() -> None:
    assert selectors.interconnect_label(Accelerator(interconnect="4")) == "NVLink 4"
    assert selectors.interconnect_label(Accelerator(interconnect="")) == ""
    fabric = Accelerator(interconnect="Infinity Fabric (7 links)")
    assert selectors.interconnect_label(fabric) == "Infinity Fabric (7 links)"


def test_catalog_prefers_cloud_instances_and_lists_marketplace_machines_apart(
    catalog: date,
) -> None:
    rows = selectors.catalog_rows(today=catalog)
    offered = [r for r in rows if r.cheapest]
    clouds = {"aws", "gcp", "azure", "lambda"}
    # A cloud instance wherever a cloud sells the GPU; a marketplace rig only where none does.
    for row in offered:
        provider = row.cheapest.instance_type.provider.slug
        assert (provider in clouds) != row.is_marketplace
    assert sum(r.is_marketplace for r in offered) < len(offered) / 4
    beside = [r for r in offered if r.marketplace]
    assert beside and all(r.marketplace.instance_type.provider.slug == "vast" for r in beside)


def test_the_catalog_version_changes_with_every_write_however_it_is_made(catalog: date) -> None:
    # Cached catalog pages are keyed by this version: a change the triggers miss would leave a
    # stale price on screen. (A flushed test database has no stamp row: put it back.)
    CatalogStamp.objects.get_or_create(pk=1, defaults={"token": "test"})
    seen = {selectors.catalog_version()}

    def assert_changed() -> None:
        version = selectors.catalog_version()
        assert version not in seen
        seen.add(version)

    price = Price.objects.filter(is_current=True).first()
    assert price is not None
    price.save()
    assert_changed()
    Price.objects.filter(pk=price.pk).update(usd_per_hour=price.usd_per_hour * 2)
    assert_changed()
    Price.objects.bulk_update([price], ["is_current"])
    assert_changed()
    price.pk = None
    price.region = Region.objects.exclude(pk=price.region_id).first()
    (clone,) = Price.objects.bulk_create([price])
    assert_changed()
    Price.objects.filter(pk=clone.pk).delete()
    assert_changed()
    Accelerator.objects.filter(slug="h100-sxm5-80gb").update(memory_gb=81)
    assert_changed()
    with connection.cursor() as cursor:
        cursor.execute("UPDATE pricing_instancetype SET gpu_count = gpu_count "
                       "WHERE id = %s", [price.instance_type_id])
    assert_changed()
    assert selectors.catalog_version() == selectors.catalog_version()  # reading keeps it


def test_without_its_stamp_the_catalog_version_still_follows_prices(catalog: date) -> None:
    CatalogStamp.objects.all().delete()
    before = selectors.catalog_version()
    price = Price.objects.filter(is_current=True).first()
    assert price is not None
    Price.objects.filter(pk=price.pk).update(usd_per_hour=price.usd_per_hour + 1)
    assert selectors.catalog_version() != before


def test_discounts_compare_prices_of_nearby_dates_and_flag_spot_above_on_demand(
    catalog: date,
) -> None:
    from datetime import timedelta
    from decimal import Decimal

    spot = selectors.price_list(today=catalog, purchase_option="spot", provider="aws").first()
    assert spot is not None
    on_demand = Price.objects.filter(instance_type=spot.instance_type, region=spot.region,
                                     purchase_option="on_demand").order_by("-as_of").first()
    assert on_demand is not None
    base = float(on_demand.usd_per_hour)
    # A June snapshot against a January one: no discount, and the note says which dates.
    spot.as_of = on_demand.as_of + timedelta(days=200)
    spot.usd_per_hour = Decimal(str(base * 0.4))
    [far] = selectors.price_rows([spot])
    assert far.discount_pct is None and str(on_demand.as_of) in far.note
    assert "200 days" in far.note
    # Of a nearby date: the discount, against the on-demand price it names.
    spot.as_of = on_demand.as_of + timedelta(days=10)
    [near] = selectors.price_rows([spot])
    assert near.discount_pct == pytest.approx(60.0, abs=0.01)
    assert near.on_demand_as_of == on_demand.as_of and str(on_demand.as_of) in near.note
    # Spot dearer than on-demand: flagged, left out of discounts.
    spot.usd_per_hour = Decimal(str(base * 1.79))
    [above] = selectors.price_rows([spot])
    assert above.is_above_on_demand and above.discount_pct is None
    assert "79% dearer" in above.note
    # Equal but for the providers' rounding (AWS g5.48xlarge spot $20.0281 against $20.02809
    # on demand): the importers' tolerance, not flagged "above on-demand".
    spot.usd_per_hour = Decimal(str(base * 1.00005))
    [same] = selectors.price_rows([spot])
    assert not same.is_above_on_demand and same.discount_pct == 0.0
