from datetime import date
from pathlib import Path

import pytest

from pricing.importers import PriceFileErrors
from pricing.importers.skypilot import parse
from tests.pricing.importers.helpers import assert_error, line_number, one_row, write_csv_variant

AS_OF = date(2026, 5, 20)


@pytest.fixture
def aws_file(fixtures_dir: Path) -> Path:
    return fixtures_dir / "pricing" / "skypilot_aws_us-east-1.csv"


def test_spot_is_the_median_zone_with_the_range_beside_it(aws_file: Path) -> None:
    spot = one_row(parse(aws_file, as_of=AS_OF).frame, "p4d.24xlarge", "us-east-1", "spot")
    # three zones list 5.0933, 6.7915 and 9.6107 $/h: not the cheapest, the middle one
    assert spot["usd_per_hour"] == 6.7915
    assert (spot["zone_low_usd_per_hour"], spot["zone_high_usd_per_hour"]) == (5.0933, 9.6107)


def test_aws_on_demand_and_zone_spot(aws_file: Path) -> None:
    parsed = parse(aws_file, as_of=AS_OF)
    on_demand = one_row(parsed.frame, "p4d.24xlarge", "us-east-1", "on_demand")
    assert on_demand["usd_per_hour"] == 32.7726
    assert on_demand["accelerator"] == "a100-sxm4-40gb"
    assert on_demand["gpu_count"] == 8
    assert on_demand["provider"] == "aws"
    assert on_demand["as_of"] == AS_OF
    spot = one_row(parsed.frame, "p5.48xlarge", "us-east-1", "spot")
    assert one_row(parsed.frame, "p5.48xlarge", "us-east-1", "on_demand")["usd_per_hour"] == 98.32
    assert spot["accelerator"] == "h100-sxm5-80gb"
    assert spot["zone"].startswith("use1-az")


def test_aws_p4de_rows_named_a100_are_the_80gb_card(aws_file: Path) -> None:
    frame = parse(aws_file, as_of=AS_OF).frame
    p4de = frame[frame["instance_type"] == "p4de.24xlarge"]
    assert set(p4de["accelerator"]) == {"a100-sxm4-80gb"}


def test_aws_unknown_accelerators_are_counted_not_loaded(aws_file: Path) -> None:
    parsed = parse(aws_file, as_of=AS_OF)
    assert parsed.skipped == {
        "accelerator not in catalog: T4g": 4, "accelerator not in catalog: Trainium": 2,
    }
    assert "trn1.2xlarge" not in set(parsed.frame["instance_type"])


def test_gcp_vm_price_is_host_plus_gpu(fixtures_dir: Path) -> None:
    frame = parse(fixtures_dir / "pricing" / "anycloud_gcp_us-central1-a.csv", as_of=AS_OF).frame
    a2 = one_row(frame, "a2-highgpu-1g", "us-central1", "on_demand")
    assert a2["usd_per_hour"] == pytest.approx(0.73948 + 2.93391)
    assert a2["usd_per_hour"] == 3.67339
    assert a2["host_machine_type"] == "a2-highgpu-1g"
    assert a2["accelerator"] == "a100-sxm4-40gb"
    spot = one_row(frame, "a2-highgpu-1g", "us-central1", "spot")
    assert spot["usd_per_hour"] == pytest.approx(0.36975 + 1.4341)
    assert spot["zone"] == "us-central1-a"


def test_gcp_ultragpu_is_80gb_and_t4_attaches_to_n1(fixtures_dir: Path) -> None:
    frame = parse(fixtures_dir / "pricing" / "anycloud_gcp_us-central1-a.csv", as_of=AS_OF).frame
    ultra = one_row(frame, "a2-ultragpu-1g", "us-central1", "on_demand")
    assert ultra["accelerator"] == "a100-sxm4-80gb"
    assert ultra["usd_per_hour"] == pytest.approx(1.09962 + 1.8462)
    t4 = one_row(frame, "n1-highmem-8+1xT4", "us-central1", "on_demand")
    assert (t4["accelerator"], t4["gpu_count"]) == ("t4-pcie-16gb", 1)
    assert t4["usd_per_hour"] == pytest.approx(0.47321 + 0.35)
    assert not frame["instance_type"].str.contains("tpu").any()


def test_azure_sizes_map_to_pcie_and_sxm_variants(fixtures_dir: Path) -> None:
    frame = parse(fixtures_dir / "pricing" / "anycloud_azure_eastus.csv", as_of=AS_OF).frame
    nc = one_row(frame, "Standard_NC24ads_A100_v4", "eastus", "on_demand")
    assert (nc["usd_per_hour"], nc["accelerator"], nc["gpu_count"]) == (3.673, "a100-pcie-80gb", 1)
    nd = one_row(frame, "Standard_ND96asr_v4", "eastus", "spot")
    assert (nd["usd_per_hour"], nd["accelerator"], nd["gpu_count"]) == (
        5.98334, "a100-sxm4-40gb", 8
    )
    assert frame["provider"].eq("azure").all()


def test_lambda_rows(fixtures_dir: Path) -> None:
    parsed = parse(fixtures_dir / "pricing" / "anycloud_lambda_first40.csv", as_of=AS_OF)
    row = one_row(parsed.frame, "gpu_8x_v100_n", "us-east-1", "on_demand")
    assert (row["provider"], row["usd_per_hour"]) == ("lambda", 6.32)
    assert (row["accelerator"], row["gpu_count"]) == ("v100-sxm2-16gb", 8)
    assert not (parsed.frame["purchase_option"] == "spot").any()


def test_without_as_of_names_the_missing_date(aws_file: Path) -> None:
    with pytest.raises(PriceFileErrors) as exc_info:
        parse(aws_file)
    assert_error(exc_info, aws_file, None, "as_of")
    assert "--as-of" in str(exc_info.value)


def test_unknown_column(aws_file: Path, tmp_path: Path) -> None:
    broken = write_csv_variant(aws_file, tmp_path / "aws.csv", "SpotPrice,", "SpotPrice,Colour,")
    with pytest.raises(PriceFileErrors) as exc_info:
        parse(broken, as_of=AS_OF)
    assert_error(exc_info, broken, 1, "Colour")


def test_missing_column(aws_file: Path, tmp_path: Path) -> None:
    text = aws_file.read_text().replace("InstanceType,", "Instance,", 1)
    broken = tmp_path / "aws.csv"
    broken.write_text(text)
    with pytest.raises(PriceFileErrors) as exc_info:
        parse(broken, as_of=AS_OF)
    assert_error(exc_info, broken, 1, "InstanceType")


@pytest.mark.parametrize(("bad", "message"), [("abc", "not a number"), ("-32.7726", "negative")])
def test_bad_price_names_line_and_field(
    aws_file: Path, tmp_path: Path, bad: str, message: str
) -> None:
    line = line_number(aws_file, ",32.7726,")
    broken = write_csv_variant(aws_file, tmp_path / "aws.csv", ",32.7726,", f",{bad},")
    with pytest.raises(PriceFileErrors) as exc_info:
        parse(broken, as_of=AS_OF)
    assert_error(exc_info, broken, line, "Price")
    assert message in str(exc_info.value)


def test_malformed_csv_names_the_line(aws_file: Path, tmp_path: Path) -> None:
    lines = aws_file.read_text().splitlines(keepends=True)
    lines[2] = lines[2].rstrip("\n") + ",extra,cells\n"
    broken = tmp_path / "aws.csv"
    broken.write_text("".join(lines))
    with pytest.raises(PriceFileErrors) as exc_info:
        parse(broken, as_of=AS_OF)
    assert_error(exc_info, broken, 3, "(file)")
