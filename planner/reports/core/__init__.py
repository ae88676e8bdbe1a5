"""The report model and its Django-free renderers (CSV, SVG charts) and builders."""

from planner.reports.core.model import (
    Chart,
    Column,
    Figure,
    Finding,
    Report,
    Series,
    Table,
    report_from_dict,
)

__all__ = [
    "Chart", "Column", "Figure", "Finding", "Report", "Series", "Table", "report_from_dict",
]
