"""Safe parsing: each rule of issue 11 item 6, with the line and the column it names."""

import io
import time

import numpy as np
import pytest

from planner.purchase_mix.core.demand import bucket_gpu_seconds, split_hourly_demand
from planner.purchase_mix.core.upload.csv_stream import read_header
from planner.purchase_mix.core.upload.jobs import UploadSettingError
from planner.purchase_mix.core.upload.parsing import parse_job_history

NOW = 1_764_547_200  # 2025-12-01T00:00:00Z
HEADER = "job_id,start,end,gpu_type,gpu_count\n"


def _parse(body: str, **options):
    return parse_job_history(io.BytesIO((HEADER + body).encode()), "generic", now_epoch_s=NOW,
                             **options)


def _where(result):
    return [(error.line, error.field) for error in result.errors]


def test_the_114_byte_file_from_1500_to_2500_is_refused_in_under_a_second():
    body = "job-1500-to-2500,1500-01-01T00:00:00Z,2500-01-01T00:00:00Z,p3.16xlarge-V100,8\n"
    data = (HEADER + body).encode()
    assert len(data) == 114
    started = time.perf_counter()
    result = parse_job_history(io.BytesIO(data), "generic", now_epoch_s=NOW)
    elapsed = time.perf_counter() - started
    assert result.history is None
    assert _where(result) == [(2, "start"), (2, "end")]
    assert "before 2000-01-01" in result.errors[0].message
    assert "more than a year ahead" in result.errors[1].message
    assert elapsed < 1.0


def test_bare_numbers_need_an_origin():
    result = _parse("a,1500,2500,A100,8\n")
    assert _where(result) == [(2, "start"), (2, "end")]
    assert "need an origin" in result.errors[0].message
    counted = _parse("a,1500,2500,A100,8\n", origin="2024-01-01", time_unit="min")
    jobs = counted.history.jobs
    assert jobs["end_epoch_s"][0] - jobs["start_epoch_s"][0] == 1000 * 60


@pytest.mark.parametrize(
    ("start", "end", "field", "words"),
    [
        ("1999-12-31T23:00:00Z", "2000-01-01T01:00:00Z", "start", "before 2000-01-01"),
        ("2025-11-30T00:00:00Z", "2027-01-02T00:00:00Z", "end", "more than a year ahead"),
    ],
)
def test_timestamps_outside_2000_to_a_year_ahead_are_refused(start, end, field, words):
    result = _parse(f"ok,2024-01-01,2024-01-02,A100,8\nbad,{start},{end},A100,8\n")
    assert _where(result) == [(3, field)]
    assert words in result.errors[0].message


def test_a_duration_that_ends_more_than_a_year_ahead_is_refused():
    text = "job_id,start,duration,gpu_type,gpu_count\na,2025-06-01,100000000,A100,8\n"
    result = parse_job_history(io.BytesIO(text.encode()), "generic", now_epoch_s=NOW,
                               time_unit="s")
    assert _where(result) == [(2, "duration")]


def test_plain_number_durations_without_a_time_unit_are_refused_naming_the_setting():
    text = "job_id,start,duration,gpu_type,gpu_count\na,2025-06-01,600,A100,8\n"
    with pytest.raises(UploadSettingError, match="duration holds plain numbers") as caught:
        parse_job_history(io.BytesIO(text.encode()), "generic", now_epoch_s=NOW)
    assert caught.value.setting == "time_unit"
    # in minutes, the same row is ten hours
    result = parse_job_history(io.BytesIO(text.encode()), "generic", now_epoch_s=NOW,
                               time_unit="min")
    assert result.history is not None
    jobs = result.history.jobs
    assert int(jobs["end_epoch_s"].iloc[0] - jobs["start_epoch_s"].iloc[0]) == 36_000


def test_a_submit_column_alone_gives_each_job_its_start():
    text = "job_id,submit_time,duration,num_gpu\na,10,30,2\n"
    result = parse_job_history(io.BytesIO(text.encode()), "mapped", now_epoch_s=NOW,
                               mapping={"submit": "submit_time", "duration": "duration",
                                        "gpu_count": "num_gpu"},
                               time_unit="min", origin="2025-01-01T00:00:00Z",
                               default_gpu_type="V100")
    assert result.history is not None, result.errors
    job = result.history.jobs.iloc[0]
    assert job["start_epoch_s"] == job["submit_epoch_s"] == 1735689600 + 600


