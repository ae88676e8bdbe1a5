from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from pricing.management.commands.import_prices import Command as ImportPrices
from pricing.models import Price

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("loaded_catalog")]

# (format, fixture under tests/fixtures/pricing, extra options)
FILES = [
    ("skypilot", "skypilot_aws_us-east-1.csv", ["--as-of", "2026-08-01"]),
    ("skypilot", "anycloud_gcp_us-central1-a.csv", ["--as-of", "2026-08-01", "--provider", "gcp"]),
    ("skypilot", "anycloud_azure_eastus.csv", ["--as-of", "2026-08-01"]),
    ("skypilot", "anycloud_lambda_first40.csv", ["--as-of", "2026-08-01"]),
    ("vantage", "vantage_aws_us-east-1.csv", ["--as-of", "2026-08-01"]),
    ("cyclenerd", "cyclenerd_gcp_us-central1.csv", ["--as-of", "2026-08-01"]),
    ("aws-price-list", "samples/aws_price_list_ec2_p4d_us-east-1_opencost.json", []),
    ("aws-price-list", "aws_price_list_reserved_sample.json", []),
    ("gcp-billing-catalog", "samples/gcp_cloud_billing_catalog_skus_opencost.json", []),
    ("azure-retail", "azure_retail_gpu_sample.json", []),
]


def _run(*args: str) -> str:
    out = StringIO()
    call_command("import_prices", *args, stdout=out)
    return out.getvalue()


@pytest.mark.parametrize(("fmt", "name", "options"), FILES)
def test_import_creates_then_changes_nothing(
    fixtures_dir: Path, fmt: str, name: str, options: list[str]
) -> None:
    path = str(fixtures_dir / "pricing" / name)
    before = Price.objects.count()
    first = _run("--format", fmt, path, *options)
    created = Price.objects.count() - before
    assert created > 0
    assert f"{created} prices were created, 0 updated, 0 unchanged" in first
    second = _run("--format", fmt, path, *options)
    assert f"0 prices were created, 0 updated, {created} unchanged" in second
    assert Price.objects.count() == before + created


def test_dry_run_counts_but_writes_nothing(fixtures_dir: Path) -> None:
    path = str(fixtures_dir / "pricing" / "azure_retail_gpu_sample.json")
    before = Price.objects.count()
    out = _run("--format", "azure-retail", path, "--dry-run")
    assert "24 prices would be created, 0 updated, 0 unchanged" in out
    assert "skipped 4 row(s): Windows" in out
    assert Price.objects.count() == before


def test_skipped_rows_are_listed(fixtures_dir: Path) -> None:
    samples = fixtures_dir / "pricing" / "samples"
    path = str(samples / "aws_price_list_ec2_p4d_us-east-1_opencost.json")
    out = _run("--format", "aws-price-list", path)
    assert "skipped 1 row(s): marketoption is CapacityBlock" in out


@pytest.mark.parametrize(
    ("fmt", "name", "old", "new", "where"),
    [
        ("vantage", "vantage_aws_us-east-1.csv", ",55.04,", ",-55.04,",
         "line 8, field 'on_demand_usd_hr'"),
        ("skypilot", "skypilot_aws_us-east-1.csv", "SpotPrice,", "SpotPrice,Extra,",
         "line 1, field 'Extra'"),
        ("azure-retail", "azure_retail_gpu_sample.json", '"retailPrice": 27.197',
         '"retailPrice": "x"', "field 'retailPrice'"),
        ("aws-price-list", "aws_price_list_reserved_sample.json", '"offerCode": "AmazonEC2",', "",
         "line 1, field 'offerCode'"),
        ("gcp-billing-catalog", "samples/gcp_cloud_billing_catalog_skus_opencost.json",
         '"units": "2"', '"units": "-2"', "line 3, field 'unitPrice.units'"),
    ],
)
def test_broken_file_fails_and_writes_nothing(
    fixtures_dir: Path, tmp_path: Path, fmt: str, name: str, old: str, new: str, where: str
) -> None:
    source = fixtures_dir / "pricing" / name
    broken = tmp_path / source.name
    broken.write_text(source.read_text().replace(old, new, 1))
    before = Price.objects.count()
    with pytest.raises(CommandError) as exc_info:
        _run("--format", fmt, str(broken), "--as-of", "2026-08-01")
    assert broken.name in str(exc_info.value)
    assert where in str(exc_info.value)
    assert "nothing imported" in str(exc_info.value)
    assert Price.objects.count() == before


def test_skypilot_without_as_of_is_a_clear_error(fixtures_dir: Path) -> None:
    path = str(fixtures_dir / "pricing" / "skypilot_aws_us-east-1.csv")
    with pytest.raises(CommandError, match="pass --as-of YYYY-MM-DD"):
        _run("--format", "skypilot", path)


def test_bad_as_of_and_missing_file(fixtures_dir: Path, tmp_path: Path) -> None:
    path = str(fixtures_dir / "pricing" / "skypilot_aws_us-east-1.csv")
    with pytest.raises(CommandError, match="not a date"):
        _run("--format", "skypilot", path, "--as-of", "yesterday")
    with pytest.raises(CommandError, match="no such file"):
        _run("--format", "skypilot", str(tmp_path / "absent.csv"), "--as-of", "2026-08-01")


def test_a_bad_as_of_on_the_command_line_is_a_usage_error_not_a_traceback(
        fixtures_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = str(fixtures_dir / "pricing" / "skypilot_aws_us-east-1.csv")
    with pytest.raises(SystemExit) as exited:
        ImportPrices().run_from_argv(["manage.py", "import_prices", "--format", "skypilot",
                                      path, "--as-of", "2026-13-45", "--dry-run"])
    assert exited.value.code == 2
    assert "argument --as-of: '2026-13-45' is not a date (YYYY-MM-DD)" in capsys.readouterr().err
