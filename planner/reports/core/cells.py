"""A report table as CSV, every cell inert (planner.core.spreadsheet: no spreadsheet runs it
as a formula)."""

from __future__ import annotations

import csv
import io

from planner.core.spreadsheet import inert
from planner.reports.core.model import Table


def table_csv(table: Table) -> str:
    """The table as CSV text: one header row with units, then the rows, every cell inert."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow([inert(c.header) for c in table.columns])
    for row in table.rows:
        writer.writerow(["" if inert(v) is None else inert(v) for v in row])
    return out.getvalue()
