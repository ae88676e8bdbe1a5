from datetime import date
from decimal import Decimal
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.db.models import Count

from pricing.models import InstanceType, Price, PriceSource
from pricing.services import prices_import_file

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("loaded_catalog")]


def _prices(instance: str, region: str, option: str) -> list[Price]:
    return list(
        Price.objects.filter(
            instance_type__name=instance, region__code=region, purchase_option=option
        ).select_related("source")
    )


def _current(instance: str, region: str, option: str) -> Price:
    return Price.objects.select_related("source").get(
        instance_type__name=instance, region__code=region, purchase_option=option,
        is_current=True,
    )


def test_second_load_catalog_changes_nothing() -> None:
    counts = (Price.objects.count(), InstanceType.objects.count(), PriceSource.objects.count())
    current = Price.objects.filter(is_current=True).count()
    out = StringIO()
    call_command("load_catalog", stdout=out)
    for line in out.getvalue().splitlines():
        assert " 0 created, 0 updated," in line, line
    assert (Price.objects.count(), InstanceType.objects.count(), PriceSource.objects.count()) == (
        counts
    )
    assert Price.objects.filter(is_current=True).count() == current


def test_newest_aws_p5_price_is_current_and_older_one_is_history() -> None:
    current = _current("p5.48xlarge", "us-east-1", "on_demand")
    assert (current.usd_per_hour, current.as_of) == (Decimal("55.040000"), date(2026, 1, 21))
    assert current.source.slug == "vantage-aws-2026-01"
    old = next(p for p in _prices("p5.48xlarge", "us-east-1", "on_demand") if not p.is_current)
    assert (old.usd_per_hour, old.as_of) == (Decimal("98.320000"), date(2025, 6, 1))
    assert old.source.slug == "skypilot-aws-v7"


def test_gcp_a3_on_demand_comes_from_cyclenerd() -> None:
    current = _current("a3-highgpu-8g", "us-central1", "on_demand")
    assert current.source.slug == "cyclenerd-gcp-2026-07"
    assert float(current.usd_per_hour) == pytest.approx(88.49, abs=0.01)
    assert all(p.source.slug.startswith("cyclenerd") for p in
               _prices("a3-highgpu-8g", "us-central1", "on_demand"))


def test_derived_prices_are_marked_with_a_basis() -> None:
    derived = Price.objects.filter(is_derived=True)
    assert derived.exists()
    assert not derived.filter(derivation_basis="").exists()
    assert not Price.objects.filter(is_derived=False).exclude(derivation_basis="").exists()
    assert set(derived.values_list("purchase_option", flat=True)) <= {
        "reserved_1y", "reserved_3y", "committed_1y", "committed_3y",
    }


def test_purchase_options_per_hyperscaler() -> None:
    pairs = set(
        Price.objects.filter(is_current=True)
        .values_list("instance_type__provider__slug", "purchase_option")
        .annotate(n=Count("id"))
        .values_list("instance_type__provider__slug", "purchase_option")
    )
    for provider in ("aws", "gcp", "azure"):
        assert {(provider, "on_demand"), (provider, "spot")} <= pairs
    assert ("aws", "reserved_1y") in pairs
    assert {("gcp", "committed_1y"), ("gcp", "committed_3y")} <= pairs


def test_older_import_does_not_displace_the_current_price(fixtures_dir: Path) -> None:
    sample = fixtures_dir / "pricing" / "samples" / "aws_price_list_ec2_p4d_us-east-1_opencost.json"
    summary = prices_import_file(
        fmt="aws-price-list", path=sample, as_of=None, provider=None, dry_run=False
    )
    assert (summary.created, summary.updated) == (1, 0)
    imported = Price.objects.get(source__slug__startswith="import-aws-price-list")
    assert (imported.usd_per_hour, imported.is_current) == (Decimal("32.772600"), False)
    assert _current("p4d.24xlarge", "us-east-1", "on_demand").as_of == date(2026, 1, 21)


def test_newer_import_becomes_current(fixtures_dir: Path) -> None:
    sample = fixtures_dir / "pricing" / "azure_retail_gpu_sample.json"
    prices_import_file(
        fmt="azure-retail", path=sample, as_of=date(2026, 6, 1), provider=None, dry_run=False
    )
    current = _current("Standard_ND96asr_v4", "eastus", "reserved_1y")
    assert current.usd_per_hour == Decimal(str(round(150094 / 8760, 6)))
    old = _prices("Standard_ND96asr_v4", "eastus", "on_demand")
    assert sorted(p.is_current for p in old) == [False, True]


def test_vast_a100_40_and_80_gb_listings_are_different_machines() -> None:
    names = set(InstanceType.objects.filter(provider__slug="vast", name__contains="A100_SXM4")
                .values_list("name", "accelerator__slug"))
    assert ("1x-A100_SXM4_40GB-32-65536", "a100-sxm4-40gb") in names
    assert ("1x-A100_SXM4_80GB-32-65536", "a100-sxm4-80gb") in names
    assert not Price.objects.filter(instance_type__provider__slug="vast",
                                    region__code__startswith=",").exists()


def test_aws_three_year_reservations_have_every_payment_option() -> None:
    rows = Price.objects.filter(instance_type__name="p5.48xlarge", region__code="us-east-1",
                                purchase_option="reserved_3y", is_current=True)
    assert set(rows.values_list("payment_option", "offering_class")) == {
        (p, c) for p in ("no_upfront", "partial_upfront", "all_upfront")
        for c in ("standard", "convertible")}
    assert rows.get(payment_option="all_upfront", offering_class="standard").upfront_usd == (
        Decimal("543866.00"))


def test_azure_spot_comes_from_the_newer_retail_prices_snapshot() -> None:
    spot = _current("Standard_NC24ads_A100_v4", "westeurope", "spot")
    assert (spot.usd_per_hour, spot.as_of) == (Decimal("1.097295"), date(2026, 8, 22))
    assert spot.source.slug == "azure-pricing-radar-spot-2026-08"
