import io
import re

import pandas as pd
import pytest

from planner.purchase_mix.core.upload import csv_stream
from planner.purchase_mix.core.upload.jobs import JobHistory, UploadSettingError, UsageHistory
from planner.purchase_mix.core.upload.parsing import parse_column_mapping, parse_job_history
from tests.planner.purchase_mix.core.conftest import PHILLY_MAPPING, SLURM, TRACES

GENERIC = (
    "job_id,start,end,gpu_type,gpu_count,interruptible,team\n"
    "j1,2024-01-01T00:30:00Z,2024-01-01T02:00:00Z,A100,8,true,nlp\n"
    "j2,2024-01-01 01:00:00,2024-01-01 01:30:00,H100,2,0,\n"
    "j3,bad,2024-01-01T01:30:00,H100,2,0,cv\n"
    "j4,2024-01-01T01:00:00,2024-01-01T00:30:00,H100,x,maybe,cv\n"
    "\n"
    "j5,2024-01-01T01:00:00,2024-01-01T03:30:00,H100,0,no,cv\n"
    "j6,2024-01-01T01:00:00\n"
)


def test_bad_rows_are_reported_with_lines_and_nothing_is_produced():
    result = parse_job_history(io.BytesIO(GENERIC.encode()), "generic")
    assert result.history is None
    assert [(e.line, e.field) for e in result.errors] == [
        (4, "start"),
        (5, "end"),
        (5, "gpu_count"),
        (5, "interruptible"),
        (8, "(row)"),
    ]
    assert result.rows_ignored == 1  # j5 has no GPUs


def test_skip_bad_rows_keeps_the_good_ones():
    result = parse_job_history(io.BytesIO(GENERIC.encode()), "generic", skip_bad_rows=True)
    assert isinstance(result.history, JobHistory)
    jobs = result.history.jobs
    assert list(jobs["job_id"]) == ["j1", "j2"]
    assert list(jobs["start_epoch_s"]) == [1704069000, 1704070800]
    assert str(jobs["gpu_count"].dtype) == "int32"
    assert list(jobs["is_interruptible"]) == [True, False]
    assert result.rows_read == 6 and result.rows_skipped == 3


@pytest.mark.parametrize(
    ("encoding", "delimiter"),
    [("utf-8", ","), ("utf-8-sig", ";"), ("cp1252", ";"), ("utf-16", "\t"), ("utf-8", "|")],
)
def test_encoding_and_delimiter_are_detected(encoding, delimiter):
    text = GENERIC.splitlines()[:3]
    body = "\r\n".join(line.replace(",", delimiter) for line in text) + "\r\n"
    body = body.replace("nlp", "équipe")
    result = parse_job_history(io.BytesIO(body.encode(encoding)), "generic")
    assert result.delimiter == delimiter
    assert result.history is not None
    teams = result.history.jobs["team"]
    assert teams.iloc[0] == "équipe" and pd.isna(teams.iloc[1])


def test_line_numbers_survive_chunk_boundaries(monkeypatch):
    monkeypatch.setattr(csv_stream, "CHUNK_BYTES", 200)
    rows = ["job_id,start,end,gpu_type,gpu_count"]
    for i in range(300):
        count = "x" if i in (7, 150, 299) else "1"
        rows.append(f"j{i},2024-01-01T00:00:00,2024-01-01T01:00:00,A100,{count}")
    result = parse_job_history(io.BytesIO("\n".join(rows).encode()), "generic", skip_bad_rows=True)
    assert [error.line for error in result.errors] == [9, 152, 301]
    assert result.history is not None and len(result.history.jobs) == 297


def test_slurm_keeps_jobs_counts_gpus_and_ignores_steps():
    text = (
        "JobID|Start|End|State|Account|AllocTRES\n"
        "1|2024-03-01T08:00:05|2024-03-03T10:12:40|PREEMPTED|a|"
        "billing=64,cpu=64,gres/gpu=8,gres/gpu:a100=8,mem=1000G,node=1\n"
        "1.batch|2024-03-01T08:00:05|2024-03-03T10:12:40|COMPLETED||cpu=1\n"
        "2|2024-03-01T09:00:00|2024-03-01T10:00:00|COMPLETED|b|cpu=4,gres/gpu=2\n"
        "3|2024-03-01T08:00:05|Unknown|RUNNING|b|gres/gpu=2\n"
        "4|Unknown|Unknown|PENDING|b|\n"
    )
    result = parse_job_history(io.BytesIO(text.encode()), "slurm", default_gpu_type="V100")
    assert isinstance(result.history, JobHistory)
    jobs = result.history.jobs
    assert list(jobs["job_id"]) == ["1", "2"]
    assert list(jobs["gpu_count"]) == [8, 2]
    assert list(jobs["gpu_type"].astype(str)) == ["a100", "V100"]
    assert list(jobs["is_interruptible"]) == [True, False]
    assert result.ignored_reasons == {"job step rows": 1, "still running": 1, "never started": 1}


