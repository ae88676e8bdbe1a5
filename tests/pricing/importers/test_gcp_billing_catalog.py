import copy
import json
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from pricing.importers import PriceFileErrors
from pricing.importers.gcp_billing_catalog import parse
from tests.pricing.importers.helpers import assert_error, line_number, one_row


@pytest.fixture
def real_file(fixtures_dir: Path) -> Path:
    return fixtures_dir / "pricing" / "samples" / "gcp_cloud_billing_catalog_skus_opencost.json"


def _unit_price(document: dict[str, Any], description: str) -> float:
    sku = next(s for s in document["skus"] if s["description"] == description)
    price = sku["pricingInfo"][0]["pricingExpression"]["tieredRates"][0]["unitPrice"]
    return int(price["units"]) + price["nanos"] / 1e9


def _write(tmp_path: Path, document: dict[str, Any]) -> Path:
    path = tmp_path / "skus.json"
    path.write_text(json.dumps(document, indent=2))
    return path


def test_a2_highgpu_1g_is_cores_plus_ram_plus_gpu(real_file: Path) -> None:
    document = json.loads(real_file.read_text())
    core = _unit_price(document, "A2 Instance Core running in Americas")
    ram = _unit_price(document, "A2 Instance Ram running in Americas")
    gpu = _unit_price(document, "Nvidia Tesla A100 GPU running in Americas")
    frame = parse(real_file).frame
    row = one_row(frame, "a2-highgpu-1g", "us-central1", "on_demand")
    assert row["usd_per_hour"] == round(12 * core + 85 * ram + gpu, 6)
    assert row["usd_per_hour"] == pytest.approx(3.67, abs=0.005)
    assert row["usd_per_hour"] - gpu == pytest.approx(0.739, abs=0.001)
    assert (row["accelerator"], row["gpu_count"], row["vcpus"]) == ("a100-sxm4-40gb", 1, 12.0)
    sixteen = one_row(frame, "a2-megagpu-16g", "us-west1", "on_demand")
    assert sixteen["usd_per_hour"] == round(96 * core + 1360 * ram + 16 * gpu, 6)


def test_only_machine_types_with_all_parts_priced(real_file: Path) -> None:
    parsed = parse(real_file)
    assert set(parsed.frame["instance_type"]) == {
        "a2-highgpu-1g", "a2-highgpu-2g", "a2-highgpu-4g", "a2-highgpu-8g", "a2-megagpu-16g",
    }
    assert set(parsed.frame["region"]) == {"us-central1", "us-east1", "us-west1"}
    assert parsed.skipped == {"not a GPU, A2, A3 or G2 price SKU": 4}
    assert set(parsed.frame["as_of"]) == {date(2023, 8, 10)}


def test_usage_types_map_to_spot_and_committed(real_file: Path, tmp_path: Path) -> None:
    document = json.loads(real_file.read_text())
    a2_skus = document["skus"][:3]
    for usage, prefix in (("Preemptible", "Spot Preemptible "), ("Commit1Yr", "Commitment v1: ")):
        for sku in a2_skus:
            extra = copy.deepcopy(sku)
            extra["description"] = prefix + sku["description"]
            extra["category"]["usageType"] = usage
            extra["skuId"] += usage
            rate = extra["pricingInfo"][0]["pricingExpression"]["tieredRates"][0]["unitPrice"]
            rate["nanos"] //= 2
            rate["units"] = "1" if rate["units"] == "2" else "0"
            document["skus"].append(extra)
    frame = parse(_write(tmp_path, document)).frame
    spot = one_row(frame, "a2-highgpu-1g", "us-central1", "spot")
    assert spot["usd_per_hour"] == pytest.approx(12 * 0.0158055 + 85 * 0.0021185 + 1.466954)
    assert one_row(frame, "a2-highgpu-1g", "us-east1", "committed_1y")["usd_per_hour"] == (
        spot["usd_per_hour"]
    )


def test_malformed_json(real_file: Path, tmp_path: Path) -> None:
    line = line_number(real_file, '"skuId": "2390-DCAF-DA38",')
    broken = tmp_path / "skus.json"
    broken.write_text(real_file.read_text().replace('"skuId": "2390-DCAF-DA38",', '"skuId"', 1))
    with pytest.raises(PriceFileErrors) as exc_info:
        parse(broken)
    # The decoder stops at the next token, on the line after the bare key.
    assert_error(exc_info, broken, line + 1, "(file)")


def test_missing_key_names_the_item_line(real_file: Path, tmp_path: Path) -> None:
    document = json.loads(real_file.read_text())
    del document["skus"][1]["category"]["usageType"]
    broken = _write(tmp_path, document)
    with pytest.raises(PriceFileErrors) as exc_info:
        parse(broken)
    item_line = broken.read_text().splitlines().index('    {', 40) + 1
    assert_error(exc_info, broken, item_line, "usageType")
    assert "item 1 (2390-DCAF-DA38)" in str(exc_info.value)


@pytest.mark.parametrize(("bad", "message"), [("two", "not a number"), ("-2", "negative")])
def test_bad_price(real_file: Path, tmp_path: Path, bad: str, message: str) -> None:
    document = json.loads(real_file.read_text())
    rate = document["skus"][0]["pricingInfo"][0]["pricingExpression"]["tieredRates"][0]
    rate["unitPrice"]["units"] = bad
    broken = _write(tmp_path, document)
    with pytest.raises(PriceFileErrors) as exc_info:
        parse(broken)
    assert_error(exc_info, broken, 3, "unitPrice.units")
    assert message in str(exc_info.value)


def test_no_effective_time_needs_as_of(real_file: Path, tmp_path: Path) -> None:
    document = json.loads(real_file.read_text())
    for sku in document["skus"]:
        sku["pricingInfo"][0].pop("effectiveTime", None)
        sku["pricingInfo"][0].pop("EffectiveTime", None)
    broken = _write(tmp_path, document)
    with pytest.raises(PriceFileErrors) as exc_info:
        parse(broken)
    assert_error(exc_info, broken, 1, "effectiveTime")
    assert set(parse(broken, as_of=date(2024, 1, 2)).frame["as_of"]) == {date(2024, 1, 2)}
