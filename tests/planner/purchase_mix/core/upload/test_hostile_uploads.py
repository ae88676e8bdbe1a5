"""Hostile job-history uploads, in every format: the parser returns row errors naming the line
and field, or raises ValueError with a message; it never crashes, and what it accepts holds
only finite, in-range jobs and samples."""

import bz2
import gzip
import io
import re

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from planner.purchase_mix.core.upload.jobs import JobHistory, UsageHistory
from planner.purchase_mix.core.upload.parsing import (
    JOB_FIELDS,
    SLURM_COLUMNS,
    USAGE_FIELDS,
    parse_job_history,
)
from tests.hostile import HOSTILE_SETTINGS, hostile_csv_bytes, outcome

NOW = 1_764_547_200  # 2025-12-01T00:00:00Z
Y2000 = 946_684_800
GENERIC_ROWS = (  # in JOB_FIELDS order
    ("a", "2024-01-01T00:00:00Z", "2024-01-01T05:00:00Z", "", "8", "A100", "false", "ml"),
    ("b", "2024-01-02T00:00:00Z", "2024-01-02T01:00:00Z", "", "4", "H100", "true", "vision"),
)
MAPPED_ROWS = (("0", "8", "A100"), ("90", "4", "H100"))
SLURM_ROWS = (  # in SLURM_COLUMNS order
    ("101", "2023-12-31T22:30:00", "2024-01-01T00:00:00", "2024-01-01T05:00:00", "05:00:00",
     "18000", "COMPLETED",
     "ml", "ada", "billing=8,cpu=8,gres/gpu=8,gres/gpu:a100=8,node=1", "", "gpu:8", ""),
    ("102", "Unknown", "2024-01-02T00:00:00", "2024-01-02T01:00:00", "01:00:00", "3600",
     "FAILED",
     "cv", "bob", "cpu=4,gres/gpu:a100=2,node=1", "", "", ""),
)
USAGE_ROWS = (("2024-01-01T00:00:00Z", "A100", "8"), ("2024-01-01T01:00:00Z", "H100", "2"))


def _check(data: bytes, fmt: str, **options: object) -> None:
    try:
        result = parse_job_history(io.BytesIO(data), fmt, now_epoch_s=NOW,
                                   max_bytes=1_000_000, **options)  # type: ignore[arg-type]
    except ValueError as error:
        assert str(error).strip(), "a file-level error says what is wrong"
        outcome("file refused (ValueError)")
        return
    for row_error in result.errors:
        assert row_error.line >= 1 and row_error.field and row_error.message
    assert result.error_count >= len(result.errors)
    if result.history is None:
        assert result.error_count > 0, "nothing produced, so something must be named"
        outcome("rows refused (line + field)")
        return
    outcome("parsed" + (" with rows skipped" if result.rows_skipped else ""))
    history = result.history
    if isinstance(history, UsageHistory):
        samples = history.samples
        assert (samples["timestamp_epoch_s"] >= Y2000).all()
        assert np.isfinite(samples["gpus_in_use"].to_numpy(dtype=float)).all()
        assert (samples["gpus_in_use"] >= 0).all()
    else:
        assert isinstance(history, JobHistory)
        jobs = history.jobs
        assert (jobs["start_epoch_s"] >= Y2000).all()
        assert (jobs["end_epoch_s"] >= jobs["start_epoch_s"]).all()
        assert (jobs["end_epoch_s"] <= NOW + 366 * 86_400).all()
        assert np.isfinite(jobs["gpu_count"].to_numpy(dtype=float)).all()
        assert (jobs["gpu_count"] >= 0).all()


@HOSTILE_SETTINGS
@given(data=hostile_csv_bytes(JOB_FIELDS, GENERIC_ROWS), skip=st.booleans())
def test_hostile_generic_uploads_fail_cleanly(data: bytes, skip: bool) -> None:
    _check(data, "generic", skip_bad_rows=skip)


@HOSTILE_SETTINGS
@given(data=hostile_csv_bytes(("t", "gpus", "kind"), MAPPED_ROWS), skip=st.booleans())
def test_hostile_mapped_uploads_with_numeric_times_fail_cleanly(data: bytes, skip: bool) -> None:
    _check(data, "mapped", mapping={"start": "t", "duration": "t", "gpu_count": "gpus",
                                    "gpu_type": "kind"},
           time_unit="min", origin="2024-01-01T00:00:00Z", skip_bad_rows=skip)


