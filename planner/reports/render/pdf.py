"""The report as PDF: the print HTML (SVG charts) laid out on A4 by WeasyPrint.

WeasyPrint needs Pango (libpango-1.0-0, libpangoft2-1.0-0) and a font (fonts-dejavu-core);
when it cannot load, `pdf_missing()` says what is missing and the other formats still work.
"""

from functools import lru_cache

from planner.reports.core.model import Report
from planner.reports.render.html import report_html

INSTALL_HINT = ("install it with `apt-get install libpango-1.0-0 libpangoft2-1.0-0 "
                "fonts-dejavu-core` and `pip install -r requirements.txt`")


class PdfUnavailableError(RuntimeError):
    """WeasyPrint (or a library it loads) is missing; the message says which."""


@lru_cache(maxsize=1)
def pdf_missing() -> str:
    """Empty when PDF export works, else what is missing and how to install it."""
    try:
        import weasyprint  # noqa: F401
    except ImportError as exc:
        return f"PDF export needs the weasyprint package ({exc}); {INSTALL_HINT}"
    except OSError as exc:
        # cffi raises OSError naming the shared library it could not open.
        return (f"PDF export needs a system library WeasyPrint could not load ({exc}); "
                f"{INSTALL_HINT}")
    return ""


def report_pdf(report: Report) -> bytes:
    """A4 landscape PDF: summary first, charts as vector SVG, tables, page numbers and date."""
    missing = pdf_missing()
    if missing:
        raise PdfUnavailableError(missing)
    import weasyprint

    html = report_html(report, is_interactive=False)
    document: bytes = weasyprint.HTML(string=html, base_url=None).write_pdf()
    return document
