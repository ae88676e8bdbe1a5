"""The report as an XLSX workbook: a summary sheet, then one sheet per table.

Numbers are stored as numbers (units in the headers), header rows are frozen, widths set,
and every text cell is inert (no spreadsheet runs it as a formula).
"""

import io
import re
from datetime import date, datetime
from typing import Any

from openpyxl import Workbook
from openpyxl.styles import Alignment, Font
from openpyxl.utils import get_column_letter
from openpyxl.worksheet.worksheet import Worksheet

from planner.core.spreadsheet import inert
from planner.reports.core.model import Report, Table

BOLD = Font(bold=True)
MAX_WIDTH = 60


def _number_format(digits: int) -> str:
    if digits < 0:  # as many decimals as the number has
        return "General"
    return "#,##0" if digits == 0 else "#,##0." + "0" * min(digits, 6)


def _append(sheet: Worksheet, values: list[Any], *, is_header: bool = False) -> None:
    sheet.append([inert(v) for v in values])
    if is_header:
        for cell in sheet[sheet.max_row]:
            cell.font = BOLD


def _fit_widths(sheet: Worksheet, minimum: int = 8) -> None:
    widths: dict[int, int] = {}
    for row in sheet.iter_rows():
        for cell in row:
            if cell.value is not None:
                length = len(f"{cell.value:,.2f}" if isinstance(cell.value, float)
                             else str(cell.value))
                widths[cell.column] = max(widths.get(cell.column, minimum), length + 2)
    for column, width in widths.items():
        sheet.column_dimensions[get_column_letter(column)].width = min(width, MAX_WIDTH)


def _summary_sheet(sheet: Worksheet, report: Report) -> None:
    sheet.title = "Summary"
    _append(sheet, ["Item", "Value", "Unit"], is_header=True)
    sheet.freeze_panes = "A2"
    _append(sheet, ["Report", report.title, ""])
    _append(sheet, ["Scenario", report.subtitle, ""])
    _append(sheet, ["Generated", report.generated_at, ""])
    for figure in report.summary:
        _append(sheet, [figure.label, figure.value, figure.unit])
        if isinstance(figure.value, int | float):
            sheet.cell(sheet.max_row, 2).number_format = _number_format(figure.digits)
    for finding in report.findings:
        _append(sheet, [finding.title, finding.choice, ""])
        _append(sheet, ["Why", finding.why, ""])
        sheet.cell(sheet.max_row, 2).alignment = Alignment(wrap_text=True, vertical="top")
    for caveat in report.caveats:
        _append(sheet, ["Caveat", caveat, ""])
        sheet.cell(sheet.max_row, 2).alignment = Alignment(wrap_text=True, vertical="top")
    _fit_widths(sheet)


# ISO dates and hours ("2024-01-01", "2024-01-01T05:00:00+00:00") become date cells.
ISO_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")
ISO_HOUR = re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2})?(\+00:00|Z)?")


def _when(value: Any) -> date | datetime | None:
    """A date or UTC timestamp written as ISO text, as a (naive, UTC) date or datetime."""
    if not isinstance(value, str):
        return None
    if ISO_DAY.fullmatch(value):
        return date.fromisoformat(value)
    if ISO_HOUR.fullmatch(value):
        return datetime.fromisoformat(value.replace("Z", "+00:00")).replace(tzinfo=None)
    return None


def _table_sheet(sheet: Worksheet, table: Table) -> None:
    _append(sheet, [c.header for c in table.columns], is_header=True)
    sheet.freeze_panes = "A2"
    for row in table.rows:
        _append(sheet, list(row))
    for index, column in enumerate(table.columns, start=1):
        number_format = _number_format(column.digits)
        for (cell,) in sheet.iter_rows(min_row=2, min_col=index, max_col=index):
            when = _when(cell.value)
            if when is not None:
                cell.value = when
                cell.number_format = ("yyyy-mm-dd hh:mm" if isinstance(when, datetime)
                                      else "yyyy-mm-dd")
            elif isinstance(cell.value, int | float):
                cell.number_format = number_format
    _fit_widths(sheet)


CHART_SHEET = "Chart data"


def _chart_sheet(sheet: Worksheet, report: Report) -> None:
    """Every chart's points: chart, series, category, x, y, and the option (row) each point
    is, so the workbook charts the same options as the page and the PDF."""
    _append(sheet, ["Chart", "Series", "Category", "X", "Y", "Option row", "Charted"],
            is_header=True)
    sheet.freeze_panes = "A2"
    for chart in report.charts:
        for series in chart.series:
            ids: tuple[int | None, ...] = series.ids or (None,) * len(series.x)
            for x, y, row in zip(series.x, series.y, ids, strict=True):
                category = (chart.categories[int(x)] if chart.categories
                            and 0 <= int(x) < len(chart.categories) else "")
                _append(sheet, [chart.title, series.name, category, x, y, row, chart.caption])
    _fit_widths(sheet)


def report_xlsx(report: Report) -> bytes:
    """The workbook's bytes (Summary, one sheet per table in report order, then the charts'
    data)."""
    book = Workbook()
    _summary_sheet(book.active, report)
    for table in report.tables:
        _table_sheet(book.create_sheet(table.sheet), table)
    if report.charts:
        _chart_sheet(book.create_sheet(CHART_SHEET), report)
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()
