"""capacity_plan: the sweep of a file on the command line, its JSON and its report."""

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from tests.planner.conftest import PHILLY, PHILLY_MAP

PHILLY_ARGS = [str(PHILLY), "--map", PHILLY_MAP, "--time-unit", "min", "--origin",
               "2017-10-01", "--gpu-type", "V100"]


def _run(*args: str) -> str:
    out = StringIO()
    call_command("capacity_plan", *args, stdout=out, stderr=StringIO())
    return out.getvalue()


def test_json_has_points_and_the_recommended_point(loaded_catalog, db):
    payload = json.loads(_run(*PHILLY_ARGS, "--pool-gpus", "0,152,304", "--max-wait-hours",
                              "1,inf", "--json"))
    points = payload["points"]
    assert len(points) == 3 + 3 * 2 * 2  # none, then constant and size_aware at T = 1, inf
    keys = {"pool_gpus", "discipline", "policy", "max_wait_hours", "pool_gpu_hours",
            "burst_gpu_hours", "jobs_burst", "mean_wait_hours", "p95_wait_hours",
            "utilization", "total_usd"}
    assert all(keys <= set(point) for point in points)
    assert payload["recommended"] in points
    assert {p["max_wait_hours"] for p in points} == {0.0, 1.0, "inf"}
    inf = [p for p in points if p["max_wait_hours"] == "inf" and p["pool_gpus"] == 304]
    assert all(p["jobs_burst"] == 0 for p in inf)


def test_text_summary_and_report(loaded_catalog, db, tmp_path):
    out = tmp_path / "capacity.xlsx"
    text = _run(*PHILLY_ARGS, "--pool-gpus", "0,200", "--policy", "none,size_aware",
                "--discipline", "fifo,backfill", "--report", str(out))
    # 16.5 days: nothing may be committed, and the summary says so
    assert "Recommended (nothing may be committed on this history): 0 GPUs" in text
    assert "against all on demand (0 GPUs" in text and "against no-wait hindsight optimum" in text
    # what the swept pools' price assumes, as on the page
    assert "  Every swept pool, the recommended one included, " in text
    assert out.stat().st_size > 0


@pytest.mark.parametrize(("args", "message"), [
    (["--pool-gpus", "ten"], "pool_gpus"), (["--policy", "soon"], "policy"),
    (["--max-wait-hours", "-3"], "max_wait_hours"), (["--discipline", "lifo"], "discipline"),
])
def test_bad_options_name_the_field(loaded_catalog, db, args, message):
    with pytest.raises(CommandError, match=message):
        _run(*PHILLY_ARGS, *args)


def test_a_gpu_type_not_in_the_file_is_refused(loaded_catalog, db, tmp_path):
    path = tmp_path / "jobs.csv"
    path.write_text("job_id,start,end,gpu_type,gpu_count\n"
                    "a,2024-01-01T00:00:00Z,2024-01-01T05:00:00Z,A100,8\n")
    with pytest.raises(CommandError, match="gpu_type: 'H100' is not in the history"):
        _run(str(path), "--gpu-type", "H100")


def test_a_report_file_that_cannot_be_written_is_a_one_line_error(loaded_catalog, db, tmp_path):
    with pytest.raises(CommandError, match="report: cannot write .*: no folder"):
        _run(*PHILLY_ARGS, "--pool-gpus", "0,200", "--policy", "none",
             "--report", str(tmp_path / "no-such-folder" / "capacity.xlsx"))


SUBMIT_ARGS = [str(PHILLY), "--format", "generic", "--map",
               "job_id=job_id,submit=submit_time,duration=duration,gpu_count=num_gpu",
               "--origin", "2017-10-01T00:00:00Z", "--gpu-type", "V100", "--provider", "aws"]


