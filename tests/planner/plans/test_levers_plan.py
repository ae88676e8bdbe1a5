"""Checkpoint storage tiers and GPU power caps on a plan (`plan --retention ...`,
`--power-limit-pct`), checked against the shipped price table and the measured curves."""

import csv
import json
from io import StringIO

import numpy as np
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from planner.core.cloud import HOURS_PER_MONTH
from pricing.shipped_tables import POWER_CURVES_CSV, STORAGE_PRICES_CSV

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("loaded_catalog")]
LLAMA70 = ("--workload", "llama2-70b", "--tokens", "2e12", "--checkpoint-every-hours", "1",
           "--providers", "aws", "--purchase-options", "on_demand", "--max-nodes", "64")


def _plan(*args: str) -> dict:
    out = StringIO()
    call_command("plan", *args, "--json", stdout=out)
    return json.loads(out.getvalue())["result"]


def _price(tier: str, column: str) -> float:
    with STORAGE_PRICES_CSV.open(encoding="utf-8") as handle:
        row = next(r for r in csv.DictReader(handle) if r["tier"] == tier)
    return float(row[column] or 0)


def _hand_usd(option: dict, keep_last: int | None) -> float:
    """S3 Standard for checkpoints written hourly, kept (all or the last K) until the run
    ends plus the month after, from the shipped prices; PUTs per shard file; restarts GET."""
    plan = option["storage_plan"]
    run = option["time_to_train_hours"]
    n = int(np.floor(run / 1.0))
    horizon = run + 1.0 * HOURS_PER_MONTH
    times = np.arange(1, n + 1, dtype=float)
    life = horizon - times
    if keep_last is not None:
        superseded = times <= n - keep_last
        life = np.where(superseded, keep_last * 1.0, life)
    gb_hours = plan["stored_checkpoint_gb"] * life.sum()
    storage = gb_hours / HOURS_PER_MONTH * _price("S3 Standard", "usd_per_gb_month")
    puts = n * plan["files_per_checkpoint"] * _price("S3 Standard", "usd_per_1k_put") / 1000
    gets = (plan["restarts_expected"] * plan["files_per_checkpoint"]
            * _price("S3 Standard", "usd_per_1k_get") / 1000)
    return storage + puts + gets


def test_every_option_has_a_storage_plan_and_standard_keep_all_vs_last_three() -> None:
    last3 = _plan(*LLAMA70, "--retention", "keep-last=3")
    every = _plan(*LLAMA70, "--retention", "keep-last=all")
    assert last3["options"] and all("storage_plan" in o for o in last3["options"])
    for plan_doc, keep in ((last3, 3), (every, None)):
        option = plan_doc["options"][0]
        plan = option["storage_plan"]
        assert plan["checkpoint_gb"] == pytest.approx(70e9 * 14 / 1e9, rel=0.05)
        standard = next(a for a in plan["alternatives"] if a["tier"] == "S3 Standard")
        assert standard["usd"] == pytest.approx(_hand_usd(option, keep), rel=1e-6)
        assert plan["tiers"][0]["tb_months"] > 0 and plan["tiers"][0]["usd"] > 0
        assert plan["flat_usd"] == pytest.approx(option["storage_usd"])
    a = next(x for x in last3["options"][0]["storage_plan"]["alternatives"]
             if x["tier"] == "S3 Standard")
    b = next(x for x in every["options"][0]["storage_plan"]["alternatives"]
             if x["tier"] == "S3 Standard")
    assert b["usd"] > 20 * a["usd"]


def test_a_thirty_day_tier_is_never_chosen_for_checkpoints_deleted_sooner() -> None:
    result = _plan(*LLAMA70, "--retention", "keep-last=3,milestone-days=7,delete-after-days=20")
    for option in result["options"]:
        plan = option["storage_plan"]
        for line in plan["tiers"]:
            assert line["min_storage_days"] <= 20, line
        ia = next(a for a in plan["alternatives"] if a["tier"] == "S3 Standard-IA")
        assert not ia["is_eligible"] and "30-day minimum" in ia["why_not"]
    milestone = result["options"][0]["storage_plan"]["tiers"][1]
    assert milestone["role"] == "milestones" and milestone["min_storage_days"] == 0


def test_bad_retention_names_the_field() -> None:
    with pytest.raises(CommandError, match="retention"):
        _plan(*LLAMA70, "--retention", "keep=3")


def _curve(gpu: str, workload: str, watts: int) -> dict:
    with POWER_CURVES_CSV.open(encoding="utf-8") as handle:
        return next(r for r in csv.DictReader(handle) if r["gpu"] == gpu
                    and workload in r["workload"] and r["power_limit_w"] == str(watts))


