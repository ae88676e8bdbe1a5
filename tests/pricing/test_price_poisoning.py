"""Prices that cannot poison: the importer refuses, naming file, line and field, a price below
the floor (1e-300 passes "> 0" and would be stored as $0), an as-of date outside [2015-01-01,
today + 1 day], conflicting duplicates, spot above on-demand, an effective rate below its fee
and a bad yes/no; deep JSON gives a message, not a RecursionError. And a zero price planted
straight into the database keeps /gpus/, the price pages and plans working."""

import json
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command

from planner.plans.models import PlanScenario
from pricing.models import Price
from tests.clients import signed_in

pytestmark = pytest.mark.django_db
HEADER = ("provider,region,instance_type,purchase_option,payment_option,usd_per_hour,"
          "effective_usd_per_hour,as_of,is_estimated\n")


def _import(path: Path, fmt: str, *extra: str) -> str:
    with pytest.raises(CommandError) as refused:
        call_command("import_prices", "--format", fmt, str(path), *extra)
    return str(refused.value)


def _table(tmp_path: Path, *rows: str) -> Path:
    path = tmp_path / "negotiated.csv"
    path.write_text(HEADER + "".join(f"{row}\n" for row in rows))
    return path


def test_a_1e_300_skypilot_price_is_refused_naming_file_line_and_field(
    loaded_catalog: None, fixtures_dir: Path, tmp_path: Path
) -> None:
    lines = (fixtures_dir / "pricing" / "skypilot_aws_us-east-1.csv").read_text().splitlines()
    poisoned = [line.replace(",32.7726,", ",1e-300,") if line.startswith("p4d.24xlarge,")
                else line for line in lines]
    path = tmp_path / "skypilot_poisoned.csv"
    path.write_text("\n".join(poisoned) + "\n")
    before = Price.objects.count()
    message = _import(path, "skypilot", "--as-of", "2025-06-01", "--provider", "aws")
    assert "skypilot_poisoned.csv, line 13, field 'usd_per_hour'" in message
    assert "below the floor of 0.0001 USD per GPU-hour" in message
    assert Price.objects.count() == before


@pytest.mark.parametrize(("row", "says"), [
    ("aws,us-east-1,p4d.24xlarge,on_demand,,32.77,,9999-12-31,no",
     "line 2, field 'as_of': 9999-12-31 is outside 2015-01-01 to"),
    ("aws,us-east-1,p4d.24xlarge,on_demand,,32.77,,0001-01-01,no",
     "line 2, field 'as_of': 0001-01-01 is outside"),
    ("aws,us-east-1,p4d.24xlarge,on_demand,,32.77,,2025-06-01,maybe",
     "line 2, field 'is_estimated': 'maybe' is not yes or no"),
    ("aws,us-east-1,p4d.24xlarge,reserved_1y,no_upfront,20.0,10.0,2025-06-01,no",
     "line 2, field 'usd_per_hour': effective rate 10 USD/h is below its hourly fee 20"),
    ("aws,us-east-1,p4d.24xlarge,on_demand,,50000,,2025-06-01,no",
     "6250 USD per GPU-hour is above the ceiling of 1,000 USD per GPU-hour"),
])
def test_a_bad_row_is_refused_with_its_line_and_field(loaded_catalog: None, tmp_path: Path,
                                                      row: str, says: str) -> None:
    before = Price.objects.count()
    message = _import(_table(tmp_path, row), "price-table")
    assert "negotiated.csv" in message and says in message
    assert Price.objects.count() == before


def test_conflicting_duplicates_are_refused_and_identical_ones_kept_once(
    loaded_catalog: None, tmp_path: Path
) -> None:
    conflicting = _table(tmp_path,
                         "aws,us-east-1,p4d.24xlarge,on_demand,,32.77,,2025-06-01,no",
                         "aws,us-east-1,p4d.24xlarge,on_demand,,1.00,,2025-06-01,no")
    message = _import(conflicting, "price-table")
    assert "line 3, field 'usd_per_hour': conflicting duplicate: lines 2, 3" in message
    assert "32.77, 1" in message
    same = _table(tmp_path, "aws,us-east-1,p4d.24xlarge,on_demand,,32.77,,2025-06-01,no",
                  "aws,us-east-1,p4d.24xlarge,on_demand,,32.77,,2025-06-01,no")
    call_command("import_prices", "--format", "price-table", str(same))
    kept = Price.objects.filter(source__slug__contains="negotiated", as_of="2025-06-01")
    assert kept.count() == 1


def test_spot_above_on_demand_is_refused(loaded_catalog: None, tmp_path: Path) -> None:
    path = _table(tmp_path, "aws,us-east-1,p4d.24xlarge,on_demand,,32.77,,2025-06-01,no",
                  "aws,us-east-1,p4d.24xlarge,spot,,16385,,2025-06-01,no")
    message = _import(path, "price-table")
    assert "line 3, field 'usd_per_hour': spot price 16385 USD/h is above the on-demand " \
           "price 32.77 USD/h" in message


def test_deeply_nested_json_is_a_message_not_a_recursion_error(db: None, tmp_path: Path
                                                               ) -> None:
    path = tmp_path / "azure.json"
    path.write_text('{"Items": ' + "[" * 100_000 + "]" * 100_000 + "}")
    message = _import(path, "azure-retail", "--as-of", "2025-06-01")
    assert "azure.json" in message and "nested too deeply" in message