def test_the_philly_sample_commits_nothing_and_says_why(loaded_catalog, db):
    """Issue 37's command: 16.5 days commit nothing, with the reason; the V100 commitment is
    sold on AWS as p3dn.24xlarge, bursts go to the cheaper p3.16xlarge."""
    payload = json.loads(_run(*SUBMIT_ARGS, "--time-unit", "min", "--json"))
    purchase = payload["purchase"]
    assert purchase["lines"] == [] and payload["recommended"]["pool_gpus"] == 0
    assert "The history covers 16.5 days; a commitment needs at least 30 days" in \
        purchase["reasons"][0]
    assert payload["headline"].startswith("Commit nothing")
    assert "16.5 days" in payload["headline"]
    assert "p3dn.24xlarge" in payload["prices"]["pool_words"]
    assert payload["prices"]["sources"][1]["instance_type"] == "p3.16xlarge"
    assert payload["prices"]["on_demand_usd_per_gpu_hour"] == pytest.approx(3.06)
    assert payload["gpu_hours"] == pytest.approx(58_181, rel=1e-3)  # minutes, not seconds
    # whole instances: every swept pool is a number of 8-GPU machines
    assert all(p["pool_gpus"] % 8 == 0 for p in payload["points"])
    assert all(set(p["waits_by_class"]) <= {"1 GPU", "2-7 GPUs", "8-63 GPUs", "64+ GPUs"}
               for p in payload["points"])


def test_the_philly_sample_prices_an_owned_pool(loaded_catalog, db):
    payload = json.loads(_run(*SUBMIT_ARGS, "--time-unit", "min", "--pool-price", "owned",
                              "--owned-purchase-usd-per-gpu", "12000", "--json"))
    source = payload["prices"]["sources"][0]
    assert source["purchase_option"] == "owned"
    assert payload["prices"]["pool_usd_per_gpu_hour"] == pytest.approx(
        source["usd_per_gpu_hour"]) and source["usd_per_gpu_hour"] > 0
    figures = {f["key"]: f["label"] for f in source["figures"]}
    assert figures["purchase_usd_per_gpu"] == "your input"
    assert figures["power_kw_per_gpu"].startswith("default (NVIDIA DGX-1 datasheet")
    # still nothing bought on 16.5 days; what the owned pool would be is priced and labelled
    assert payload["purchase"]["lines"] == []
    would = payload["purchase"]["would_buy"]
    assert would["words"].startswith("Not a purchase yet")
    line = would["lines"][0]
    assert line["term"] == "owned" and line["gpus"] == would["pool_gpus"] > 0
    assert line["upfront_usd"] == pytest.approx(line["gpus"] * 12_000 * 1.15)  # +network,storage


def test_plain_number_durations_without_a_time_unit_are_refused(loaded_catalog, db):
    with pytest.raises(CommandError, match="hold plain numbers: give their time unit"):
        _run(*SUBMIT_ARGS)


def test_a_120_day_history_commits_with_the_purchase_mix_line_fields(loaded_catalog, db,
                                                                     tmp_path):
    from tests.planner.capacity.conftest import steady_csv

    path = tmp_path / "steady120.csv"
    path.write_bytes(steady_csv(120))
    capacity = json.loads(_run(str(path), "--pool-gpus", "0,16,24,32", "--json"))
    out = StringIO()
    call_command("recommend_mix", str(path), "--json", stdout=out, stderr=StringIO())
    mix = json.loads(out.getvalue())["document"]["what_to_buy"]["lines"]
    lines = capacity["purchase"]["lines"]
    assert lines and mix and capacity["recommended"]["pool_gpus"] > 0
    assert set(lines[0]) == set(mix[0])  # one line format
    line = lines[0]
    assert line["term"] == "reserved_3y"  # 120 days, steady: 3-year terms allowed
    assert line["full_term_cost_usd"] >= line["upfront_usd"] > 0
    assert set(line["savings_usd"]) == {"p10", "p50", "p90"}
    assert capacity["purchase"]["reasons"] == []
