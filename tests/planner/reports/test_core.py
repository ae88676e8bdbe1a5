"""The report model and its Django-free renderers: inert cells, CSV, SVG charts, round trip."""

import csv
import io
import re

import pytest

from planner.core.spreadsheet import inert
from planner.reports.core import svg as svg_module
from planner.reports.core.cells import table_csv
from planner.reports.core.model import (
    Chart,
    Column,
    Figure,
    Report,
    Series,
    Table,
    report_from_dict,
)
from planner.reports.core.svg import chart_svg, nice_ticks
from planner.reports.core.text import figure_text

HYPERLINK = '=HYPERLINK("http://example.com","x")'


@pytest.mark.parametrize(("value", "expected"), [
    (HYPERLINK, "'" + HYPERLINK), ("+1+2", "'+1+2"), ("-2+3", "'-2+3"), ("@SUM(A1)", "'@SUM(A1)"),
    ("\tx", "'\tx"), ("\rx", "'\rx"), ("plain", "plain"), (-5.0, -5.0), (3, 3),
    (float("nan"), None), (None, None),
    # control characters an XLSX cell cannot hold are dropped (openpyxl refused the file)
    ("a\x00b\x01c\x0bd\x1f", "abcd"), ("\x01=1+2", "'=1+2"), ("two\nlines\tok", "two\nlines\tok"),
])
def test_text_a_spreadsheet_would_run_is_quoted(value: object, expected: object) -> None:
    assert inert(value) == expected  # type: ignore[arg-type]


def _table() -> Table:
    return Table("jobs", "Jobs", "Jobs", (Column("name", "Job"), Column("gpus", "GPUs", "count")),
                 ((HYPERLINK, 8.0), ("train", -1.5)))


def test_csv_has_units_in_headers_and_inert_cells() -> None:
    rows = list(csv.reader(io.StringIO(table_csv(_table()))))
    assert rows[0] == ["Job", "GPUs (count)"]
    assert rows[1] == ["'" + HYPERLINK, "8"]
    assert rows[2] == ["train", "-1.5"]


def test_a_row_of_the_wrong_width_is_refused() -> None:
    with pytest.raises(ValueError, match="jobs: a row has 1 cells"):
        Table("jobs", "Jobs", "Jobs", (Column("a", "A"), Column("b", "B")), (("x",),))


def test_svg_chart_has_titled_axes_and_escaped_text() -> None:
    chart = Chart("c", "Cost <by> option", "scatter", "Time (days)", "Total cost (USD)",
                  (Series("spot & co", (1.0, 2.0), (100.0, 300.0)),))
    svg = chart_svg(chart)
    assert "Time (days)" in svg and "Total cost (USD)" in svg
    assert "Cost &lt;by&gt; option" in svg and "spot &amp; co" in svg
    assert "<script" not in svg


def test_ticks_are_round_and_cover_the_range() -> None:
    assert nice_ticks(0, 380_000) == [0, 100_000, 200_000, 300_000, 400_000]
    ticks = nice_ticks(0.3, 27.6)
    assert ticks[0] <= 0.3 and ticks[-1] >= 27.6


def test_report_survives_its_json_round_trip() -> None:
    report = Report(kind="plan", subject_id=3, title="t", generated_at="2026-12-01T00:00:00",
                    summary=(), findings=(), tables=(_table(),),
                    charts=(Chart("c", "c", "bar", "x", "y (USD)", (Series("a", (0.0,), (1.0,)),),
                                  ("#1",)),))
    assert report_from_dict(report.to_dict()) == report


def test_a_log_axis_keeps_every_point_inside_the_frame() -> None:
    chart = Chart("d", "durations", "line", "Job duration (hours, log scale)", "Jobs (count)",
                  (Series("Jobs", (1.0, 4.0, 15.5), (3.0, 1.0, 4.0)),), is_x_log=True)
    svg = chart_svg(chart)
    xs = [float(x) for x in re.findall(r'<circle cx="([\d.]+)"', svg)]
    assert xs and max(xs) <= svg_module.WIDTH - svg_module.RIGHT + 0.05
    assert min(xs) >= svg_module.LEFT - 0.05
    assert ">16<" in svg  # a tick at or above the largest value
    assert svg_module.log_ticks(0.01, 5000.0) == [0.01, 0.1, 1.0, 10.0, 100.0, 1000.0, 10000.0]
    assert svg_module.log_ticks(1.0, 1024.0)[-1] == 1024.0


def test_many_category_labels_are_slanted_and_cut() -> None:
    names = tuple(f"team-with-a-long-name-{i}" for i in range(12))
    chart = Chart("t", "teams", "bar", "Team", "GPU-hours (GPU-hours)",
                  (Series("GPU-hours", tuple(float(i) for i in range(12)),
                          tuple(1.0 for _ in range(12))),), names)
    svg = chart_svg(chart)
    assert svg.count('transform="rotate(-30') == 12
    assert "team-wit…" in svg and "team-with-a-long-name-0" not in svg


@pytest.mark.parametrize(("figure", "text"), [
    (Figure("Savings", 7.84, "%", 1), "7.8%"),
    (Figure("Jobs burst", 1107, "count"), "1,107"),
    (Figure("Pool price", 1.275, "USD/GPU-hour", 3), "$1.27/GPU-hour"),
    (Figure("Total", 1234567.8, "USD"), "$1,234,568"),
    (Figure("Pool utilisation", None, "%", 1), "-"),
    (Figure("Time", 12.25, "days", 1), "12.2 days"),
])
def test_key_figures_read_as_the_pages_write_them(figure: Figure, text: str) -> None:
    assert figure_text(figure) == text
