"""Assertions shared by the parser tests."""

from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from pricing.importers import PriceFileErrors


def one_row(frame: pd.DataFrame, instance: str, region: str, option: str) -> dict[str, Any]:
    """The single canonical row for (instance, region, purchase option)."""
    rows = frame[
        (frame["instance_type"] == instance)
        & (frame["region"] == region)
        & (frame["purchase_option"] == option)
    ]
    assert len(rows) == 1, rows
    row: dict[str, Any] = rows.iloc[0].to_dict()
    return row


def assert_error(
    exc_info: pytest.ExceptionInfo[PriceFileErrors], path: Path, line: int | None, field: str
) -> None:
    """The raised errors include one naming this file, line and field."""
    found = [(e.file, e.line, e.field) for e in exc_info.value.errors]
    assert (path.name, line, field) in found, found
    message = str(exc_info.value)
    assert path.name in message and f"'{field}'" in message


def write_csv_variant(source: Path, target: Path, old: str, new: str) -> Path:
    """A copy of `source` with the first `old` replaced by `new`."""
    text = source.read_text()
    assert old in text
    target.write_text(text.replace(old, new, 1))
    return target


def line_number(path: Path, needle: str) -> int:
    """1-based line of the first line of `path` that contains `needle`."""
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        if needle in line:
            return number
    raise AssertionError(f"{needle!r} not in {path}")
