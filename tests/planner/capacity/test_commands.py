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
    assert "Recommended (cheapest with P95 wait <= 2 h)" in text
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
