"""Hostile price files for every importer: each parse raises PriceFileErrors whose errors name
the file, line and field, or returns canonical rows with finite, in-bound prices and specs and
text a database can store. Never any other exception."""

import csv
import io
import json
import tempfile
from collections.abc import Callable
from datetime import date
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from hypothesis import given

from pricing.importers import PriceFileErrors
from pricing.importers.common import (
    MAX_UPFRONT_USD,
    MAX_USD_PER_HOUR,
    PAYMENT_OPTIONS,
    PURCHASE_OPTIONS,
)
from pricing.importers.levels import read_levels
from pricing.importers.registry import FORMATS, parse_file
from tests.hostile import HOSTILE_SETTINGS, hostile_csv_bytes, hostile_json_bytes, outcome

ROOT = Path(__file__).resolve().parents[3]
PRICING = ROOT / "tests" / "fixtures" / "pricing"
AS_OF = date(2025, 6, 1)
CSV_SAMPLES = {
    "skypilot": PRICING / "skypilot_aws_us-east-1.csv",
    "vantage": PRICING / "vantage_aws_us-east-1.csv",
    "cyclenerd": PRICING / "cyclenerd_gcp_us-central1.csv",
    "price-table": PRICING / "aws_commitments_vantage_us-east-1_p4d_p5.csv",
}
JSON_SAMPLES = {
    "aws-price-list": PRICING / "aws_price_list_reserved_sample.json",
    "azure-retail": PRICING / "azure_retail_gpu_sample.json",
    "gcp-billing-catalog": PRICING / "recorded" / "gcp_skus_page1.json",
}
LEVELS = ROOT / "pricing" / "data" / "prices" / "commitment_discount_levels.csv"


def _csv_sample(path: Path, n_rows: int = 6) -> tuple[list[str], tuple[tuple[str, ...], ...]]:
    rows = list(csv.reader(io.StringIO(path.read_text(encoding="utf-8"))))
    return rows[0], tuple(tuple(row) for row in rows[1:n_rows + 1])


def _in_file(data: bytes, suffix: str, parse: Callable[[Path], Any]) -> Any:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"upload{suffix}"
        path.write_bytes(data)
        return parse(path)


def _expect_clean(parse: Callable[[], Any]) -> Any:
    """The parse's result, or None after checking that its refusal names line and field."""
    try:
        return parse()
    except PriceFileErrors as refused:
        assert refused.errors, "a refusal lists its errors"
        for error in refused.errors:
            assert error.file.startswith("upload") and error.field and error.message
            assert error.line is None or error.line >= 0  # JSON: item index if unlocated
        outcome("refused (file, line, field)")
        return None


def _bounded(series: pd.Series, maximum: float, *, is_optional: bool) -> bool:
    values = pd.to_numeric(series, errors="raise").astype(float)
    present = values.dropna() if is_optional else values
    return bool(((present >= 0) & (present <= maximum)).all() and
                (is_optional or values.notna().all()))


def _check_frame(frame: pd.DataFrame) -> None:
    outcome("parsed" if len(frame) else "parsed, nothing kept")
    if frame.empty:
        return
    assert _bounded(frame["usd_per_hour"], MAX_USD_PER_HOUR, is_optional=False)
    for name in ("zone_low_usd_per_hour", "zone_high_usd_per_hour", "recurring_usd_per_hour"):
        assert _bounded(frame[name], MAX_USD_PER_HOUR, is_optional=True), name
    assert _bounded(frame["upfront_usd"], MAX_UPFRONT_USD, is_optional=True)
    for name in ("vcpus", "memory_gib"):
        assert _bounded(frame[name], 1e7, is_optional=True), name
    assert (frame["gpu_count"] >= 0).all()
    assert set(frame["purchase_option"]) <= set(PURCHASE_OPTIONS)
    assert set(frame["payment_option"]) <= set(PAYMENT_OPTIONS)
    for name in ("provider", "instance_type", "region", "zone", "provider_accelerator_name"):
        assert not frame[name].astype(str).str.contains("\x00").any(), name
    assert all(isinstance(day, date) for day in frame["as_of"])


