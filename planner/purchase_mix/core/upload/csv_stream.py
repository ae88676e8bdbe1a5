"""Streaming CSV reader: encoding and delimiter detection, line-aligned chunks, line numbers.

Uses pyarrow.csv (allowed in planner/core for upload parsing, see planner/core/__init__.py).
Every value is read as a string; callers convert columns themselves so that a bad value
becomes a row-level error instead of failing the whole block.
Line numbers count physical lines (the header is line 1); a quoted value containing a
newline is not supported and shows up as a malformed row.
"""

from __future__ import annotations

import codecs
import csv
import io
import itertools
from collections.abc import Iterator
from dataclasses import dataclass
from typing import BinaryIO

import numpy as np
import pyarrow as pa
import pyarrow.csv as pa_csv

SAMPLE_BYTES = 64 * 1024
CHUNK_BYTES = 16 * 1024 * 1024
DELIMITERS = (",", ";", "|", "\t")


@dataclass(frozen=True)
class CsvLayout:
    encoding: str
    delimiter: str
    header: tuple[str, ...]


@dataclass(frozen=True)
class MalformedRow:
    line: int
    message: str


@dataclass(frozen=True)
class CsvChunk:
    """String columns named by the header, and the physical line of every row."""

    table: pa.Table
    line_numbers: np.ndarray
    malformed: tuple[MalformedRow, ...]


# Leading bytes of files that are not CSV text, and what each is in words.
FILE_SIGNATURES: tuple[tuple[bytes, str], ...] = (
    (b"\x1f\x8b", "gzip-compressed: decompress it (gunzip) and upload the CSV inside"),
    (b"PK\x03\x04", "a ZIP archive (or an Excel .xlsx workbook): extract the CSV, or save the "
                    "sheet as CSV, and upload that"),
    (b"BZh", "bzip2-compressed: decompress it and upload the CSV inside"),
    (b"\xfd7zXZ\x00", "xz-compressed: decompress it and upload the CSV inside"),
    (b"\x28\xb5\x2f\xfd", "zstd-compressed: decompress it and upload the CSV inside"),
    (b"7z\xbc\xaf\x27\x1c", "a 7-Zip archive: extract the CSV and upload that"),
    (b"\xd0\xcf\x11\xe0", "an Excel .xls workbook: save the sheet as CSV and upload that"),
    (b"PAR1", "a Parquet file: export it as CSV and upload that"),
    (b"%PDF", "a PDF document, not CSV text"),
)
# More control bytes than this share of the sample: binary, not text with a stray NUL.
BINARY_CONTROL_SHARE = 0.1


def describe_non_text(sample: bytes) -> str | None:
    """What a file that is not CSV text is, in words ("the file is gzip-compressed: ..."),
    from its first bytes; None for text (UTF-16 with a byte-order mark is text)."""
    for signature, words in FILE_SIGNATURES:
        if sample.startswith(signature):
            return f"the file is {words}"
    if sample.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)) or len(sample) < 2:
        return None
    even, odd = sample[0::2], sample[1::2]
    for half in (even, odd):
        if half.count(0) > 0.9 * len(half):
            return ("the file looks like UTF-16 text without a byte-order mark: save it as "
                    "UTF-8 (or UTF-16 with a byte-order mark) and upload it again")
    controls = sum(1 for byte in sample if byte < 32 and byte not in (9, 10, 13))
    if controls > BINARY_CONTROL_SHARE * len(sample):
        return (f"the file is binary ({controls:,} of its first {len(sample):,} bytes are "
                "control bytes), not CSV text: upload the job history as a CSV file")
    return None


def _refuse_non_text(sample: bytes) -> None:
    found = describe_non_text(sample)
    if found is not None:
        raise ValueError(found)


def detect_encoding(sample: bytes) -> str:
    """Return a codec name: BOM first, then strict UTF-8, then cp1252, then latin-1."""
    if sample.startswith(codecs.BOM_UTF8):
        return "utf-8-sig"
    if sample.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return "utf-16"
    try:
        codecs.getincrementaldecoder("utf-8")().decode(sample, final=False)
        return "utf-8"
    except UnicodeDecodeError:
        pass
    try:
        sample.decode("cp1252")
        return "cp1252"
    except UnicodeDecodeError:
        return "latin-1"


