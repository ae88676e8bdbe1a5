from datetime import date
from pathlib import Path

import pytest

from pricing.importers import PriceFileErrors
from pricing.importers.vantage import parse
from tests.pricing.importers.helpers import assert_error, line_number, one_row, write_csv_variant

AS_OF = date(2026, 1, 21)


@pytest.fixture
def vantage_file(fixtures_dir: Path) -> Path:
    return fixtures_dir / "pricing" / "vantage_aws_us-east-1.csv"


def test_on_demand_and_reserved_rows(vantage_file: Path) -> None:
    frame = parse(vantage_file, as_of=AS_OF).frame
    p5 = one_row(frame, "p5.48xlarge", "us-east-1", "on_demand")
    assert (p5["usd_per_hour"], p5["accelerator"], p5["gpu_count"]) == (55.04, "h100-sxm5-80gb", 8)
    assert p5["memory_gib"] == 2048.0
    reserved = one_row(frame, "p4d.24xlarge", "us-east-1", "reserved_1y")
    assert (reserved["usd_per_hour"], reserved["accelerator"]) == (13.921094, "a100-sxm4-40gb")
    p4de = one_row(frame, "p4de.24xlarge", "us-east-1", "on_demand")
    assert (p4de["usd_per_hour"], p4de["accelerator"]) == (27.44705, "a100-sxm4-80gb")


def test_empty_reserved_cell_gives_no_row_and_asics_are_skipped(vantage_file: Path) -> None:
    parsed = parse(vantage_file, as_of=AS_OF)
    p5 = parsed.frame[parsed.frame["instance_type"] == "p5.48xlarge"]
    assert list(p5["purchase_option"]) == ["on_demand"]
    assert parsed.skipped == {"accelerator not in catalog: AWS Trainium": 1,
                              "no reserved 1y price": 2}


def test_unknown_and_missing_columns(vantage_file: Path, tmp_path: Path) -> None:
    broken = write_csv_variant(vantage_file, tmp_path / "v.csv", "gpu_count,", "gpus,")
    with pytest.raises(PriceFileErrors) as exc_info:
        parse(broken, as_of=AS_OF)
    assert_error(exc_info, broken, 1, "gpus")
    assert_error(exc_info, broken, 1, "gpu_count")


@pytest.mark.parametrize("bad", ["n/a", "-55.04"])
def test_bad_price(vantage_file: Path, tmp_path: Path, bad: str) -> None:
    line = line_number(vantage_file, ",55.04,")
    broken = write_csv_variant(vantage_file, tmp_path / "v.csv", ",55.04,", f",{bad},")
    with pytest.raises(PriceFileErrors) as exc_info:
        parse(broken, as_of=AS_OF)
    assert_error(exc_info, broken, line, "on_demand_usd_hr")


def test_malformed_csv(vantage_file: Path, tmp_path: Path) -> None:
    broken = tmp_path / "v.csv"
    extra_cells = "p5.4xlarge,H100,1,80 GB,16,256 GB,,,,us-east-1,1,2,3,4\n"
    broken.write_text(vantage_file.read_text() + extra_cells)
    with pytest.raises(PriceFileErrors) as exc_info:
        parse(broken, as_of=AS_OF)
    assert_error(exc_info, broken, 10, "(file)")


def test_without_as_of(vantage_file: Path) -> None:
    with pytest.raises(PriceFileErrors) as exc_info:
        parse(vantage_file)
    assert_error(exc_info, vantage_file, None, "as_of")