def _csv_property(fmt: str) -> Callable[..., None]:
    header, rows = _csv_sample(CSV_SAMPLES[fmt])

    @HOSTILE_SETTINGS
    @given(data=hostile_csv_bytes(header, rows))
    def test(data: bytes) -> None:
        parsed = _expect_clean(lambda: _in_file(
            data, ".csv", lambda path: parse_file(fmt, path, as_of=AS_OF)))
        if parsed is not None:
            _check_frame(parsed.frame)

    return test


def _json_property(fmt: str) -> Callable[..., None]:
    document = json.loads(JSON_SAMPLES[fmt].read_text(encoding="utf-8"))

    @HOSTILE_SETTINGS
    @given(data=hostile_json_bytes(document))
    def test(data: bytes) -> None:
        parsed = _expect_clean(lambda: _in_file(
            data, ".json", lambda path: parse_file(fmt, path, as_of=AS_OF)))
        if parsed is not None:
            _check_frame(parsed.frame)

    return test


# One property per format (Hypothesis reports each with its own statistics).
test_hostile_skypilot_files_fail_cleanly = _csv_property("skypilot")
test_hostile_vantage_files_fail_cleanly = _csv_property("vantage")
test_hostile_cyclenerd_files_fail_cleanly = _csv_property("cyclenerd")
test_hostile_price_table_files_fail_cleanly = _csv_property("price-table")
test_hostile_aws_price_list_files_fail_cleanly = _json_property("aws-price-list")
test_hostile_azure_retail_files_fail_cleanly = _json_property("azure-retail")
test_hostile_gcp_billing_catalog_files_fail_cleanly = _json_property("gcp-billing-catalog")


@HOSTILE_SETTINGS
@given(data=hostile_csv_bytes(*_csv_sample(LEVELS)))
def test_hostile_discount_level_files_fail_cleanly(data: bytes) -> None:
    levels = _expect_clean(lambda: _in_file(data, ".csv", read_levels))
    if levels is not None:
        outcome("parsed")
        assert ((levels["discount"] >= 0) & (levels["discount"] < 100)).all()


def test_every_registered_format_is_covered() -> None:
    assert set(FORMATS) == set(CSV_SAMPLES) | set(JSON_SAMPLES)


@pytest.mark.parametrize("fmt", sorted({**CSV_SAMPLES, **JSON_SAMPLES}))
def test_the_samples_the_strategies_start_from_parse(fmt: str) -> None:
    path = {**CSV_SAMPLES, **JSON_SAMPLES}[fmt]
    assert len(parse_file(fmt, path, as_of=AS_OF).frame) > 0


def _refused(fmt: str, document: Any) -> list[tuple[int | None, str]]:
    with pytest.raises(PriceFileErrors) as refused:
        _in_file(json.dumps(document).encode(), ".json",
                 lambda path: parse_file(fmt, path, as_of=AS_OF))
    return [(error.line, error.field) for error in refused.value.errors]


def _sample(fmt: str) -> Any:
    return json.loads(JSON_SAMPLES[fmt].read_text(encoding="utf-8"))


# Bugs the properties found: each was an uncaught TypeError, AttributeError or OverflowError.
def test_a_json_item_of_the_wrong_shape_is_an_error_at_its_line() -> None:
    azure = _sample("azure-retail")
    azure["Items"][1] = ["not", "an", "object"]
    assert [field for _, field in _refused("azure-retail", azure)] == ["item 1"]
    gcp = _sample("gcp-billing-catalog")
    gcp["skus"][0]["pricingInfo"][0]["pricingExpression"]["tieredRates"] = None
    assert [field for _, field in _refused("gcp-billing-catalog", gcp)] == ["item 0"]
    aws = _sample("aws-price-list")
    sku = next(iter(aws["products"]))
    aws["products"][sku]["attributes"] = None
    assert _refused("aws-price-list", aws)[0][1].startswith(f"product {sku}")


