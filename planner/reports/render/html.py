"""The report as HTML: a print document for WeasyPrint (SVG charts) or one self-contained
interactive file (Plotly inlined from the pinned package). Both from one template."""

from pathlib import Path
from typing import Any

from django.contrib.staticfiles import finders
from django.core.exceptions import ImproperlyConfigured
from django.template.loader import render_to_string
from django.utils.html import json_script
from django.utils.safestring import SafeString, mark_safe

from planner.core.formatting import series_style
from planner.reports.core.model import Chart, Report
from planner.reports.core.svg import chart_svg
from planner.reports.core.text import figure_text, printed_columns, printed_rows

TEMPLATE = "planner/reports/report.html"
# The PDF prints the first rows of long tables; the XLSX and CSV carry every row.
PRINTED_ROWS = 30


def plotly_figure(chart: Chart) -> dict[str, Any]:
    """A Plotly figure (plain JSON) of a report chart: same data, same axis titles."""
    mode = {"scatter": "markers", "line": "lines+markers"}.get(chart.kind)
    data = []
    # A colour (and a marker shape) of its own per series: Plotly's ten colours repeated
    # on the throughput chart's sixteen GPU models.
    for index, series in enumerate(chart.series):
        colour, symbol = series_style(index)
        if chart.kind == "bar":
            x: list[Any] = [chart.categories[int(i)] for i in series.x]
            data.append({"type": "bar", "name": series.name, "x": x, "y": list(series.y),
                         "marker": {"color": colour}})
        else:
            data.append({"type": "scatter", "mode": mode, "name": series.name,
                         "x": list(series.x), "y": list(series.y),
                         "marker": {"color": colour, "symbol": symbol},
                         "line": {"color": colour}})
    layout = {
        "title": {"text": chart.title},
        "xaxis": {"title": {"text": chart.x_title}, "type": "category" if chart.kind == "bar"
                  else "log" if chart.is_x_log else "-"},
        "yaxis": {"title": {"text": chart.y_title}},
        "barmode": "stack", "margin": {"t": 50}, "height": 420,
    }
    return {"data": data, "layout": layout}


def _tables(report: Report, limit: int | None) -> list[dict[str, Any]]:
    return [{
        "table": table,
        "headers": [c.header for _, c in printed_columns(table)],
        "rows": printed_rows(table, limit),
        "is_cut": limit is not None and len(table.rows) > limit,
    } for table in report.tables]


def _charts(report: Report, *, is_interactive: bool) -> list[tuple[SafeString, str]]:
    """Each chart's markup with its caption (which options it draws)."""
    if is_interactive:
        return [(json_script(plotly_figure(c), f"report-figure-{i}"), c.caption)
                for i, c in enumerate(report.charts)]
    # chart_svg escapes every text it writes, so the markup is safe to insert.
    return [(mark_safe(chart_svg(c)), c.caption)  # noqa: S308  # nosec B308 B703
            for c in report.charts]


def css_string(text: str) -> str:
    """Text as the inside of a CSS string: anything but letters, digits and spaces escaped."""
    return "".join(c if c.isalnum() or c in " .,:·-" else f"\\{ord(c):x} " for c in text)


def report_html(report: Report, *, is_interactive: bool) -> str:
    """The report page: interactive (Plotly, every row) or for print (SVG, first rows)."""
    context = {
        "report": report,
        "figures": [(f.label, figure_text(f)) for f in report.summary],
        "tables": _tables(report, None if is_interactive else PRINTED_ROWS),
        "charts": _charts(report, is_interactive=is_interactive),
        "is_interactive": is_interactive,
        # Every character but letters, digits and a few marks is escaped.
        "footer_css": mark_safe(css_string(  # noqa: S308  # nosec B308 B703
            f"GPU Planner · {report.title} · generated {report.generated_at[:16]} UTC")),
        "printed_rows": PRINTED_ROWS,
        # The vendored plotly.min.js of the pinned package, not user input.
        "plotly_js": mark_safe(_plotly_js()) if is_interactive else "",  # noqa: S308  # nosec B308 B703
        # static/js/figures.js of this code base, not user input.
        "figures_js": mark_safe(_figures_js()) if is_interactive else "",  # noqa: S308  # nosec B308 B703
    }
    return render_to_string(TEMPLATE, context)


def _plotly_js() -> str:
    # The bundle shipped inside the pinned plotly package (STYLE.md §8): no CDN, offline.
    from plotly.offline import get_plotlyjs

    return str(get_plotlyjs()).replace("</script", "<\\/script")




def _figures_js() -> str:
    # The script that draws the pages' charts, inlined so the file still opens offline.
    path = finders.find("js/figures.js")
    if not path:
        raise ImproperlyConfigured("static/js/figures.js is missing")
    return Path(str(path)).read_text(encoding="utf-8").replace("</script", "<\\/script")
