"""Numbers as the report prints them: thousands separators, fixed digits, units."""

from __future__ import annotations

import math

from planner.core import formatting
from planner.reports.core.model import Column, Figure, Table, Value


def format_value(value: Value, digits: int = 0) -> str:
    """1234.5 -> "1,235" (digits=0); digits < 0 keeps the decimals a number needs (94.4,
    0.000264, 2,000); None and NaN -> ""; text unchanged."""
    if value is None or isinstance(value, bool):
        return "" if value is None else str(value)
    if isinstance(value, int | float):
        if not math.isfinite(value):
            return ""
        if digits < 0:
            return formatting.number(value, 6)
        return formatting.count(value) if digits == 0 else f"{value:,.{digits}f}"
    return value


def figure_text(figure: Figure) -> str:
    """A key figure's value with its unit ("$185,292", "12.5 days"); "-" when unknown."""
    text = format_value(figure.value, figure.digits)
    if not text:
        return "-"
    if not isinstance(figure.value, int | float):
        return text
    # As the pages print them: money and prices in dollars, "7.8%", a count bare.
    if figure.unit == "USD":
        return formatting.usd(figure.value)
    if figure.unit.startswith("USD/"):
        return formatting.usd_per(figure.value, figure.unit.removeprefix("USD/"))
    if figure.unit == "%":
        return f"{text}%"
    if figure.unit == "count":
        return text
    return f"{text} {figure.unit}".strip()


def printed_columns(table: Table) -> list[tuple[int, Column]]:
    """The columns the PDF prints, with their positions in a row."""
    return [(i, c) for i, c in enumerate(table.columns) if c.is_printed]


def printed_rows(table: Table, limit: int | None = None) -> list[list[str]]:
    """The rows as the PDF and HTML print them (formatted text of the printed columns)."""
    columns = printed_columns(table)
    rows = table.rows if limit is None else table.rows[:limit]
    return [[format_value(row[i], c.digits) for i, c in columns] for row in rows]
