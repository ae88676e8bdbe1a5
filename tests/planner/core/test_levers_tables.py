"""The shipped storage price table and power-cap curves: parsed as their .md files say, and
hostile files give a clean ValueError naming the file, never a crash."""

import csv

import pytest
from hypothesis import given

from planner.core.power_caps import parse_power_curves, power_cap
from planner.core.storage_tiers import (
    REQUIRED_COLUMNS,
    checkpoint_tiers,
    first_price,
    parse_storage_prices,
)
from pricing.shipped_tables import POWER_CURVES_CSV, STORAGE_PRICES_CSV
from tests.hostile import HOSTILE_SETTINGS, hostile_csv_bytes

PRICES = STORAGE_PRICES_CSV.read_text(encoding="utf-8")
CURVES = POWER_CURVES_CSV.read_text(encoding="utf-8")


def test_every_price_row_is_read_with_its_minimum_and_restore_rule() -> None:
    tiers = parse_storage_prices(PRICES)
    assert len(tiers) == 44
    by_name = {(t.provider, t.tier): t for t in tiers}
    standard = by_name[("aws", "S3 Standard")]
    assert (standard.usd_per_gb_month, standard.usd_per_1k_put, standard.min_storage_days) == (
        0.023, 0.005, 0.0)
    assert by_name[("aws", "S3 Standard-IA")].min_storage_days == 30
    assert not by_name[("aws", "S3 Glacier Deep Archive")].is_instant
    assert by_name[("gcp", "Archive")].is_instant  # online access despite the name
    assert by_name[("azure", "Hot")].usd_per_gb_month == 0.0208  # first volume band
    assert by_name[("aws", "gp3 (General Purpose SSD)")].kind == "block"
    names = [t.tier for t in checkpoint_tiers(tiers, "aws")]
    assert "S3 Glacier Instant Retrieval" not in names  # no dated price: never chosen
    assert all(t.kind == "object" for t in checkpoint_tiers(tiers, "gcp"))


@pytest.mark.parametrize(("text", "value"), [
    ("0.0208 (first 50 TB); 0.019968 (next 450 TB)", 0.0208),
    ("0.01 (standard); 0.03 (expedited)", 0.01), ("", None), ("0", 0.0)])
def test_a_price_cell_reads_its_first_price(text: str, value: float | None) -> None:
    assert first_price(text) == value


def test_a_bad_price_names_line_and_field() -> None:
    rows = list(csv.DictReader(PRICES.splitlines(keepends=True)))
    rows[2]["usd_per_gb_month"] = "cheap"
    lines = [",".join(REQUIRED_COLUMNS)] + [
        ",".join(f'"{r[c]}"' for c in REQUIRED_COLUMNS) for r in rows]
    with pytest.raises(ValueError, match="line 4: usd_per_gb_month"):
        parse_storage_prices("\n".join(lines))


def test_v100_at_175_watts_is_the_measured_resnet_point() -> None:
    curves = parse_power_curves(CURVES)
    cap = power_cap("V100 SXM2-16GB", 70.0, "cnn", curves)
    assert (cap.throughput, cap.energy) == (0.912, 0.828)
    assert cap.is_measured and cap.throughput_low < cap.throughput < cap.throughput_high
    unmeasured = power_cap("H100 SXM5-80GB", 70.0, "llm", curves)
    assert not unmeasured.is_measured
    assert (unmeasured.throughput_high - unmeasured.throughput_low
            > cap.throughput_high - cap.throughput_low)
    assert "no measurement" in unmeasured.basis and "wider" in unmeasured.basis
    assert "0 of 5" in cap.claim  # no V100 workload keeps 95 % speed at 72 % power


def test_jobs_that_never_reach_the_cap_are_not_curves() -> None:
    assert not any(c.workload.startswith("ncf") for c in parse_power_curves(CURVES))


@HOSTILE_SETTINGS
@given(data=hostile_csv_bytes(REQUIRED_COLUMNS))
def test_hostile_price_files_fail_cleanly(data: bytes) -> None:
    try:
        parse_storage_prices(data.decode("utf-8", errors="replace"))
    except ValueError as exc:
        assert "storage_prices.csv" in str(exc)


@HOSTILE_SETTINGS
@given(data=hostile_csv_bytes(("gpu", "workload", "knob", "power_limit_w",
                               "relative_throughput", "relative_energy", "power_w",
                               "source_kind", "source_url", "source_date")))
def test_hostile_curve_files_fail_cleanly(data: bytes) -> None:
    try:
        parse_power_curves(data.decode("utf-8", errors="replace"))
    except ValueError as exc:
        assert "power_cap_curves.csv" in str(exc)


def test_an_unmeasured_gpu_names_the_measured_gpus_the_table_has() -> None:
    """The band's and the claim's list of measured GPUs comes from the curves, so a table
    with V100 curves alone names the V100 alone."""
    rows = list(csv.DictReader(CURVES.splitlines(keepends=True)))
    fields = list(rows[0])
    only_v100 = [",".join(fields)] + [",".join(f'"{r[c]}"' for c in fields)
                                      for r in rows if r["gpu"].startswith("V100")]
    cap = power_cap("H100 SXM5-80GB", 70.0, "llm", parse_power_curves("\n".join(only_v100)))
    assert "every measured curve of V100," in cap.basis and "A40" not in cap.basis
    assert "On the 1 measured GPUs (V100)" in cap.claim and "A40" not in cap.claim
