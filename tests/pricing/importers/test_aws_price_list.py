import json
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from pricing.importers import PriceFileErrors
from pricing.importers.aws_price_list import parse
from tests.pricing.importers.helpers import assert_error, line_number, one_row

ON_DEMAND_SKU = "H7NGEAC6UEHNTKSJ"
RESERVED_SKU = "AWSP4DLINUXUSE1A"


@pytest.fixture
def real_file(fixtures_dir: Path) -> Path:
    return fixtures_dir / "pricing" / "samples" / "aws_price_list_ec2_p4d_us-east-1_opencost.json"


@pytest.fixture
def reserved_file(fixtures_dir: Path) -> Path:
    return fixtures_dir / "pricing" / "aws_price_list_reserved_sample.json"


def _write(tmp_path: Path, document: dict[str, Any]) -> Path:
    path = tmp_path / "offer.json"
    path.write_text(json.dumps(document, indent=2))
    return path


def test_real_sample_on_demand_and_capacity_block_skipped(real_file: Path) -> None:
    parsed = parse(real_file)
    assert len(parsed.frame) == 1
    row = one_row(parsed.frame, "p4d.24xlarge", "us-east-1", "on_demand")
    assert row["usd_per_hour"] == 32.7726
    assert (row["accelerator"], row["gpu_count"], row["vcpus"]) == ("a100-sxm4-40gb", 8, 96.0)
    assert row["as_of"] == date(2024, 5, 28)
    assert parsed.skipped == {"marketoption is CapacityBlock (only OnDemand is kept)": 1}


def test_as_of_option_overrides_publication_date(real_file: Path) -> None:
    frame = parse(real_file, as_of=date(2024, 6, 1)).frame
    assert set(frame["as_of"]) == {date(2024, 6, 1)}


def _offer(frame, option: str, payment: str, offering: str = "standard") -> dict:
    rows = frame[(frame["instance_type"] == "p4d.24xlarge") & (frame["region"] == "us-east-1")
                 & (frame["purchase_option"] == option) & (frame["payment_option"] == payment)
                 & (frame["offering_class"] == offering)]
    assert len(rows) == 1, rows
    return rows.iloc[0].to_dict()


def test_every_reserved_offer_keeps_its_payment_option(reserved_file: Path) -> None:
    frame = parse(reserved_file).frame
    assert one_row(frame, "p4d.24xlarge", "us-east-1", "on_demand")["usd_per_hour"] == 21.957642
    assert _offer(frame, "reserved_1y", "no_upfront")["usd_per_hour"] == 13.921094
    assert _offer(frame, "reserved_1y", "no_upfront", "convertible")["usd_per_hour"] > 13.921094
    # 3-year Partial Upfront: hourly fee + upfront spread over 3 x 8760 h.
    three = _offer(frame, "reserved_3y", "partial_upfront")
    assert three["usd_per_hour"] == round(3.92 + 103000 / (3 * 8760), 6)
    assert (three["upfront_usd"], three["recurring_usd_per_hour"]) == (103000, 3.92)
    assert len(frame[frame["purchase_option"].str.startswith("reserved")]) == 6


def test_location_name_gives_region_and_other_products_are_counted(reserved_file: Path) -> None:
    parsed = parse(reserved_file)
    p5 = one_row(parsed.frame, "p5.48xlarge", "us-west-2", "on_demand")
    assert (p5["usd_per_hour"], p5["accelerator"], p5["memory_gib"]) == (
        55.04, "h100-sxm5-80gb", 2048.0
    )
    assert parsed.skipped == {
        "operatingSystem is Windows (only Linux is kept)": 1,
        "tenancy is Dedicated (only Shared is kept)": 1,
        "no GPU": 1,
        "not a compute instance": 1,
    }
    # p4d: on-demand and 6 reserved offers; p5: on-demand
    assert len(parsed.frame) == 8


def test_malformed_json_names_the_line(real_file: Path, tmp_path: Path) -> None:
    lines = real_file.read_text().splitlines()
    lines[9] = lines[9].rstrip(",")
    broken = tmp_path / "offer.json"
    broken.write_text("\n".join(lines))
    with pytest.raises(PriceFileErrors) as exc_info:
        parse(broken)
    assert_error(exc_info, broken, 11, "(file)")
    assert "malformed JSON" in str(exc_info.value)


def test_missing_top_level_key(real_file: Path, tmp_path: Path) -> None:
    document = json.loads(real_file.read_text())
    del document["terms"]
    broken = _write(tmp_path, document)
    with pytest.raises(PriceFileErrors) as exc_info:
        parse(broken)
    assert_error(exc_info, broken, 1, "terms")


def test_missing_instance_type_names_the_product(real_file: Path, tmp_path: Path) -> None:
    document = json.loads(real_file.read_text())
    del document["products"][ON_DEMAND_SKU]["attributes"]["instanceType"]
    broken = _write(tmp_path, document)
    with pytest.raises(PriceFileErrors) as exc_info:
        parse(broken)
    assert_error(exc_info, broken, line_number(broken, f'"{ON_DEMAND_SKU}": {{'), "instanceType")
    assert ON_DEMAND_SKU in str(exc_info.value)


@pytest.mark.parametrize(("bad", "message"), [("thirty", "not a number"), ("-1.5", "negative")])
def test_bad_price_names_the_term(
    real_file: Path, tmp_path: Path, bad: str, message: str
) -> None:
    document = json.loads(real_file.read_text())
    term = document["terms"]["OnDemand"][ON_DEMAND_SKU][f"{ON_DEMAND_SKU}.JRTCKXETXF"]
    next(iter(term["priceDimensions"].values()))["pricePerUnit"]["USD"] = bad
    broken = _write(tmp_path, document)
    with pytest.raises(PriceFileErrors) as exc_info:
        parse(broken)
    line = line_number(broken, f'"{ON_DEMAND_SKU}.JRTCKXETXF": {{')
    assert_error(exc_info, broken, line, "pricePerUnit.USD")
    assert message in str(exc_info.value)


def test_no_publication_date_needs_as_of(real_file: Path, tmp_path: Path) -> None:
    document = json.loads(real_file.read_text())
    del document["publicationDate"]
    broken = _write(tmp_path, document)
    with pytest.raises(PriceFileErrors) as exc_info:
        parse(broken)
    assert_error(exc_info, broken, 1, "publicationDate")
    assert len(parse(broken, as_of=date(2024, 5, 28)).frame) == 1
