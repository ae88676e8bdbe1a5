"""A report table as CSV, every cell inert (planner.core.spreadsheet: no spreadsheet runs it
as a formula)."""

from __future__ import annotations

import csv
import io
import math

from planner.core.spreadsheet import inert
from planner.reports.core.model import Column, Table, Value


def table_csv(table: Table) -> str:
    """The table as CSV text: one header row with units, then the rows, every cell inert."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow([inert(c.header) for c in table.columns])
    for row in table.rows:
        cells = (csv_number(v, c) for v, c in zip(row, table.columns, strict=True))
        writer.writerow(["" if inert(v) is None else inert(v) for v in cells])
    return out.getvalue()


def csv_number(value: Value, column: Column) -> Value:
    """A number rounded to its meaning: money to cents, hourly rates to 0.0001, hours, days
    and percentages to 0.1; others to their column's digits (at least 2)."""
    if not isinstance(value, float) or not math.isfinite(value):
        return value
    unit = column.unit
    if unit.startswith("USD/"):
        digits = 4
    elif unit == "USD":
        digits = 2
    elif unit in ("h", "hours", "days", "%", "GPU-hours"):
        digits = 1
    else:
        digits = max(column.digits, 2)
    rounded = round(value, digits)
    return int(rounded) if rounded.is_integer() else rounded