@HOSTILE_SETTINGS
@given(data=hostile_csv_bytes(USAGE_FIELDS, USAGE_ROWS), skip=st.booleans())
def test_hostile_usage_uploads_fail_cleanly(data: bytes, skip: bool) -> None:
    _check(data, "usage", skip_bad_rows=skip)


@HOSTILE_SETTINGS
@given(data=hostile_csv_bytes(SLURM_COLUMNS, SLURM_ROWS), skip=st.booleans())
def test_hostile_slurm_uploads_fail_cleanly(data: bytes, skip: bool) -> None:
    _check(data, "slurm", skip_bad_rows=skip)


@pytest.mark.parametrize("fmt", ["generic", "slurm", "usage"])
def test_the_hostile_strategies_reach_a_correct_parse(fmt: str) -> None:
    """The good rows the strategies start from parse, so the properties test real parses too."""
    header, rows = {"generic": (JOB_FIELDS, GENERIC_ROWS), "usage": (USAGE_FIELDS, USAGE_ROWS),
                    "slurm": (SLURM_COLUMNS, SLURM_ROWS)}[fmt]
    sep = "|" if fmt == "slurm" else ","
    text = "\n".join(sep.join(row) for row in [header, *rows]) + "\n"
    result = parse_job_history(io.BytesIO(text.encode()), fmt, now_epoch_s=NOW)
    assert result.history is not None, result.errors


# Bugs the properties found (each was an uncaught _csv.Error or a pyarrow callback failure).
def test_a_bare_carriage_return_in_the_header_is_refused_naming_line_1() -> None:
    with pytest.raises(ValueError, match=r"line 1 \(the header\) holds a bare carriage return"):
        parse_job_history(io.BytesIO(b"job_id,st\rart,end,gpu_type,gpu_count\n"), "generic",
                          now_epoch_s=NOW)


def test_a_header_field_over_the_csv_limit_is_refused_naming_line_1() -> None:
    data = b"job_id,start,end,gpu_count," + b"x" * 140_000 + b"\na,b,c,d,e\n"
    with pytest.raises(ValueError, match=r"line 1 \(the header\) is not readable CSV: field"):
        parse_job_history(io.BytesIO(data), "generic", now_epoch_s=NOW)


def test_bytes_that_are_not_utf8_after_the_sniffed_sample_are_refused_with_their_line() -> None:
    row = b"a,2024-01-01T00:00:00Z,2024-01-01T05:00:00Z,A100,8\n"
    data = b"job_id,start,end,gpu_type,gpu_count\n" + row * 2000 + b"b,\xff,x,A100,8,9\n" + row
    with pytest.raises(ValueError, match="line 2002 is not UTF-8 text"):
        parse_job_history(io.BytesIO(data), "generic", now_epoch_s=NOW)


def test_a_numeric_time_too_large_for_any_clock_is_a_row_error() -> None:
    data = b"t,gpus,kind\n0,8,A100\n1e308,8,A100\n"
    result = parse_job_history(io.BytesIO(data), "mapped",
                               mapping={"start": "t", "duration": "t", "gpu_count": "gpus",
                                        "gpu_type": "kind"},
                               time_unit="min", origin="2024-01-01T00:00:00Z", now_epoch_s=NOW)
    assert result.history is None
    assert {(error.line, error.field) for error in result.errors} == {(3, "t")}


@pytest.mark.parametrize("elapsed", ["1e308", "99999999999999999999-00:00:00"])
def test_a_slurm_elapsed_time_too_large_for_any_clock_is_a_row_error(elapsed: str) -> None:
    column = "Elapsed" if ":" in elapsed else "ElapsedRaw"
    data = (f"JobID|Start|{column}|AllocTRES\n"
            f"1|2024-01-01T00:00:00|{elapsed}|gres/gpu:a100=8\n").encode()
    result = parse_job_history(io.BytesIO(data), "slurm", now_epoch_s=NOW)
    assert result.history is None
    assert [(error.line, error.field) for error in result.errors] == [(2, "End")]


