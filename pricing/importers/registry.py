"""The import formats by their command-line name."""

from collections.abc import Callable
from datetime import date
from importlib import import_module
from pathlib import Path

from pricing.importers.common import ParsedPrices

Parser = Callable[..., ParsedPrices]

FORMATS = {
    "skypilot": "pricing.importers.skypilot",
    "vantage": "pricing.importers.vantage",
    "cyclenerd": "pricing.importers.cyclenerd",
    "aws-price-list": "pricing.importers.aws_price_list",
    "gcp-billing-catalog": "pricing.importers.gcp_billing_catalog",
    "azure-retail": "pricing.importers.azure_retail",
    "price-table": "pricing.importers.price_table",
}


def parse_file(
    fmt: str, path: Path | str, *, as_of: date | None = None, provider: str | None = None
) -> ParsedPrices:
    """Parse `path` with the parser registered for `fmt` (a key of FORMATS)."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
    parser: Parser = import_module(FORMATS[fmt]).parse
    return parser(path, as_of=as_of, provider=provider)
