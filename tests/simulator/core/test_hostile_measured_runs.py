"""Hostile measured-runs uploads: parse_measured_runs never raises; it returns row errors that
name the line and column, or complete rows of finite numbers and text a database can store."""

import csv
import io
import math
from pathlib import Path

import pytest
from hypothesis import given

from simulator.core.measured_runs import (
    COLUMNS,
    FLOAT_COLUMNS,
    INT_COLUMNS,
    MAX_INT,
    MAXIMA,
    POSITIVE_COLUMNS,
    parse_measured_runs,
)
from tests.hostile import HOSTILE_SETTINGS, hostile_csv_bytes, outcome

REFERENCE = Path(__file__).resolve().parents[3] / "simulator" / "data" / "reference_runs.csv"


def _good_rows() -> tuple[tuple[str, ...], ...]:
    with REFERENCE.open(encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    assert tuple(rows[0]) == COLUMNS
    return tuple(tuple(row) for row in rows[1:6])


@HOSTILE_SETTINGS
@given(data=hostile_csv_bytes(COLUMNS, _good_rows()))
def test_hostile_measured_runs_fail_cleanly_or_parse_to_storable_rows(data: bytes) -> None:
    parsed = parse_measured_runs(data)
    for error in parsed.errors:
        assert error.message and (error.line == 0 or error.line >= 1)
        assert error.line == 0 or error.field or "fields" in error.message
    if parsed.errors:
        outcome("refused (line + column)")
        return
    assert parsed.rows
    outcome("parsed")
    for row in parsed.rows:
        assert set(row) == set(COLUMNS)
        for name, value in row.items():
            if value is None:
                continue
            if name in INT_COLUMNS or name in FLOAT_COLUMNS:
                assert math.isfinite(value) and 0 <= value <= MAXIMA.get(name, MAX_INT)
                assert name not in POSITIVE_COLUMNS or value > 0
            else:
                assert isinstance(value, str) and "\x00" not in value


def _one_cell(column: str, text: str) -> bytes:
    row = list(_good_rows()[0])
    row[COLUMNS.index(column)] = text
    buffer = io.StringIO()
    csv.writer(buffer).writerows([COLUMNS, row])
    return buffer.getvalue().encode()


# Bugs the property found: each was stored, then broke the page or the database.
@pytest.mark.parametrize(("column", "text", "message"), [
    ("notes", "a\x00b", "contains a NUL character"),  # PostgreSQL refuses NUL in text
    ("params_billion", "1e300", "1e300 is above the 100000 bound"),  # overflowed predictions
    ("gpu_count", "99999999999999999999", "above the 1e+08 bound"),
    ("tokens_or_samples_total", "-1e308", "must not be negative"),
])
def test_unstorable_or_absurd_cells_are_refused_naming_the_column(column: str, text: str,
                                                                   message: str) -> None:
    parsed = parse_measured_runs(_one_cell(column, text))
    assert [(e.line, e.field) for e in parsed.errors] == [(2, column)]
    assert message in parsed.errors[0].message


def test_a_header_with_blank_names_names_their_positions() -> None:
    parsed = parse_measured_runs(b"run_id,,,gpu\n")
    assert ("column 2", "has no name") in [(e.field, e.message) for e in parsed.errors]
