import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from tests.planner.conftest import HELIOS, PHILLY, PHILLY_MAP


def _run(*args: str) -> str:
    out = StringIO()
    call_command("recommend_mix", *args, stdout=out)
    return out.getvalue()


def test_philly_through_map_prints_the_recommendation(loaded_catalog, db):
    text = _run(str(PHILLY), "--map", PHILLY_MAP, "--time-unit", "min", "--origin",
                "2017-10-01", "--gpu-type", "A100", "--provider", "aws", "--region", "us-east-1")
    assert "A100: AWS us-east-1 p4" in text  # providers in words, as the pages name them
    assert "What to buy:" in text and "break-even utilisation" in text
    assert "a commitment needs at least 30 days" in text  # the trace covers fewer days
    assert "Backtest: fit on the first" in text


def test_helios_usage_json_has_hourly_demand_and_prices(loaded_catalog, db):
    text = _run(str(HELIOS), "--format", "usage", "--map",
                "timestamp=time,gpus_in_use=running_gpu_num", "--gpu-type", "V100",
                "--provider", "aws", "--region", "us-east-1", "--lookback-days", "2", "--json")
    payload = json.loads(text)
    assert payload["status"] == "done" and payload["format"] == "usage"
    document = payload["document"]
    assert len(document["hourly_demand"]["firm"]["series"]["V100"]) == 84
    prices = document["prices"]
    assert {row["purchase_option"] for row in prices} >= {"on_demand", "spot"}
    assert all(row["source"] and row["as_of"] for row in prices)
    assert document["settings"]["lookback_days"] == 2
    assert document["what_to_buy"]["replay"]["n_hours"] == 48
    assert "discount_pct" in prices[0]


def test_bad_rows_raise_command_error_naming_line_and_field(tmp_path, db):
    path = tmp_path / "bad.csv"
    path.write_text("job_id,start,end,gpu_type,gpu_count\na,2024-01-01,2024-01-02,A100,x\n")
    with pytest.raises(CommandError, match=r"line 2, gpu_count"):
        _run(str(path))


@pytest.mark.parametrize(
    ("args", "message"),
    [(["--map", "start=nope"], "not in the header"), (["--map", "oops"], "FIELD=COLUMN")],
)
def test_bad_options_raise_command_error(tmp_path, db, args, message):
    path = tmp_path / "jobs.csv"
    path.write_text("job_id,start,end,gpu_type,gpu_count\na,2024-01-01,2024-01-02,A100,1\n")
    with pytest.raises(CommandError, match=message):
        _run(str(path), *args)


def test_missing_file(db):
    with pytest.raises(CommandError, match="no such file"):
        _run("/nonexistent.csv")
    with pytest.raises(CommandError, match="a folder, not a file"):
        _run("/tmp")
    # The report's path is checked before the file is read (this file does not parse).
    with pytest.raises(CommandError, match="report: format: '.doc' is not one of"):
        _run(__file__, "--report", "/tmp/mix.doc")


def test_a_report_file_that_cannot_be_written_is_a_one_line_error(loaded_catalog, db, tmp_path):
    with pytest.raises(CommandError, match="report: cannot write .*: no folder"):
        _run(str(PHILLY), "--map", PHILLY_MAP, "--time-unit", "min", "--origin", "2017-10-01",
             "--gpu-type", "A100", "--report", str(tmp_path / "no-such-folder" / "mix.xlsx"))


@pytest.mark.parametrize(("args", "message"), [
    (["--provider", "zzz"], "provider: 'zzz' has no current prices"),
    (["--lookback-days", "-5"], "lookback_days: -5 is not a number of days from 1"),
])
def test_a_place_or_look_back_that_cannot_be_is_refused(loaded_catalog, db, args, message):
    with pytest.raises(CommandError, match=message):
        _run(str(PHILLY), "--map", PHILLY_MAP, "--time-unit", "min", "--origin", "2017-10-01",
             "--gpu-type", "A100", *args)


@pytest.mark.parametrize("growth", ["-50,-25,0,25", "-10", "-2.5, 5"])
def test_growth_list_starting_negative_is_a_value_not_an_option(growth):
    """`--growth -50,-25,0,25` (as the README writes it) parses; argparse alone reads it as
    an unknown option and stops with "expected one argument"."""
    from planner.management.commands.recommend_mix import Command

    parser = Command().create_parser("manage.py", "recommend_mix")
    options = parser.parse_args(["jobs.csv", "--growth", growth])
    assert options.growth == growth
    with pytest.raises(CommandError):
        parser.parse_args(["jobs.csv", "--growth", "--json"])
