"""The price-table format: AWS reserved instances with payment options, Azure spot."""

from datetime import date
from pathlib import Path

import pytest

from pricing.importers import PriceFileErrors
from pricing.importers.price_table import parse
from tests.pricing.importers.helpers import assert_error, write_csv_variant


@pytest.fixture
def aws_file(fixtures_dir: Path) -> Path:
    return fixtures_dir / "pricing" / "aws_commitments_vantage_us-east-1_p4d_p5.csv"


def _row(frame, instance: str, option: str, payment: str, offering: str) -> dict:
    rows = frame[(frame["instance_type"] == instance) & (frame["purchase_option"] == option)
                 & (frame["payment_option"] == payment) & (frame["offering_class"] == offering)]
    assert len(rows) == 1, rows
    return rows.iloc[0].to_dict()


def test_reserved_rows_keep_term_payment_upfront_and_effective_rate(aws_file: Path) -> None:
    frame = parse(aws_file).frame
    all_upfront = _row(frame, "p5.48xlarge", "reserved_3y", "all_upfront", "standard")
    assert all_upfront["upfront_usd"] == 543866.0
    assert all_upfront["recurring_usd_per_hour"] == 0.0
    # effective = upfront / (8,760 h x 3 years) + hourly fee
    assert all_upfront["usd_per_hour"] == pytest.approx(543866 / (8760 * 3), abs=0.01)
    no_upfront = _row(frame, "p5.48xlarge", "reserved_3y", "no_upfront", "standard")
    assert (no_upfront["upfront_usd"], no_upfront["usd_per_hour"]) == (0.0, 23.77728)
    partial = _row(frame, "p5.48xlarge", "reserved_3y", "partial_upfront", "standard")
    assert partial["usd_per_hour"] > 0 and partial["upfront_usd"] != partial["upfront_usd"]  # NaN
    assert all_upfront["as_of"] == date(2025, 11, 30)
    assert not frame["is_estimated"].any()


def test_azure_spot_rows_and_low_priority_is_not_a_vm_option(fixtures_dir: Path,
                                                             tmp_path: Path) -> None:
    source = fixtures_dir / "pricing" / "azure_spot_pricingradar_westeurope.csv"
    parsed = parse(source)
    nc24 = parsed.frame[parsed.frame["instance_type"] == "Standard_NC24ads_A100_v4"]
    assert list(nc24["usd_per_hour"]) == [1.097295] and list(nc24["purchase_option"]) == ["spot"]
    low = write_csv_variant(source, tmp_path / "low.csv", ",spot,1.097295", ",low_priority,0.955")
    assert parse(low).skipped == {
        "low priority (an Azure Batch / ML rate, not a VM option)": 1}


@pytest.mark.parametrize(("old", "new", "field"), [
    (",no_upfront,standard,0,23.77728", ",no_upfront,standard,0,-23.77728", "usd_per_hour"),
    (",no_upfront,standard,0,23.77728", ",monthly,standard,0,23.77728", "payment_option"),
    ("2025-11-30", "30/11/2025", "as_of"),
])
def test_bad_cells_name_line_and_field_and_nothing_is_parsed(aws_file: Path, tmp_path: Path,
                                                             old: str, new: str,
                                                             field: str) -> None:
    broken = write_csv_variant(aws_file, tmp_path / "bad.csv", old, new)
    with pytest.raises(PriceFileErrors) as exc_info:
        parse(broken)
    assert_error(exc_info, broken, _line_of(broken, new), field)


def _line_of(path: Path, text: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if text in line)