def test_a_power_cap_on_v100_moves_time_and_energy_as_measured() -> None:
    args = ("--workload", "llama2-7b", "--tokens", "1e10",
            "--gpus", "v100-sxm2-16gb,v100-sxm2-32gb", "--providers", "aws",
            "--purchase-options", "on_demand", "--max-nodes", "4")
    free = {(o["instance_type"], o["nodes"]): o for o in _plan(*args)["options"]}
    capped = _plan(*args, "--power-limit-pct", "70")
    row = _curve("V100", "bert_base_uncased on squad", 175)  # 70 % of the 250 W limit
    speed, energy = float(row["relative_throughput"]), float(row["relative_energy"])
    for option in capped["options"][:5]:
        base = free[(option["instance_type"], option["nodes"])]
        assert option["time_to_train_hours"] == pytest.approx(
            base["time_to_train_hours"] / speed, rel=1e-6)
        assert option["energy_kwh"] == pytest.approx(base["energy_kwh"] * energy, rel=1e-6)
        assert option["power_cap"]["is_measured"]
        assert option["power_cap"]["trade"]["energy_change_pct"] < 0
    claim = capped["power_caps"][0]["claim"]
    assert "V100" in claim and "95 %" in claim



def test_api_and_page_show_the_storage_plan_and_the_power_trade(
    client_ana, eager_celery, django_capture_on_commit_callbacks
) -> None:
    body = {"workload": "llama2-7b", "tokens": 1e11, "providers": ["aws"],
            "purchase_options": ["on_demand"], "gpus": ["v100-sxm2-16gb"],
            "retention": "keep-last=3, milestone-days=7", "checkpoint_every_hours": 2,
            "power_limit_pct": 70, "checkpoint_compression_ratio": 1.5}
    with django_capture_on_commit_callbacks(execute=True):
        created = client_ana.post("/api/plans", json.dumps(body), content_type="application/json")
    assert created.status_code == 201, created.content
    plan_id = created.json()["id"]
    result = client_ana.get(f"/api/plans/{plan_id}").json()["result"]
    assert all(o["storage_plan"]["interval_hours"] == 2 for o in result["options"])
    first = result["options"][0]["storage_plan"]
    assert first["stored_checkpoint_gb"] == pytest.approx(first["checkpoint_gb"] / 1.5)
    assert first["retention"] == "keep-last=3,milestone-days=7"
    page = client_ana.get(f"/plans/{plan_id}").content.decode()
    assert 'id="storage-plan"' in page and "TB-months" in page
    assert 'id="power-claim"' in page and "V100" in page
    assert "% GPU-hours" in page
    bad = client_ana.post("/api/plans", json.dumps({**body, "retention": "keep-last=0"}),
                          content_type="application/json")
    assert bad.status_code in (400, 422) and "retention" in bad.content.decode()
    low = client_ana.post("/api/plans", json.dumps({**body, "power_limit_pct": 20}),
                          content_type="application/json")
    assert low.status_code == 422 and "power_limit_pct" in low.content.decode()


def test_the_report_carries_the_storage_and_power_tables() -> None:
    from planner.reports.core.plan_report import report_from_plan

    result = _plan(*LLAMA70, "--retention", "keep-last=3,milestone-days=7",
                   "--power-limit-pct", "80")
    report = report_from_plan(result, inputs={"workload": "llama2-70b", "tokens": 2e12},
                              name="levers", subject_id=1, generated_at="2026-12-04")
    tables = {t.key: t for t in report.tables}
    storage, power = tables["storage_plan"], tables["power_cap"]
    card = next(o for o in result["options"]
                if o["row_index"] == result["recommendations"][0]["row_index"])
    assert storage.column("usd")[-1] == pytest.approx(card["storage_plan"]["flat_usd"])
    assert storage.column("usd")[-2] == pytest.approx(card["storage_plan"]["total_usd"])
    assert "milestones" in storage.column("role")
    assert power.column("value")[0] == 80


def test_the_command_prints_the_storage_plan_and_the_trade_and_the_chart_states_it() -> None:
    from planner.plans.charts import carbon_figure

    out = StringIO()
    call_command("plan", "--workload", "llama2-7b", "--tokens", "1e10", "--gpus",
                 "v100-sxm2-16gb", "--providers", "aws", "--purchase-options", "on_demand",
                 "--retention", "keep-last=3", "--power-limit-pct", "70", stdout=out)
    text = out.getvalue()
    assert "Storage (" in text and "TB-months" in text and "at the flat price" in text
    assert "Power limit 70 %" in text and "% GPU-hours" in text
    result = _plan("--workload", "llama2-7b", "--tokens", "1e10", "--gpus", "v100-sxm2-16gb",
                   "--providers", "aws", "--purchase-options", "on_demand",
                   "--power-limit-pct", "70")
    figure = carbon_figure(result["options"], result["recommendations"])
    assert "capped at 70 % power" in figure.layout.title.text
    star = next(t for t in figure.data if t.name == "Lowest carbon")
    assert "% GPU-hours" in star.text[0]
