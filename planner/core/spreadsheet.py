"""Text that no spreadsheet runs as a formula: every CSV and XLSX export writes cells through
`inert` (the reports and the pricing explorer alike)."""

from __future__ import annotations

import math
import re

# A spreadsheet treats text starting with one of these as a formula (or a DDE payload).
FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")
# Control characters an XLSX cell cannot hold (openpyxl refuses the whole file): dropped.
UNSTORABLE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f]")

Cell = str | float | int | None


def inert(value: Cell) -> Cell:
    """The value, with text that a spreadsheet would evaluate prefixed by a quote (OWASP)
    and control characters no spreadsheet cell holds (all but tab, LF, CR) dropped.

    Numbers are returned unchanged (a negative number is a number, not a formula); NaN and
    infinities become empty cells.
    """
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, str):
        value = UNSTORABLE.sub("", value)
    if isinstance(value, str) and value.startswith(FORMULA_PREFIXES):
        return "'" + value
    return value
