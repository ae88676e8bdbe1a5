"""Shared pieces of the price-file parsers: the canonical frame, errors and cell checks."""

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

import pandas as pd

from planner.core.purchase_options import PAYMENT_OPTION_CODES, PURCHASE_OPTION_CODES

# Canonical columns and units of a parsed price file.
#   provider            provider slug: aws, gcp, azure, lambda, vast
#   instance_type       provider's instance/VM/machine type name
#   accelerator         catalog accelerator slug (None: resolve from an existing instance type)
#   provider_accelerator_name  accelerator as the file names it
#   gpu_count           GPUs per instance (int; 0 = resolve from existing instance type)
#   vcpus, memory_gib   host size (float, NaN when the file does not say)
#   host_machine_type   GCP host VM the GPUs attach to ("" elsewhere)
#   region, zone        region code; zone of the median per-zone price ("" if none)
#   zone_low_usd_per_hour, zone_high_usd_per_hour  cheapest and dearest zone (NaN if none)
#   purchase_option     one of PURCHASE_OPTIONS
#   payment_option      "", no_upfront, partial_upfront, all_upfront (commitments)
#   offering_class      "", standard, convertible (AWS reserved instances)
#   usd_per_hour        USD per instance-hour (float, >= 0); for commitments the effective
#                       rate: hourly fee + upfront / (8,760 h x years)
#   upfront_usd         paid at purchase per instance for the term (NaN: not published)
#   recurring_usd_per_hour  the hourly fee besides the upfront (NaN: not published)
#   is_estimated        True when the file says the price is not a list price
#   as_of               datetime.date the price was observed or published
#   is_derived          True when computed from a discount level rather than listed
#   derivation_basis    how a derived price was computed ("" when listed)
#   line                1-based line (or item index) in the source file, for messages
CANONICAL_COLUMNS = [
    "provider",
    "instance_type",
    "accelerator",
    "provider_accelerator_name",
    "gpu_count",
    "vcpus",
    "memory_gib",
    "host_machine_type",
    "region",
    "zone",
    "zone_low_usd_per_hour",
    "zone_high_usd_per_hour",
    "purchase_option",
    "payment_option",
    "offering_class",
    "usd_per_hour",
    "upfront_usd",
    "recurring_usd_per_hour",
    "as_of",
    "is_derived",
    "derivation_basis",
    "is_estimated",
    "line",
]
PAYMENT_OPTIONS = PAYMENT_OPTION_CODES
# Bounds of a price cell: USD per instance-hour, and USD paid upfront for a whole term.
MAX_USD_PER_HOUR = 100_000.0
MAX_UPFRONT_USD = 1e9
OFFERING_CLASSES = ("", "standard", "convertible")
# Bound of a host spec cell (vCPUs, GiB of memory, GPUs): no instance has ten million.
MAX_SPEC = 1e7

PURCHASE_OPTIONS = PURCHASE_OPTION_CODES


@dataclass(frozen=True)
class PriceFileError:
    """One problem in a price file, located by file, line and field."""

    file: str
    line: int | None
    field: str
    message: str

    def __str__(self) -> str:
        where = f"{self.file}, line {self.line}" if self.line is not None else self.file
        return f"{where}, field '{self.field}': {self.message}"


class PriceFileErrors(ValueError):  # noqa: N818 (a collection of errors)
    """Raised by a parser when a file cannot be imported; carries every error found."""

    def __init__(self, errors: list[PriceFileError]) -> None:
        self.errors = errors
        shown = "\n".join(str(e) for e in errors[:20])
        more = f"\n... and {len(errors) - 20} more" if len(errors) > 20 else ""
        super().__init__(f"{len(errors)} error(s):\n{shown}{more}")


@dataclass(frozen=True)
class ParsedPrices:
    """A parser's output: canonical rows plus what was left out and why."""

    frame: pd.DataFrame
    skipped: Mapping[str, int] = field(default_factory=dict)