def test_a_top_level_list_of_the_wrong_kind_is_named() -> None:
    assert _refused("azure-retail", {"Items": None}) == [(1, "Items")]
    assert _refused("gcp-billing-catalog", {"skus": {"a": 1}}) == [(1, "skus")]


def test_an_infinite_or_negative_spec_cell_is_an_error_naming_it() -> None:
    header, rows = _csv_sample(CSV_SAMPLES["vantage"])
    bad = list(rows[0])
    bad[header.index("vcpu")] = "inf"
    text = "\n".join(",".join(row) for row in [header, bad]) + "\n"
    with pytest.raises(PriceFileErrors) as refused:
        _in_file(text.encode(), ".csv", lambda path: parse_file("vantage", path, as_of=AS_OF))
    assert [(e.line, e.field) for e in refused.value.errors] == [(2, "vcpu")]


def test_a_gcp_machine_priced_above_the_bound_from_its_parts_is_refused() -> None:
    gcp = _sample("gcp-billing-catalog")
    for sku in gcp["skus"]:
        for rate in sku["pricingInfo"][0]["pricingExpression"]["tieredRates"]:
            rate["unitPrice"]["units"] = "90000"  # each part within bounds, the sum is not
    with pytest.raises(PriceFileErrors, match="above the 100,000 bound"):
        _in_file(json.dumps(gcp).encode(), ".json",
                 lambda path: parse_file("gcp-billing-catalog", path, as_of=AS_OF))


def test_text_a_database_cannot_store_is_refused_naming_line_and_field() -> None:
    azure = _sample("azure-retail")
    kept = parse_file("azure-retail", JSON_SAMPLES["azure-retail"], as_of=AS_OF).frame
    line = int(kept["line"].iloc[0])
    index = [i for i, item in enumerate(azure["Items"])
             if item["armSkuName"] == kept["instance_type"].iloc[0]
             and item["armRegionName"] == kept["region"].iloc[0]][0]
    azure["Items"][index]["armRegionName"] = "east\x00us"
    assert ("region" in [field for _, field in _refused("azure-retail", azure)]) and line > 0
    azure["Items"][index]["armRegionName"] = ["eastus"]
    assert ("region" in [field for _, field in _refused("azure-retail", azure)]) and line > 0


@pytest.mark.parametrize(("cell", "text"), [("memory", "1.2.3 GB"), ("memory", "9" * 400 + " GB"),
                                            ("gpu_memory", "1.2.3 GB")])
def test_a_vantage_size_that_is_no_number_is_an_error_naming_it(cell: str, text: str) -> None:
    header, rows = _csv_sample(CSV_SAMPLES["vantage"])
    bad = list(rows[0])
    bad[header.index(cell)] = text
    buffer = io.StringIO()
    csv.writer(buffer).writerows([header, bad])
    with pytest.raises(PriceFileErrors) as refused:
        _in_file(buffer.getvalue().encode(), ".csv",
                 lambda path: parse_file("vantage", path, as_of=AS_OF))
    assert [(e.line, e.field) for e in refused.value.errors] == [(2, cell)]


def test_a_gcp_accelerator_row_without_a_count_is_counted_not_a_crash() -> None:
    header, rows = _csv_sample(PRICING / "anycloud_gcp_us-central1-a.csv", n_rows=100)
    count_at = header.index("AcceleratorCount")
    changed = [list(row) for row in rows]
    blanked = next(row for row in changed if row[header.index("InstanceType")] == "")
    blanked[count_at] = ""
    buffer = io.StringIO()
    csv.writer(buffer).writerows([header, *changed])
    parsed = _in_file(buffer.getvalue().encode(), ".csv",
                      lambda path: parse_file("skypilot", path, as_of=AS_OF))
    assert parsed.skipped["accelerator row without AcceleratorCount"] == 1
