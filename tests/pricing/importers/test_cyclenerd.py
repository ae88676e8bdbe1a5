from datetime import date
from pathlib import Path

import pytest

from pricing.importers import PriceFileErrors
from pricing.importers.cyclenerd import parse
from tests.pricing.importers.helpers import assert_error, line_number, one_row, write_csv_variant

AS_OF = date(2026, 7, 30)


@pytest.fixture
def cyclenerd_file(fixtures_dir: Path) -> Path:
    return fixtures_dir / "pricing" / "cyclenerd_gcp_us-central1.csv"


def test_machine_type_prices_per_option(cyclenerd_file: Path) -> None:
    frame = parse(cyclenerd_file, as_of=AS_OF).frame
    a3 = one_row(frame, "a3-highgpu-8g", "us-central1", "on_demand")
    assert a3["usd_per_hour"] == pytest.approx(88.49, abs=1e-6)
    assert (a3["accelerator"], a3["gpu_count"], a3["vcpus"]) == ("h100-sxm5-80gb", 8, 208.0)
    a2 = one_row(frame, "a2-highgpu-1g", "us-central1", "on_demand")
    assert a2["usd_per_hour"] == 3.673385
    committed = one_row(frame, "a2-highgpu-1g", "us-central1", "committed_3y")
    assert committed["usd_per_hour"] == round(938.56707798 / 730, 6)
    spot = one_row(frame, "g2-standard-4", "us-central1", "spot")
    assert (spot["usd_per_hour"], spot["accelerator"]) == (0.397336, "l4-pcie-24gb")


def test_ultragpu_without_commitment_prices_and_rtx6000_skipped(cyclenerd_file: Path) -> None:
    parsed = parse(cyclenerd_file, as_of=AS_OF)
    ultra = parsed.frame[parsed.frame["instance_type"] == "a2-ultragpu-1g"]
    assert sorted(ultra["purchase_option"]) == ["on_demand", "spot"]
    assert set(ultra["accelerator"]) == {"a100-sxm4-80gb"}
    assert parsed.skipped == {"accelerator not in catalog: rtx6000": 7}


def test_unknown_and_missing_columns(cyclenerd_file: Path, tmp_path: Path) -> None:
    broken = write_csv_variant(cyclenerd_file, tmp_path / "c.csv", ",hour,", ",hourly,")
    with pytest.raises(PriceFileErrors) as exc_info:
        parse(broken, as_of=AS_OF)
    assert_error(exc_info, broken, 1, "hourly")
    assert_error(exc_info, broken, 1, "hour")


@pytest.mark.parametrize("bad", ["3,67", "-3.673385"])
def test_bad_price(cyclenerd_file: Path, tmp_path: Path, bad: str) -> None:
    line = line_number(cyclenerd_file, ",3.673385,")
    broken = write_csv_variant(cyclenerd_file, tmp_path / "c.csv", ",3.673385,", f',"{bad}",')
    with pytest.raises(PriceFileErrors) as exc_info:
        parse(broken, as_of=AS_OF)
    assert_error(exc_info, broken, line, "hour")


def test_malformed_csv(cyclenerd_file: Path, tmp_path: Path) -> None:
    lines = cyclenerd_file.read_text().splitlines(keepends=True)
    lines[4] = lines[4].rstrip("\n") + ",1,2\n"
    broken = tmp_path / "c.csv"
    broken.write_text("".join(lines))
    with pytest.raises(PriceFileErrors) as exc_info:
        parse(broken, as_of=AS_OF)
    assert_error(exc_info, broken, 5, "(file)")


def test_fractional_gpu_count_is_skipped_not_truncated(
    cyclenerd_file: Path, tmp_path: Path
) -> None:
    broken = write_csv_variant(
        cyclenerd_file, tmp_path / "c.csv", "g2-standard-4,l4,1,", "g2-standard-4,l4,0.5,"
    )
    parsed = parse(broken, as_of=AS_OF)
    assert "g2-standard-4" not in set(parsed.frame["instance_type"])
    assert parsed.skipped["fractional GPU count (l4)"] == 1
