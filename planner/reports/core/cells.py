"""Cell values for spreadsheets: text that no spreadsheet runs as a formula, and CSV."""

from __future__ import annotations

import csv
import io
import math

from planner.reports.core.model import Table, Value

# A spreadsheet treats text starting with one of these as a formula (or a DDE payload).
FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")


def inert(value: Value) -> Value:
    """The value, with text that a spreadsheet would evaluate prefixed by a quote (OWASP).

    Numbers are returned unchanged (a negative number is a number, not a formula); NaN and
    infinities become empty cells.
    """
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, str) and value.startswith(FORMULA_PREFIXES):
        return "'" + value
    return value


def table_csv(table: Table) -> str:
    """The table as CSV text: one header row with units, then the rows, every cell inert."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow([inert(c.header) for c in table.columns])
    for row in table.rows:
        writer.writerow(["" if inert(v) is None else inert(v) for v in row])
    return out.getvalue()
