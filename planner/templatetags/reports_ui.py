"""Template tags of the report exports: whether the PDF can be rendered here."""

from django import template

from planner.reports.render.pdf import pdf_missing

register = template.Library()


@register.simple_tag
def report_pdf_missing() -> str:
    """Empty when PDF export works, else what is missing (the export box shows it)."""
    return pdf_missing()
