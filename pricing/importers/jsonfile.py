"""Reading JSON price files with errors that point at a line: shared by the API-format parsers."""

import json
import re
from collections.abc import Callable, Iterable, Mapping
from datetime import date
from pathlib import Path
from typing import Any, TypeVar

from pricing.importers.common import PriceFileErrors, RowChecker

T = TypeVar("T")
# What walking an item of the wrong shape raises: a list or null where an object belongs, a
# number too large for an integer, a string where a number belongs.
SHAPE_ERRORS = (AttributeError, TypeError, KeyError, IndexError, OverflowError, ValueError)

_WHITESPACE = re.compile(r"\s*")
_OBJECT_KEY = re.compile(r'"([^"\\]{1,200})"\s*:\s*\{')


def load_json(checker: RowChecker, path: Path | str) -> tuple[Any, str]:
    """The decoded document and its text; malformed JSON is one error at the decoder's line."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        checker.error(None, "(file)", f"not UTF-8 text: {exc}")
        checker.raise_if_any()
        raise AssertionError("unreachable") from exc
    try:
        return json.loads(text), text
    except json.JSONDecodeError as exc:
        checker.error(exc.lineno, "(file)", f"malformed JSON: {exc.msg} (column {exc.colno})")
        checker.raise_if_any()
        raise AssertionError("unreachable") from exc
    except RecursionError as exc:
        checker.error(None, "(file)", "malformed JSON: nested too deeply")
        checker.raise_if_any()
        raise AssertionError("unreachable") from exc


def require_keys(
    checker: RowChecker, obj: Any, keys: Iterable[str], line: int | None, where: str
) -> bool:
    """Record one error per missing key of `obj`; False when `obj` is unusable."""
    if not isinstance(obj, Mapping):
        checker.error(line, where, f"{where} is not a JSON object")
        return False
    missing = [key for key in keys if key not in obj]
    for key in missing:
        checker.error(line, key, f"{where}: required key is missing")
    return not missing


def require_container(checker: RowChecker, document: Mapping[str, Any], key: str,
                      kind: type[list[Any]] | type[dict[str, Any]]) -> None:
    """The document's `key` must hold a JSON array (list) or object (dict)."""
    if not isinstance(document[key], kind):
        name = "array" if kind is list else "object"
        checker.error(1, key, f"is not a JSON {name}")
    checker.raise_if_any()


def guarded(checker: RowChecker, line: int | None, where: str, build: Callable[[], T]
            ) -> T | None:
    """`build()` for one item; an item of an unexpected shape is one error at its line (and
    None) instead of a crash."""
    try:
        return build()
    except PriceFileErrors:
        raise
    except SHAPE_ERRORS as exc:
        checker.error(line, where, f"not in the documented shape ({type(exc).__name__}: {exc})")
        return None


def object_key_lines(text: str) -> dict[str, int]:
    """Line where each key that opens a JSON object first appears, in one pass over the text."""
    lines: dict[str, int] = {}
    line, pos = 1, 0
    for match in _OBJECT_KEY.finditer(text):
        line += text.count("\n", pos, match.start())
        pos = match.start()
        lines.setdefault(match.group(1), line)
    return lines


def array_item_lines(text: str, key: str, count: int) -> list[int] | None:
    """Start line of each element of the array under `"key":`, or None if it cannot be located.

    Walks the array with the decoder's `raw_decode`, so the lines are exact; a count that
    disagrees with the parsed document means the key was found in the wrong place.
    """
    match = re.search(rf'"{re.escape(key)}"\s*:\s*\[', text)
    if match is None:
        return None
    decoder = json.JSONDecoder()
    lines: list[int] = []
    pos = match.end()
    try:
        while True:
            pos = _skip(text, pos)
            if text[pos] == "]":
                break
            lines.append(text.count("\n", 0, pos) + 1)
            _, pos = decoder.raw_decode(text, pos)
            pos = _skip(text, pos)
            if text[pos] == ",":
                pos += 1
    except (json.JSONDecodeError, IndexError):
        return None
    return lines if len(lines) == count else None


def _skip(text: str, pos: int) -> int:
    match = _WHITESPACE.match(text, pos)
    return match.end() if match else pos


def iso_date(checker: RowChecker, value: Any, line: int | None, field_name: str) -> date | None:
    """The date part of an ISO 8601 timestamp ("2024-05-28T20:35:22Z"); an error otherwise."""
    try:
        return date.fromisoformat(str(value)[:10])
    except ValueError:
        checker.error(line, field_name, f"{value!r} is not an ISO 8601 date")
        return None


def require_as_of_or(checker: RowChecker, day: date | None, field_name: str) -> date:
    """The as-of date; without --as-of or a date in the file the import cannot go on."""
    if day is None:
        checker.error(1, field_name, f"no usable {field_name} in the file: pass --as-of YYYY-MM-DD")
    checker.raise_if_any()
    assert day is not None
    return day


def count(skipped: dict[str, int], reason: str) -> None:
    skipped[reason] = skipped.get(reason, 0) + 1


def first_per_key(rows: list[dict[str, Any]], skipped: dict[str, int]) -> list[dict[str, Any]]:
    """One row per (instance, region, purchase option, payment option, offering class): the
    first; later ones are counted."""
    seen: set[tuple[str, str, str, str, str]] = set()
    kept = []
    for row in rows:
        key = (row["instance_type"], row["region"], row["purchase_option"],
               row.get("payment_option", ""), row.get("offering_class", ""))
        if key in seen:
            count(skipped, "duplicate price for the same instance, region and option")
            continue
        seen.add(key)
        kept.append(row)
    return kept