def detect_delimiter(text: str) -> str:
    """Pick the candidate that splits the header and the next lines into equal field counts."""
    lines = [line for line in text.splitlines()[:20] if line.strip()]
    if not lines:
        raise ValueError("the file is empty")
    try:
        dialect = csv.Sniffer().sniff("\n".join(lines), delimiters="".join(DELIMITERS))
        return str(dialect.delimiter)
    except csv.Error:
        counts = {delimiter: lines[0].count(delimiter) for delimiter in DELIMITERS}
        best = max(counts, key=lambda delimiter: counts[delimiter])
        return best if counts[best] > 0 else ","


class _ByteBudget:
    def __init__(self, stream: BinaryIO, max_bytes: int) -> None:
        self._stream = stream
        self._max_bytes = max_bytes
        self.bytes_read = 0

    def read(self, size: int) -> bytes:
        data = self._stream.read(size)
        if isinstance(data, str):
            raise ValueError("open the upload in binary mode")
        self.bytes_read += len(data)
        if self.bytes_read > self._max_bytes:
            raise ValueError(f"the file is larger than the {self._max_bytes}-byte limit")
        return data


def _utf8_blocks(first: bytes, source: _ByteBudget, encoding: str) -> Iterator[bytes]:
    """Yield the upload as UTF-8 bytes, transcoding only when the file is not UTF-8."""
    if encoding == "utf-8":
        yield first
        while block := source.read(CHUNK_BYTES):
            yield block
        return
    decoder = codecs.getincrementaldecoder(encoding)(errors="strict")
    block = first
    while block:
        yield decoder.decode(block).encode("utf-8")
        block = source.read(CHUNK_BYTES)
    yield decoder.decode(b"", final=True).encode("utf-8")


def _line_chunks(blocks: Iterator[bytes]) -> Iterator[bytes]:
    """Regroup blocks into chunks of about CHUNK_BYTES that end on a newline."""
    pending = b""
    for block in blocks:
        pending += block
        if len(pending) < CHUNK_BYTES:
            continue
        cut = pending.rfind(b"\n") + 1
        if cut > 0:
            yield pending[:cut]
            pending = pending[cut:]
    if pending:
        yield pending


def _unique_names(names: list[str]) -> tuple[str, ...]:
    seen: dict[str, int] = {}
    unique = []
    for raw in names:
        name = raw.strip()
        count = seen.get(name, 0)
        seen[name] = count + 1
        unique.append(name if count == 0 else f"{name}.{count}")
    return tuple(unique)


def _header_names(header_line: str, delimiter: str) -> tuple[str, ...]:
    """The header's column names; an unreadable header is a ValueError naming line 1."""
    if "\r" in header_line:
        raise ValueError("line 1 (the header) holds a bare carriage return (\\r): save the file "
                         "with \\n or \\r\\n line ends")
    try:
        return _unique_names(next(csv.reader([header_line], delimiter=delimiter), []))
    except csv.Error as error:
        raise ValueError(f"line 1 (the header) is not readable CSV: {error}") from None


def _split_header(first_chunk: bytes, delimiter: str | None) -> tuple[str, bytes, str]:
    text = first_chunk[:SAMPLE_BYTES].decode("utf-8", errors="replace")
    chosen = delimiter or detect_delimiter(text)
    cut = first_chunk.find(b"\n")
    header_bytes = first_chunk if cut < 0 else first_chunk[:cut]
    rest = b"" if cut < 0 else first_chunk[cut + 1 :]
    return header_bytes.decode("utf-8").rstrip("\r"), rest, chosen


def _chunk_line_count(chunk: bytes) -> int:
    return chunk.count(b"\n") + (0 if chunk.endswith(b"\n") else 1)


def _parse_chunk(
    chunk: bytes, first_line: int, layout: CsvLayout, quote_char: str | bool
) -> CsvChunk:
    invalid: list[tuple[int, str, int, int]] = []

    def on_invalid(row: pa_csv.InvalidRow) -> str:
        invalid.append((row.number or 0, row.text, row.expected_columns, row.actual_columns))
        return "skip"

    table = pa_csv.read_csv(
        io.BytesIO(chunk),
        read_options=pa_csv.ReadOptions(column_names=list(layout.header), use_threads=False),
        parse_options=pa_csv.ParseOptions(
            delimiter=layout.delimiter,
            quote_char=quote_char,
            ignore_empty_lines=False,
            invalid_row_handler=on_invalid,
        ),
        convert_options=pa_csv.ConvertOptions(
            column_types={name: pa.string() for name in layout.header},
            strings_can_be_null=False,
        ),
    )
    return _number_rows(table, chunk, first_line, invalid)


