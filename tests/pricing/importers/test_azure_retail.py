import json
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from pricing.importers import PriceFileErrors
from pricing.importers.azure_retail import parse
from tests.pricing.importers.helpers import assert_error, line_number, one_row

ND = "Standard_ND96asr_v4"


@pytest.fixture
def sample(fixtures_dir: Path) -> Path:
    return fixtures_dir / "pricing" / "azure_retail_gpu_sample.json"


def _write_items(tmp_path: Path, items: list[dict[str, Any]]) -> Path:
    """A response with `Items` first, so item 0 opens on line 3."""
    path = tmp_path / "retail.json"
    document = {"Items": items, "BillingCurrency": "USD", "NextPageLink": None, "Count": len(items)}
    path.write_text(json.dumps(document, indent=2))
    return path


def _first_item(sample: Path) -> dict[str, Any]:
    item: dict[str, Any] = json.loads(sample.read_text())["Items"][0]
    return item


def test_linux_on_demand_spot_and_savings_plans(sample: Path) -> None:
    frame = parse(sample).frame
    on_demand = one_row(frame, ND, "eastus", "on_demand")
    assert (on_demand["usd_per_hour"], on_demand["accelerator"], on_demand["gpu_count"]) == (
        27.197, "a100-sxm4-40gb", 8
    )
    assert on_demand["as_of"] == date(2024, 3, 1)
    assert one_row(frame, ND, "eastus", "spot")["usd_per_hour"] == 5.98334
    assert one_row(frame, ND, "eastus", "savings_plan_1y")["usd_per_hour"] == 21.4856
    assert one_row(frame, ND, "eastus", "savings_plan_3y")["usd_per_hour"] == 15.2303
    h100 = one_row(frame, "Standard_ND96isr_H100_v5", "eastus", "on_demand")
    assert (h100["usd_per_hour"], h100["accelerator"]) == (98.32, "h100-sxm5-80gb")
    nc = one_row(frame, "Standard_NC24ads_A100_v4", "eastus", "on_demand")
    assert (nc["usd_per_hour"], nc["accelerator"], nc["gpu_count"]) == (3.673, "a100-pcie-80gb", 1)
    t4 = one_row(frame, "Standard_NC4as_T4_v3", "eastus", "on_demand")
    assert (t4["usd_per_hour"], t4["accelerator"]) == (0.526, "t4-pcie-16gb")


def test_reservation_term_price_becomes_hourly(sample: Path) -> None:
    frame = parse(sample).frame
    assert one_row(frame, ND, "eastus", "reserved_1y")["usd_per_hour"] == round(150094 / 8760, 6)
    assert one_row(frame, ND, "eastus", "reserved_3y")["usd_per_hour"] == round(
        285895 / (3 * 8760), 6
    )


def test_windows_low_priority_devtest_and_unknown_sizes_are_skipped(sample: Path) -> None:
    parsed = parse(sample)
    assert parsed.skipped == {
        "Windows": 4, "Low Priority": 4, "price type DevTestConsumption": 4,
        "unknown Azure GPU size: Standard_NV6ads_A10_v5": 1,
    }
    assert len(parsed.frame) == 4 * 6


def test_as_of_option_applies_to_every_row(sample: Path) -> None:
    frame = parse(sample, as_of=date(2026, 2, 1)).frame
    assert set(frame["as_of"]) == {date(2026, 2, 1)}


def test_malformed_json(sample: Path, tmp_path: Path) -> None:
    line = line_number(sample, '"retailPrice": 27.197,')
    broken = tmp_path / "retail.json"
    broken.write_text(sample.read_text().replace('"retailPrice": 27.197,', '"retailPrice": ,', 1))
    with pytest.raises(PriceFileErrors) as exc_info:
        parse(broken)
    assert_error(exc_info, broken, line, "(file)")


def test_missing_key_names_item_line_and_field(sample: Path, tmp_path: Path) -> None:
    second = _first_item(sample)
    del second["armSkuName"]
    broken = _write_items(tmp_path, [_first_item(sample), second])
    with pytest.raises(PriceFileErrors) as exc_info:
        parse(broken)
    item_line = 3 + len(json.dumps(_first_item(sample), indent=2).splitlines())
    assert_error(exc_info, broken, item_line, "armSkuName")
    assert "item 1" in str(exc_info.value)


@pytest.mark.parametrize(("bad", "message"), [("27,197", "not a number"), (-27.197, "negative")])
def test_bad_price(sample: Path, tmp_path: Path, bad: Any, message: str) -> None:
    item = _first_item(sample)
    item["retailPrice"] = bad
    broken = _write_items(tmp_path, [item])
    with pytest.raises(PriceFileErrors) as exc_info:
        parse(broken)
    assert_error(exc_info, broken, 3, "retailPrice")
    assert message in str(exc_info.value)


def test_reservation_without_term(sample: Path, tmp_path: Path) -> None:
    items = json.loads(sample.read_text())["Items"]
    reservation = next(i for i in items if i["type"] == "Reservation")
    del reservation["reservationTerm"]
    broken = _write_items(tmp_path, [reservation])
    with pytest.raises(PriceFileErrors) as exc_info:
        parse(broken)
    assert_error(exc_info, broken, 3, "reservationTerm")