def _plant_zero_price() -> Price:
    """The cheapest current on-demand A100 price in the database set to 0 (no importer)."""
    price = (Price.objects.filter(is_current=True, purchase_option="on_demand",
                                  instance_type__name="p4d.24xlarge",
                                  instance_type__provider__slug="aws")
             .order_by("usd_per_hour").first())
    assert price is not None
    Price.objects.filter(pk=price.pk).update(usd_per_hour=0)
    return price


def test_pages_and_plans_keep_working_with_a_zero_price_planted_in_the_database(
    loaded_catalog: None, eager_celery: None, django_capture_on_commit_callbacks: Any
) -> None:
    planted = _plant_zero_price()
    ana = User.objects.create_user("ana", password="pw-ana-123")
    client = signed_in(ana)
    for page in ["/gpus/", "/gpus/?sort=usd_per_gpu_hour", "/gpus/?sort=tflops_per_usd",
                 "/prices/", "/prices/?purchase_option=on_demand&gpu=a100-sxm4-40gb",
                 "/instances/aws/p4d.24xlarge/", "/compare/?gpu=a100-sxm4-40gb&gpu=h100-sxm5-80gb",
                 "/api/gpus", "/api/prices?instance_type=p4d.24xlarge"]:
        assert client.get(page).status_code in (200, 404), page
    body = {"workload": "llama2-7b", "tokens": 1e11, "providers": ["aws"],
            "regions": [planted.region.code], "purchase_options": ["on_demand"]}
    with django_capture_on_commit_callbacks(execute=True):
        created = client.post("/api/plans", json.dumps(body), content_type="application/json")
    assert created.status_code == 201, created.content
    plan = PlanScenario.objects.get(pk=created.json()["id"])
    assert plan.status == "done", plan.error
    skipped = plan.result["skipped_prices"]
    assert {(s["instance_type"], s["purchase_option"]) for s in skipped} == {
        ("p4d.24xlarge", "on_demand")}
    assert all(o["usd_per_hour"] > 0 and o["total_usd"] > 0 for o in plan.result["options"])
    page = client.get(f"/plans/{plan.pk}").content.decode()
    assert "Skipped a bad price: aws p4d.24xlarge" in page


def test_a_price_40000x_below_the_catalogs_for_the_same_instance_is_refused_naming_the_row(
    loaded_catalog: None, fixtures_dir: Path, tmp_path: Path
) -> None:
    # $0.0008/h passes the per-GPU floor (0.0001), and plans recommended p4d at $10 in total
    lines = (fixtures_dir / "pricing" / "skypilot_aws_us-east-1.csv").read_text().splitlines()
    poisoned = [line.replace(",32.7726,", ",0.0008,") if line.startswith("p4d.24xlarge,")
                else line for line in lines]
    path = tmp_path / "skypilot_cheap.csv"
    path.write_text("\n".join(poisoned) + "\n")
    before = Price.objects.count()
    message = _import(path, "skypilot", "--as-of", "2025-06-01", "--provider", "aws")
    assert ("skypilot_cheap.csv, line 13, field 'usd_per_hour': 0.0008 USD/h (0.0001 USD per "
            "GPU-hour) for p4d.24xlarge in us-east-1 is 27,447x below the lowest current "
            "on-demand price of aws p4d.24xlarge (2.74471 USD per GPU-hour, aws p4d.24xlarge in "
            "us-east-2 from ec2instances.info (Vantage) GPU extract via tsaol/aws-gpu, "
            "2026-01-21)") in message
    assert "a price more than 10x outside the catalog's range is refused" in message
    assert Price.objects.count() == before
    assert not Price.objects.filter(usd_per_hour__lt=1, instance_type__name="p4d.24xlarge",
                                    purchase_option="on_demand").exists()


def test_a_spot_price_above_on_demand_in_another_file_is_refused_naming_the_row(
    loaded_catalog: None, fixtures_dir: Path, tmp_path: Path
) -> None:
    """Azure's Retail Prices API answers spot and on-demand as separate items, often fetched
    apart: a $1,000/h spot item is checked against the catalog's on-demand price."""
    sample = json.loads((fixtures_dir / "pricing" / "azure_retail_gpu_sample.json").read_text())
    spot = next(item for item in sample["Items"] if item["meterName"] == "ND96asr A100 v4 Spot")
    spot.update(retailPrice=1000.0, unitPrice=1000.0)
    path = tmp_path / "azure_spot.json"
    path.write_text(json.dumps({**sample, "Items": [spot], "Count": 1}))
    before = Price.objects.count()
    message = _import(path, "azure-retail", "--as-of", "2025-06-01")
    assert ("azure_spot.json, line 1, field 'usd_per_hour': spot price 1000 USD/h is above the "
            "catalog's current on-demand price 27.197 USD/h of Standard_ND96asr_v4 in eastus "
            "(from ") in message
    assert Price.objects.count() == before


def test_prices_near_the_catalogs_import_and_the_catalog_reloads_unchanged(
    loaded_catalog: None, fixtures_dir: Path
) -> None:
    """A spot price below the catalog's on-demand and the shipped files themselves pass."""
    call_command("import_prices", "--format", "azure-retail", "--as-of", "2025-06-01",
                 str(fixtures_dir / "pricing" / "azure_retail_gpu_sample.json"))
    before = Price.objects.count()
    call_command("load_catalog")
    assert Price.objects.count() == before
