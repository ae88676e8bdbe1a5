"""Hypothesis strategies for hostile uploads: random bytes, and CSV or JSON files that look
right but carry bad cells (NaN, inf, 1e308, negatives, NUL, bare CR, huge fields), missing or
junk headers, wrong encodings, truncation and gzip.

Shared by the property tests of every CSV parser and price importer. Each test keeps its
runs bounded (HOSTILE_SETTINGS) so the suite stays fast.
"""

from __future__ import annotations

import gzip
import json
import math
import os
from collections.abc import Sequence
from typing import Any

from hypothesis import HealthCheck, event, settings
from hypothesis import strategies as st

# Bounded runs: the examples per test (HOSTILE_EXAMPLES=1000 for a longer hunt) and a generous
# per-example deadline (a 200 KB field through pandas takes a while on a loaded 2-core machine).
HOSTILE_SETTINGS = settings(
    max_examples=int(os.environ.get("HOSTILE_EXAMPLES", "60")),
    deadline=5000,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                           HealthCheck.function_scoped_fixture],
)

HUGE_FIELD = "9" * 200_000  # over the csv module's 131,072-character field limit
HOSTILE_CELLS: tuple[str, ...] = (
    "", " ", "NaN", "nan", "-nan", "inf", "-inf", "Infinity", "1e308", "-1e308", "1e309",
    "1.7976931348623157e308", "-1", "-0", "0", "0.0", "1e-320", "9" * 400, "\x00", "a\x00b",
    "\r", "a\rb", '"', '"unclosed', 'x"y', "é", "\ufeff", "=1+2", "2024-13-45", "1,5",
    "0x10", "true", "None", "💥", "\t", "2024-01-01T00:00:00Z", "2100-01-01", "1970-01-01",
    "-99999999999999999999", "99999999999999999999", HUGE_FIELD,
)
ENCODINGS = ("utf-8", "utf-8-sig", "utf-16", "latin-1", "cp1252", "utf-32")
LINE_ENDS = ("\n", "\r\n", "\r")


def cells() -> st.SearchStrategy[str]:
    return st.one_of(
        st.sampled_from(HOSTILE_CELLS),
        st.text(max_size=12),
        st.floats(allow_nan=True, allow_infinity=True).map(repr),
        st.integers(min_value=-(2**80), max_value=2**80).map(str),
    )


@st.composite
def headers(draw: st.DrawFn, columns: Sequence[str]) -> list[str]:
    """The real columns, some dropped, reordered, repeated, renamed or mixed with junk."""
    kept = draw(st.lists(st.sampled_from(list(columns)), min_size=0,
                         max_size=len(columns) + 2)) if draw(st.booleans()) else list(columns)
    extra = draw(st.lists(cells(), max_size=2))
    return draw(st.permutations(kept + extra)) if draw(st.booleans()) else kept + extra


def _quote(cell: str, delimiter: str) -> str:
    if any(ch in cell for ch in (delimiter, '"', "\n", "\r")):
        return '"' + cell.replace('"', '""') + '"'
    return cell


@st.composite
def csv_texts(draw: st.DrawFn, columns: Sequence[str], good_rows: Sequence[Sequence[str]] = (),
              delimiter: str = ",", is_clean: bool = False) -> str:
    """A CSV: a (possibly broken) header, good rows with hostile cells put in, ragged rows.

    is_clean: the real header, the delimiter, quoting and good rows, at most one hostile cell,
    so that the property also meets files that parse (or fail on that one cell)."""
    if is_clean:  # distinct good rows (ids may have to be unique)
        shuffled = draw(st.permutations(list(good_rows)))
        rows = [list(row) for row in shuffled[: draw(st.integers(1, len(shuffled)))]]
        if draw(st.booleans()):  # one hostile cell in an otherwise good file
            row = draw(st.sampled_from(rows))
            row[draw(st.integers(0, len(row) - 1))] = draw(cells())
        return _join(draw, [list(columns), *rows], delimiter, is_quoting=True)
    header = draw(headers(columns))
    rows = []
    for _ in range(draw(st.integers(0, 5))):
        if good_rows and draw(st.booleans()):
            row = list(draw(st.sampled_from(list(good_rows))))
        else:
            row = draw(st.lists(cells(), min_size=0, max_size=len(header) + 2))
        for _ in range(draw(st.integers(0, 3))):
            if row:
                row[draw(st.integers(0, len(row) - 1))] = draw(cells())
        rows.append(row)
    sep = delimiter if draw(st.booleans()) else draw(st.sampled_from([",", ";", "\t", "|"]))
    return _join(draw, [header, *rows], sep, is_quoting=draw(st.booleans()))


