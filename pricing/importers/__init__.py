"""Price-file parsers: each turns one provider format into a canonical DataFrame.

Every parser is a pure function `parse(path, *, as_of=None, provider=None) -> ParsedPrices`.
The frame has the columns of `CANONICAL_COLUMNS` (see `common.py`); saving is the job of
`pricing.services.prices_import`.
"""

from pricing.importers.common import (
    CANONICAL_COLUMNS,
    ParsedPrices,
    PriceFileError,
    PriceFileErrors,
)

__all__ = ["CANONICAL_COLUMNS", "ParsedPrices", "PriceFileError", "PriceFileErrors"]
