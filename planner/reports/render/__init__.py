"""Renderers of the report model: XLSX (openpyxl), PDF (WeasyPrint) and self-contained HTML."""