def test_a_history_spanning_more_than_ten_years_is_refused_naming_both_lines():
    body = "a,2012-01-01,2012-01-02,A100,8\nb,2018-01-01,2018-01-02,A100,8\n" \
           "c,2024-01-01,2024-01-02,A100,8\n"
    with pytest.raises(ValueError, match=r"12\.0 years, from line 2 \(start .*line 4 \(end"):
        _parse(body)


def test_repeated_job_ids_are_refused_with_both_lines():
    body = "a,2024-01-01,2024-01-02,A100,8\nb,2024-01-01,2024-01-02,A100,8\n" \
           "a,2024-01-01T12:00,2024-01-03,A100,4\n"
    result = _parse(body)
    assert result.history is None
    assert _where(result) == [(4, "job_id")]
    assert "already on line 2" in result.errors[0].message


def test_repeated_job_ids_merge_into_one_job_when_chosen():
    body = "a,2024-01-01,2024-01-02,A100,8\na,2024-01-01T12:00,2024-01-03,A100,4\n"
    merged = _parse(body, duplicate_ids="merge")
    jobs = merged.history.jobs
    assert list(jobs["job_id"]) == ["a"] and int(jobs["gpu_count"][0]) == 8
    gpu_hours = split_hourly_demand(merged.history).total_gpus.to_numpy().sum()
    assert gpu_hours == pytest.approx(8 * 48)  # counted once, not 8*24 + 4*36


def test_skipping_bad_rows_drops_the_later_repeats():
    body = "a,2024-01-01,2024-01-02,A100,8\na,2024-01-01T12:00,2024-01-03,A100,4\n"
    result = _parse(body, skip_bad_rows=True)
    assert len(result.history.jobs) == 1 and result.rows_skipped == 1


def test_an_unknown_duplicate_policy_is_refused():
    with pytest.raises(ValueError, match="duplicate_ids must be one of refuse, merge"):
        _parse("a,2024-01-01,2024-01-02,A100,8\n", duplicate_ids="sum")


def test_the_demand_grid_is_bounded_before_it_is_allocated():
    start = np.array([0], dtype=np.int64)
    end = np.array([1000 * 365 * 86_400], dtype=np.int64)  # a thousand years
    started = time.perf_counter()
    with pytest.raises(ValueError, match="at most 87,684 \\(ten years\\)"):
        bucket_gpu_seconds(start, end, np.array([8.0]), np.array([0]), 1)
    assert time.perf_counter() - started < 0.1


def test_the_header_is_read_for_the_column_pickers():
    layout = read_header(io.BytesIO("submit_time;num_gpu;duration\n1;2;3\n".encode("cp1252")))
    assert layout.header == ("submit_time", "num_gpu", "duration") and layout.delimiter == ";"


def test_a_file_read_in_many_chunks_and_blocks_gives_the_one_chunk_history(monkeypatch):
    """Chunks are compacted as they are read (categories, ids, lines) and repeated ids are
    found block by block: the history, its category order and the repeat lines are those of
    reading the file at once."""
    from planner.purchase_mix.core.upload import csv_stream, parse_checks

    types = ["L4", "A100", "H100", "V100"]
    rows = [f"j{i % 2497},2024-01-01T{i % 24:02d}:00,2024-01-02,{types[i // 750]},"
            f"{1 + i % 8}\n" for i in range(3000)]  # 130 kB: the 64 kB sample, then chunks
    body = "".join(rows)
    whole = _parse(body, skip_bad_rows=True)
    refused = _parse(body)
    monkeypatch.setattr(csv_stream, "CHUNK_BYTES", 2048)
    monkeypatch.setattr(parse_checks, "DUPLICATE_BLOCK_ROWS", 7)
    chunked = _parse(body, skip_bad_rows=True)
    assert len(chunked.history.jobs) == 2497
    assert list(chunked.history.gpu_types) == types  # first appearance, across chunks
    assert chunked.history.jobs.equals(whole.history.jobs)
    again = _parse(body)
    assert _where(again) == _where(refused) and len(again.errors) == 503
    assert [e.message for e in again.errors] == [e.message for e in refused.errors]
