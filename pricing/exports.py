"""The prices explorer's current view (its filters and sort, every page) as CSV or XLSX.

One table of export columns feeds both: numbers stay numbers (prices to 4 decimals, upfront to
cents, discounts to 0.1 %), the as-of date is a date cell in XLSX, and every text cell goes
through `inert`, so no spreadsheet runs it as a formula.
"""

import csv
import io
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import date
from typing import Any

from openpyxl import Workbook
from openpyxl.styles import Font
from openpyxl.utils import get_column_letter

from planner.core.spreadsheet import inert
from pricing import selectors
from pricing.models import Price

EXPORT_BATCH = 500  # prices per discount lookup (price_rows) while streaming


@dataclass(frozen=True)
class ExportColumn:
    header: str
    value: Callable[[selectors.PriceRow, date], Any]
    number_format: str = ""  # XLSX format of a numeric or date column
    width: int = 14


def _round(value: float | None, digits: int) -> float | None:
    return None if value is None else round(float(value), digits)


EXPORT_COLUMNS = (
    ExportColumn("Provider", lambda r, t: r.price.instance_type.provider.name),
    ExportColumn("Region", lambda r, t: r.price.region.code),
    ExportColumn("Zone", lambda r, t: r.price.zone),
    ExportColumn("Instance type", lambda r, t: r.price.instance_type.name, width=22),
    ExportColumn("GPU", lambda r, t: r.price.instance_type.accelerator.name, width=18),
    ExportColumn("GPUs (count)", lambda r, t: r.price.instance_type.gpu_count, "0"),
    ExportColumn("Purchase option", lambda r, t: r.price.get_purchase_option_display(),
                 width=20),
    ExportColumn("Payment option", lambda r, t: r.price.get_payment_option_display()),
    ExportColumn("Price (USD/instance-hour)", lambda r, t: _round(r.price.usd_per_hour, 4),
                 "#,##0.0000"),
    ExportColumn("Price (USD/GPU-hour)", lambda r, t: _round(r.price.usd_per_gpu_hour, 4),
                 "#,##0.0000"),
    ExportColumn("Upfront (USD per instance)", lambda r, t: _round(r.price.upfront_usd, 2),
                 "#,##0.00"),
    ExportColumn("Discount vs on-demand (%)", lambda r, t: _round(r.discount_pct, 1), "0.0"),
    ExportColumn("Basis", lambda r, t: r.price.basis),
    ExportColumn("As of", lambda r, t: r.price.as_of, "yyyy-mm-dd", width=12),
    ExportColumn("Age (days)", lambda r, t: r.price.age_days(t), "0"),
    ExportColumn("Is current", lambda r, t: "yes" if r.price.is_current else "no"),
    ExportColumn("Source", lambda r, t: r.price.source.name, width=36),
)
HEADER = tuple(c.header for c in EXPORT_COLUMNS)


def _rows(prices: Iterable[Price], today: date) -> Iterator[list[Any]]:
    batch: list[Price] = []
    for price in prices:
        batch.append(price)
        if len(batch) == EXPORT_BATCH:
            yield from _cells(batch, today)
            batch = []
    yield from _cells(batch, today)


def _cells(batch: list[Price], today: date) -> Iterator[list[Any]]:
    for row in selectors.price_rows(batch):
        yield [inert(c) if not isinstance(c, date) else c
               for c in (column.value(row, today) for column in EXPORT_COLUMNS)]


def prices_csv(prices: Iterable[Price], today: date) -> bytes:
    """UTF-8 CSV with a byte-order mark (Excel reads it as UTF-8), dates as ISO text."""
    out = io.StringIO()
    out.write("\ufeff")
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(HEADER)
    for cells in _rows(prices, today):
        writer.writerow(["" if c is None else c.isoformat() if isinstance(c, date) else c
                         for c in cells])
    return out.getvalue().encode()


def prices_xlsx(prices: Iterable[Price], today: date, *, title: str) -> bytes:
    """One sheet: a bold, frozen header row with units, then the prices; filters on."""
    book = Workbook()
    sheet = book.active
    assert sheet is not None
    sheet.title = "Prices"
    sheet.append(list(HEADER))
    for cell in sheet[1]:
        cell.font = Font(bold=True)
    for cells in _rows(prices, today):
        sheet.append(cells)
    for index, column in enumerate(EXPORT_COLUMNS, start=1):
        letter = get_column_letter(index)
        sheet.column_dimensions[letter].width = max(column.width, len(column.header) + 2)
        if column.number_format:
            for (cell,) in sheet.iter_rows(min_row=2, min_col=index, max_col=index):
                cell.number_format = column.number_format
    sheet.freeze_panes = "A2"
    sheet.auto_filter.ref = sheet.dimensions
    book.properties.title = title
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()