@pytest.mark.parametrize("name", ["slurm2sql_test-data1.psv", "slurm2sql_test-data2.psv"])
def test_real_sacct_fixtures_without_gpus_raise(name):
    with pytest.raises(ValueError, match="no GPU demand rows"):
        parse_job_history(SLURM / name, "slurm")


def test_mapped_philly_offsets_in_minutes():
    result = parse_job_history(
        TRACES / "chronus_philly_MIX1_rows1-5000.csv",
        "mapped",
        mapping=PHILLY_MAPPING,
        time_unit="min",
        origin="2017-10-01",
        default_gpu_type="P100",
    )
    assert isinstance(result.history, JobHistory)
    first = result.history.jobs.iloc[0]
    assert first["start_epoch_s"] == 1506816000 + 8555 * 60
    assert first["end_epoch_s"] - first["start_epoch_s"] == 747 * 60
    assert result.rows_read == 5000 and result.ignored_reasons == {"no GPUs": 32}


def test_usage_series():
    result = parse_job_history(
        TRACES / "helios_earth_vcvlY_sequence_first5000.csv",
        "usage",
        mapping={"timestamp": "time", "gpus_in_use": "running_gpu_num"},
        default_gpu_type="V100",
    )
    assert isinstance(result.history, UsageHistory)
    assert len(result.history.samples) == 5000


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"fmt": "xml"}, "format"),
        ({"fmt": "mapped"}, "mapping"),
        ({"fmt": "generic", "mapping": {"start": "nope"}}, "not in the header"),
        ({"fmt": "generic", "mapping": {"colour": "x"}}, "names unknown fields"),
        ({"fmt": "generic", "time_unit": "d"}, "time unit"),
        ({"fmt": "generic", "max_bytes": 10}, "limit"),
    ],
)
def test_file_level_problems_raise(kwargs, message):
    with pytest.raises(ValueError, match=message):
        parse_job_history(io.BytesIO(GENERIC.encode()), **kwargs)


def test_missing_columns_are_named_in_words_with_the_setting_that_fixes_them():
    with pytest.raises(UploadSettingError) as raised:
        parse_job_history(io.BytesIO(b"job_id,start,end,gpu_count\nj1,2024-01-01,2024-01-02,8\n"),
                          "generic")
    assert str(raised.value) == ("The file has no gpu_type column (its columns are job_id, "
                                 "start, end, gpu_count).")
    assert raised.value.missing == ("gpu_type",) and "[" not in str(raised.value)


def test_several_missing_columns_read_as_a_sentence():
    with pytest.raises(UploadSettingError, match=r"^The file has no start, gpu_count, end \(or "
                       r"duration\) or gpu_type columns \(its columns are a, b\)\.$"):
        parse_job_history(io.BytesIO(b"a,b\n1,2\n"), "generic")


@pytest.mark.parametrize(("header", "mapping", "message"), [
    ("job_id,start,end,gpu_type,gpu_count,gpu_count", None,
     "The file has 2 columns named gpu_count (columns 5 and 6), so which one holds gpu_count"),
    ("job_id,Start,end,gpu_type,gpu_count,start", None, "2 columns named start (columns 2 and 6)"),
    ("job_id,t,t,gpu_type,gpu_count,end", {"start": "t"}, "2 columns named t (columns 2 and 3)"),
])
def test_a_field_two_columns_could_hold_is_refused_not_read_from_the_first(header, mapping,
                                                                           message):
    data = f"{header}\nj1,2024-01-01T00:00:00,2024-01-01T05:00:00,A100,8,9\n".encode()
    with pytest.raises(UploadSettingError, match=re.escape(message)) as raised:
        parse_job_history(io.BytesIO(data), "mapped" if mapping else "generic",
                          mapping=mapping)
    assert raised.value.setting.startswith("column:")


def test_parse_column_mapping():
    assert parse_column_mapping("start=submit_time, duration=dur") == {
        "start": "submit_time",
        "duration": "dur",
    }
    with pytest.raises(ValueError):
        parse_column_mapping("start")