@pytest.mark.parametrize(("alloc", "req", "column"), [
    ("gres/gpu:a100=1000000000", "", "AllocTRES"),
    ("gres/gpu:a100=99999999999999999999999999999", "", "AllocTRES"),
    ("billing=8", "gres/gpu:h100=200000", "ReqTRES"),
])
def test_a_slurm_job_beyond_any_cluster_is_a_row_error_on_its_column(
    alloc: str, req: str, column: str
) -> None:
    data = (f"JobID|Start|End|AllocTRES|ReqTRES\n"
            f"1|2024-01-01T00:00:00|2024-01-01T02:00:00|gres/gpu:a100=8|\n"
            f"2|2024-01-01T00:00:00|2024-01-01T02:00:00|{alloc}|{req}\n").encode()
    result = parse_job_history(io.BytesIO(data), "slurm", now_epoch_s=NOW)
    assert result.history is None
    assert [(e.line, e.field, e.message) for e in result.errors] == [
        (3, column, "not a whole number of GPUs from 0 to 100,000 per job")]


def test_a_file_of_only_a_byte_order_mark_is_empty() -> None:
    with pytest.raises(ValueError, match="the file is empty"):
        parse_job_history(io.BytesIO(b"\xff\xfe"), "generic", now_epoch_s=NOW)  # UTF-16 BOM


def test_a_usage_sample_beyond_any_fleet_is_a_row_error() -> None:
    data = b"timestamp,gpu_type,gpus_in_use\n2024-01-01T00:00:00Z,A100,1e308\n"
    result = parse_job_history(io.BytesIO(data), "usage", now_epoch_s=NOW)
    assert result.history is None
    assert [(e.line, e.field) for e in result.errors] == [(2, "gpus_in_use")]
    assert "from 0 to 1,000,000" in result.errors[0].message


@pytest.mark.parametrize("duration", ["1e300", "-5", "soon"])
def test_a_duration_that_is_none_says_what_a_duration_is(duration: str) -> None:
    data = (b"start,hours,gpus,kind\n2024-01-01T00:00:00Z,2,8,A100\n"
            + f"2024-01-01T01:00:00Z,{duration},8,A100\n".encode())
    result = parse_job_history(io.BytesIO(data), "mapped",
                               mapping={"start": "start", "duration": "hours",
                                        "gpu_count": "gpus", "gpu_type": "kind"},
                               time_unit="h", now_epoch_s=NOW)
    assert result.history is None
    assert [(e.line, e.field, e.message) for e in result.errors] == [
        (3, "hours", "not a duration: a number >= 0, and not too large to be one")]


GOOD_CSV = ("job_id,start,end,gpu_type,gpu_count\n"
            "a,2024-01-01T00:00:00Z,2024-01-01T02:00:00Z,A100,8\n"
            "b,2024-01-02T00:00:00Z,2024-01-02T05:00:00Z,A100,4\n")


def _zipped(text: str) -> bytes:
    import zipfile

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("jobs.csv", text)
    return buffer.getvalue()


@pytest.mark.parametrize(("data", "says"), [
    (gzip.compress(GOOD_CSV.encode(), mtime=0),
     "the file is gzip-compressed: decompress it (gunzip) and upload the CSV inside"),
    (_zipped(GOOD_CSV), "the file is a ZIP archive (or an Excel .xlsx workbook)"),
    (bz2.compress(GOOD_CSV.encode()), "the file is bzip2-compressed"),
    (GOOD_CSV.encode("utf-16-le"), "the file looks like UTF-16 text without a byte-order mark"),
    (GOOD_CSV.encode("utf-16-be"), "the file looks like UTF-16 text without a byte-order mark"),
    (bytes(range(256)) * 8, "the file is binary (232 of its first 2,048 bytes are control "
                            "bytes), not CSV text"),
])
def test_a_file_that_is_not_csv_text_says_what_it_is(data: bytes, says: str) -> None:
    # before: "no start column (its columns are \x8b...)"
    with pytest.raises(ValueError, match=re.escape(says)):
        parse_job_history(io.BytesIO(data), "generic", now_epoch_s=NOW)


@pytest.mark.parametrize("encoding", ["utf-16", "utf-8-sig"])
def test_text_with_a_byte_order_mark_is_read(encoding: str) -> None:
    result = parse_job_history(io.BytesIO(GOOD_CSV.encode(encoding)), "generic",
                               now_epoch_s=NOW)
    assert isinstance(result.history, JobHistory) and len(result.history.jobs) == 2
