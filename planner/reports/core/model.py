"""The report model: everything a recommendation report says, in one frozen value.

Every renderer (PDF, XLSX, CSV, HTML) reads only this model, so the formats cannot disagree.
Numbers stay numbers (floats in the unit their column names); text is plain text.
"""

from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

# One table cell: text, a number in its column's unit, or empty.
Value = str | float | int | None

KINDS = ("plan", "history", "capacity", "serving")


@dataclass(frozen=True)
class Column:
    """A table column. `unit` goes into every header ("Total (USD)"); `is_printed` False
    leaves it out of the PDF, whose A4 page has no room for every column; `is_in_terminal`
    puts it in a command's printed table too (the `plan` command's)."""

    key: str
    label: str
    unit: str = ""
    is_printed: bool = True
    digits: int = 0
    is_in_terminal: bool = False

    @property
    def header(self) -> str:
        return f"{self.label} ({self.unit})" if self.unit else self.label


@dataclass(frozen=True)
class Table:
    """A titled table; `sheet` names its XLSX sheet (at most 31 characters)."""

    key: str
    title: str
    sheet: str
    columns: tuple[Column, ...]
    rows: tuple[tuple[Value, ...], ...]
    note: str = ""

    def __post_init__(self) -> None:
        if len(self.sheet) > 31:
            raise ValueError(f"sheet: {self.sheet!r} is longer than 31 characters")
        for row in self.rows:
            if len(row) != len(self.columns):
                raise ValueError(f"{self.key}: a row has {len(row)} cells, not "
                                 f"{len(self.columns)}")

    def column(self, key: str) -> tuple[Value, ...]:
        """One column's values, by key."""
        index = [c.key for c in self.columns].index(key)
        return tuple(row[index] for row in self.rows)


@dataclass(frozen=True)
class Figure:
    """A key figure of the summary: a label, a value and its unit."""

    label: str
    value: Value
    unit: str = ""
    digits: int = 0


@dataclass(frozen=True)
class Finding:
    """A recommendation (or a conclusion) and why."""

    title: str
    choice: str
    why: str


@dataclass(frozen=True)
class Series:
    """A chart's series; `ids` optionally names each point's subject (a plan's option
    row_index), so every format can say which options it charts."""

    name: str
    x: tuple[float, ...]
    y: tuple[float, ...]
    ids: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        if len(self.x) != len(self.y):
            raise ValueError(f"series {self.name!r}: {len(self.x)} x but {len(self.y)} y values")
        if self.ids and len(self.ids) != len(self.x):
            raise ValueError(f"series {self.name!r}: {len(self.ids)} ids for {len(self.x)} "
                             "points")


@dataclass(frozen=True)
class Chart:
    """A chart: scatter (points), line, or stacked bar (x = category index into `categories`).

    Axis titles carry their units, e.g. "Total cost (USD)".
    """

    key: str
    title: str
    kind: Literal["scatter", "line", "bar"]
    x_title: str
    y_title: str
    series: tuple[Series, ...]
    categories: tuple[str, ...] = ()
    is_x_log: bool = False
    caption: str = ""  # which subjects it draws ("146 options: ranks 1–146")


@dataclass(frozen=True)
class Report:
    """A finished plan's or purchase-mix analysis's report.

    `tables[0]` is the main table (the CSV export); `generated_at` is an ISO timestamp the
    caller passes (the core never reads the clock).
    """

    kind: str
    subject_id: int
    title: str
    generated_at: str
    summary: tuple[Figure, ...]
    findings: tuple[Finding, ...]
    tables: tuple[Table, ...]
    charts: tuple[Chart, ...] = ()
    caveats: tuple[str, ...] = ()
    subtitle: str = ""
    notes: tuple[str, ...] = field(default=())

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"kind: {self.kind!r} is not one of {', '.join(KINDS)}")
        if not self.tables:
            raise ValueError("tables: a report needs at least its main table")

    @property
    def main_table(self) -> Table:
        return self.tables[0]

    def table(self, key: str) -> Table:
        for table in self.tables:
            if table.key == key:
                return table
        raise KeyError(key)

    @property
    def slug(self) -> str:
        """The file name without extension: the report's title and date
        ("worked-example-llama-2-7b-on-1-t-tokens-2026-12-01")."""
        return file_stem(self.title, self.generated_at[:10]) or f"{self.kind}-{self.subject_id}"

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe: tuples become lists (report_from_dict reverses it)."""
        return asdict(self)


def file_stem(title: str, day: str) -> str:
    """A file name of a title and a day: lower-case words joined by '-', at most 60 letters."""
    words = re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")[:60].rstrip("-")
    return "-".join(part for part in (words, day) if part)


def _tuple_rows(rows: list[list[Value]]) -> tuple[tuple[Value, ...], ...]:
    return tuple(tuple(row) for row in rows)


def report_from_dict(data: dict[str, Any]) -> Report:
    """The Report that `Report.to_dict()` gave (a stored report's model)."""
    tables = tuple(
        Table(t["key"], t["title"], t["sheet"], tuple(Column(**c) for c in t["columns"]),
              _tuple_rows(t["rows"]), t.get("note", ""))
        for t in data["tables"]
    )
    charts = tuple(
        Chart(c["key"], c["title"], c["kind"], c["x_title"], c["y_title"],
              tuple(Series(s["name"], tuple(s["x"]), tuple(s["y"]), tuple(s.get("ids", ())))
                    for s in c["series"]),
              tuple(c.get("categories", ())), bool(c.get("is_x_log")), str(c.get("caption", "")))
        for c in data.get("charts", ())
    )
    return Report(
        kind=data["kind"], subject_id=int(data["subject_id"]), title=data["title"],
        generated_at=data["generated_at"],
        summary=tuple(Figure(**f) for f in data["summary"]),
        findings=tuple(Finding(**f) for f in data["findings"]),
        tables=tables, charts=charts, caveats=tuple(data.get("caveats", ())),
        subtitle=data.get("subtitle", ""), notes=tuple(data.get("notes", ())),
    )


def as_number(value: Any) -> float | None:
    """A finite number from a document value; None for a boolean, a blank, text or NaN/inf."""
    if isinstance(value, bool) or value is None:
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None