class RowChecker:
    """Collects cell errors while a parser walks a file."""

    def __init__(self, path: Path | str) -> None:
        self.file = Path(path).name
        self.errors: list[PriceFileError] = []

    def error(self, line: int | None, field_name: str, message: str) -> None:
        self.errors.append(PriceFileError(self.file, line, field_name, message))

    def price(self, value: Any, line: int | None, field_name: str,
              maximum: float = MAX_USD_PER_HOUR) -> float | None:
        """A price cell as float; None when empty; an error when non-numeric, negative or
        above `maximum` (by default the hourly ceiling: no instance costs $100,000 an hour,
        and the column holds at most 8 integer digits)."""
        if value is None or (isinstance(value, float) and math.isnan(value)):
            return None
        text = str(value).strip()
        if text == "":
            return None
        try:
            number = float(text)
        except ValueError:
            self.error(line, field_name, f"price {text!r} is not a number")
            return None
        if math.isnan(number) or math.isinf(number):
            self.error(line, field_name, f"price {text!r} is not a finite number")
            return None
        if number < 0:
            self.error(line, field_name, f"price {text!r} is negative")
            return None
        if number > maximum:
            self.error(line, field_name, f"price {text!r} is above the {maximum:,.0f} USD bound")
            return None
        return number

    def number(self, value: Any, line: int | None, field_name: str) -> float:
        """An optional numeric spec cell; NaN when empty; an error when not a finite number
        from 0 to MAX_SPEC."""
        if value is None or str(value).strip() in ("", "nan", "NaN"):
            return math.nan
        try:
            number = float(value)
        except (ValueError, TypeError):
            self.error(line, field_name, f"{value!r} is not a number")
            return math.nan
        if not math.isfinite(number) or number < 0 or number > MAX_SPEC:
            self.error(line, field_name, f"{value!r} is not a number from 0 to {MAX_SPEC:g}")
            return math.nan
        return number

    def raise_if_any(self) -> None:
        if self.errors:
            raise PriceFileErrors(self.errors)


def check_columns(
    checker: RowChecker, found: Iterable[str], required: set[str], optional: set[str]
) -> None:
    """Unknown or missing columns are errors on line 1 (the header)."""
    columns = list(found)
    for name in columns:
        if name not in required and name not in optional:
            checker.error(1, name, "unknown column")
    for name in sorted(required - set(columns)):
        checker.error(1, name, "required column is missing")
    checker.raise_if_any()


def read_csv_text(checker: RowChecker, path: Path | str) -> pd.DataFrame:
    """Read a CSV as strings so that each cell can be checked with its line number."""
    try:
        return pd.read_csv(path, dtype=str, keep_default_na=False)
    except (pd.errors.ParserError, UnicodeDecodeError, pd.errors.EmptyDataError) as exc:
        # pandas names the offending line only in its message ("... in line 3, saw 12").
        found = re.search(r"\bline (\d+)", str(exc))
        checker.error(int(found.group(1)) if found else None, "(file)",
                      f"not a readable CSV file: {exc}")
        checker.raise_if_any()
        raise AssertionError("unreachable") from exc


def require_as_of(checker: RowChecker, as_of: date | None, fmt: str) -> date:
    if as_of is None:
        checker.error(None, "as_of", f"{fmt} files carry no date: pass --as-of YYYY-MM-DD")
        checker.raise_if_any()
        raise AssertionError("unreachable")
    return as_of


# Text columns and the longest value the database keeps (pricing/models.py).
TEXT_LIMITS = {
    "provider": 32, "instance_type": 96, "provider_accelerator_name": 64,
    "host_machine_type": 64, "region": 64, "zone": 64, "derivation_basis": 2000,
}


def check_text(checker: RowChecker, rows: list[dict[str, Any]]) -> None:
    """Every text cell a row carries is a string a database column can store: no NUL (which
    PostgreSQL refuses), no longer than its column; errors name the row's line and the field."""
    for row in rows:
        for name, limit in TEXT_LIMITS.items():
            value = row.get(name)
            if value is None or value == "":
                continue
            if not isinstance(value, str):
                checker.error(row.get("line"), name, f"{value!r} is not text")
            elif "\x00" in value:
                checker.error(row.get("line"), name, "contains a NUL character")
            elif len(value) > limit:
                checker.error(row.get("line"), name, f"longer than {limit} characters")
    checker.raise_if_any()


def to_frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    frame = pd.DataFrame(rows, columns=CANONICAL_COLUMNS)
    if frame.empty:
        return frame
    frame["gpu_count"] = frame["gpu_count"].astype(int)
    frame["usd_per_hour"] = frame["usd_per_hour"].astype(float)
    for name in ("payment_option", "offering_class", "zone", "derivation_basis"):
        frame[name] = frame[name].fillna("")
    frame["is_estimated"] = frame["is_estimated"].fillna(False).astype(bool)
    return frame


def base_row(**values: Any) -> dict[str, Any]:
    row: dict[str, Any] = {
        "accelerator": None,
        "provider_accelerator_name": "",
        "gpu_count": 0,
        "vcpus": math.nan,
        "memory_gib": math.nan,
        "host_machine_type": "",
        "zone": "",
        "zone_low_usd_per_hour": math.nan,
        "zone_high_usd_per_hour": math.nan,
        "payment_option": "",
        "offering_class": "",
        "upfront_usd": math.nan,
        "recurring_usd_per_hour": math.nan,
        "is_derived": False,
        "derivation_basis": "",
        "is_estimated": False,
    }
    row.update(values)
    return row