def _join(draw: st.DrawFn, rows: list[list[str]], sep: str, *, is_quoting: bool) -> str:
    end = draw(st.sampled_from(LINE_ENDS))
    lines = [sep.join(_quote(c, sep) if is_quoting else c for c in row) for row in rows]
    return end.join(lines) + (end if draw(st.booleans()) else "")


@st.composite
def mangled(draw: st.DrawFn, text: str) -> bytes:
    """Text as bytes the way a wrong upload arrives: other encodings, BOMs, NUL, cut, gzip."""
    encoding = draw(st.sampled_from(ENCODINGS))
    data = text.encode(encoding, errors="replace")
    if data and draw(st.booleans()):
        where = draw(st.integers(0, len(data)))
        data = data[:where] + draw(st.sampled_from([b"\x00", b"\r", b"\xff\xfe", b"\x80"])) + \
            data[where:]
    if data and draw(st.integers(0, 4)) == 0:
        data = data[: draw(st.integers(0, len(data)))]
    if draw(st.integers(0, 5)) == 0:
        data = gzip.compress(data)
    return data


def hostile_csv_bytes(columns: Sequence[str],
                      good_rows: Sequence[Sequence[str]] = ()) -> st.SearchStrategy[bytes]:
    """Random bytes, or a CSV built on the real header and rows, then mangled."""
    strategies = [
        st.binary(max_size=600),
        csv_texts(columns, good_rows).flatmap(mangled),
        csv_texts(columns, good_rows).map(lambda text: text.encode("utf-8")),
    ]
    if good_rows:
        strategies.append(csv_texts(columns, good_rows, is_clean=True)
                          .map(lambda text: text.encode("utf-8")))
    return st.one_of(*strategies)


JSON_HOSTILE: tuple[Any, ...] = (
    None, True, False, 0, -1, -0.0, 1e308, -1e308, math.inf, -math.inf, math.nan, 2**70,
    "", "NaN", "Infinity", "1e308", "-5", "\x00", "💥", [], {}, [None], {"": None},
    "x" * 5000,
)


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix]
    if isinstance(node, dict):
        for key, value in node.items():
            found += _paths(value, (*prefix, key))
    elif isinstance(node, list):
        for index, value in enumerate(node[:6]):
            found += _paths(value, (*prefix, index))
    return found


def _replace(node: Any, path: tuple[Any, ...], value: Any) -> Any:
    if not path:
        return value
    head, *rest = path
    copy: Any = dict(node) if isinstance(node, dict) else list(node)
    copy[head] = _replace(node[head], tuple(rest), value)
    return copy


@st.composite
def mutated_json(draw: st.DrawFn, document: Any) -> bytes:
    """The sample document with a few values (or whole subtrees) replaced by hostile ones."""
    paths = _paths(document)
    for _ in range(draw(st.integers(1, 4))):
        path = draw(st.sampled_from(paths))
        try:
            document = _replace(document, path, draw(st.sampled_from(JSON_HOSTILE)))
        except (KeyError, IndexError, TypeError):
            continue  # an earlier replacement removed this path
    text = json.dumps(document, indent=draw(st.sampled_from([None, 1])))
    if draw(st.integers(0, 3)) == 0:
        return draw(mangled(text))
    return text.encode("utf-8")


def hostile_json_bytes(document: Any) -> st.SearchStrategy[bytes]:
    return st.one_of(st.binary(max_size=400), mutated_json(document))


def outcome(kind: str) -> None:
    """Count an outcome in Hypothesis' statistics (pytest --hypothesis-show-statistics)."""
    event(f"outcome: {kind}")