def _number_rows(
    table: pa.Table, chunk: bytes, first_line: int, invalid: list[tuple[int, str, int, int]]
) -> CsvChunk:
    bad_numbers = np.array([number for number, *_ in invalid], dtype=np.int64)
    all_numbers = np.arange(1, _chunk_line_count(chunk) + 1, dtype=np.int64)
    good_numbers = np.setdiff1d(all_numbers, bad_numbers, assume_unique=True)
    if len(good_numbers) != table.num_rows:
        # Quoted newlines shift the count; fall back to row order so lines stay monotonic.
        good_numbers = np.arange(1, table.num_rows + 1, dtype=np.int64)
    malformed = tuple(
        MalformedRow(first_line + number - 1, f"expected {expected} fields, found {actual}")
        for number, text, expected, actual in invalid
        if text.strip()
    )
    return CsvChunk(table, good_numbers + first_line - 1, malformed)


def read_csv_chunks(
    stream: BinaryIO,
    *,
    max_bytes: int,
    delimiter: str | None = None,
    is_quoted: bool = True,
) -> tuple[CsvLayout, Iterator[CsvChunk]]:
    """Read the header eagerly and return the layout plus a lazy iterator of chunks."""
    source = _ByteBudget(stream, max_bytes)
    first = source.read(SAMPLE_BYTES)
    if not first.strip():
        raise ValueError("the file is empty")
    _refuse_non_text(first)
    encoding = detect_encoding(first)
    stream_encoding = "utf-8" if encoding in ("utf-8", "utf-8-sig") else encoding
    chunks = _line_chunks(_utf8_blocks(first, source, stream_encoding))
    first_chunk = next(chunks, b"").removeprefix(codecs.BOM_UTF8)
    if not first_chunk.strip():  # e.g. only a byte-order mark
        raise ValueError("the file is empty")
    header_text, rest, chosen = _split_header(first_chunk, delimiter)
    header = _header_names(header_text, chosen)
    layout = CsvLayout(encoding=encoding, delimiter=chosen, header=header)
    quote_char: str | bool = '"' if is_quoted else False
    return layout, _iter_chunks(rest, chunks, layout, quote_char)


def _iter_chunks(
    rest: bytes, chunks: Iterator[bytes], layout: CsvLayout, quote_char: str | bool
) -> Iterator[CsvChunk]:
    next_line = 2
    for chunk in itertools.chain((rest,), chunks):
        if not chunk:
            continue
        _check_utf8(chunk, next_line)
        try:
            yield _parse_chunk(chunk, next_line, layout, quote_char)
        except pa.ArrowInvalid as error:
            raise ValueError(f"unreadable CSV near line {next_line}: {error}") from error
        next_line += _chunk_line_count(chunk)


def _check_utf8(chunk: bytes, first_line: int) -> None:
    """Bytes that are not UTF-8 past the sniffed sample: a ValueError naming their line
    (pyarrow would fail inside its row callback, far from the line)."""
    try:
        chunk.decode("utf-8")
    except UnicodeDecodeError as error:
        line = first_line + chunk.count(b"\n", 0, error.start)
        raise ValueError(f"line {line} is not UTF-8 text (byte {chunk[error.start]:#04x}); "
                         "save the whole file in one encoding, preferably UTF-8") from None


def read_header(stream: BinaryIO) -> CsvLayout:
    """Encoding, delimiter and column names from the first SAMPLE_BYTES (the upload pickers)."""
    first = stream.read(SAMPLE_BYTES)
    if isinstance(first, str) or not first.strip():
        raise ValueError("the file is empty")
    _refuse_non_text(first)
    encoding = detect_encoding(first)
    text = first.decode(encoding, errors="replace").removeprefix("\ufeff")
    delimiter = detect_delimiter(text)
    header_line = text.splitlines()[0] if text.splitlines() else ""
    names = _header_names(header_line, delimiter)
    return CsvLayout(encoding=encoding, delimiter=delimiter, header=names)
