"""Simulation service, task, views, API and validate_simulator command, on the loaded catalog."""

import json
from io import StringIO
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command

from planner.core import formatting as fmt
from planner.runs import Attempt
from pricing.models import InstanceType
from simulator import services
from simulator.models import SimulationRun
from tests.clients import signed_in

pytestmark = pytest.mark.django_db
RUNS_CSV = Path(__file__).resolve().parents[2] / "simulator" / "data" / "reference_runs.csv"


@pytest.fixture
def user(loaded_catalog: None) -> User:
    return User.objects.create_user("ana", password="pw-ana-123")


@pytest.fixture
def p4de() -> InstanceType:
    return InstanceType.objects.get(provider__slug="aws", name="p4de.24xlarge")


def _request(instance: InstanceType, nodes: int = 2, **goal: float) -> dict:
    return {"workload": {"preset": "llama2-7b"}, "goal": goal or {"tokens": 1e11},
            "instance_type_id": instance.id, "nodes": nodes, "layout": {}}


def test_task_runs_once_and_stores_a_fitting_result(user: User, p4de: InstanceType) -> None:
    run = services.simulation_create(owner_id=user.id, kind="single", request=_request(p4de))
    # second delivery: already claimed, no change
    services.simulation_execute(run_id=run.id, attempt=Attempt("another-delivery"))
    run.refresh_from_db()
    assert run.status == "done" and run.progress_pct == 100
    sim = run.result["simulation"]
    assert sim["n_gpus"] == 16 and sim["memory"]["is_fit"]
    assert sim["time_to_train_p10_hours"] <= sim["time_to_train_hours"]
    assert sim["time_to_train_hours"] <= sim["time_to_train_p90_hours"]
    assert [p["gpus"] for p in run.result["scaling"]][:3] == [8, 16, 32]
    assert SimulationRun.objects.count() == 1


def test_more_gpus_train_faster(user: User, p4de: InstanceType) -> None:
    times = []
    for nodes in (1, 4):
        run = services.simulation_create(owner_id=user.id, kind="single",
                                         request=_request(p4de, nodes))
        services.simulation_execute(run_id=run.id, attempt=Attempt("another-delivery"))
        run.refresh_from_db()
        times.append(run.result["simulation"]["time_to_train_hours"])
    assert times[1] < times[0] / 2.5


def test_overlapping_tp_traffic_makes_a_tp8_run_faster(user: User, p4de: InstanceType) -> None:
    steps = {}
    for overlap in (False, True):
        request = {**_request(p4de), "workload": {"preset": "llama2-70b"},
                   "layout": {"tp": 8, "tp_comm_overlap": overlap}}
        run = services.simulation_create(owner_id=user.id, kind="single", request=request)
        services.simulation_execute(run_id=run.id, attempt=Attempt("another-delivery"))
        run.refresh_from_db()
        sim = run.result["simulation"]
        assert sim["layout"]["tp"] == 8 and sim["layout"]["tp_comm_overlap"] is overlap
        steps[overlap] = sim["time"]["step_seconds"]
    assert steps[True] < 0.97 * steps[False]


def test_zero3_under_a_pipeline_is_shown_and_costed_as_it_runs(user: User,
                                                                p4de: InstanceType) -> None:
    """FSDP2 under pipelining gathers weights once a step: ZeRO 3 with PP holds and moves
    what ZeRO 1 does, and the detail page says why the memory is not sharded. A layout of
    16 GPUs on 4 nodes still simulates: the scaling chart starts at 2 nodes, where it fits."""
    sims = {}
    for zero in (1, 3):
        request = {**_request(p4de, nodes=4),
                   "layout": {"tp": 8, "pp": 2, "zero_stage": zero, "micro_batch": 1}}
        run = services.simulation_create(owner_id=user.id, kind="single", request=request)
        services.simulation_execute(run_id=run.id, attempt=Attempt("another-delivery"))
        run.refresh_from_db()
        assert run.status == "done", run.error
        assert [p["gpus"] for p in run.result["scaling"]][0] == 16
        sims[zero] = (run, run.result["simulation"])
    (_, one), (run, three) = sims[1], sims[3]
    assert three["layout"]["zero_stage"] == 3 and three["layout"]["pp"] == 2
    assert three["memory"]["total_gib"] == pytest.approx(one["memory"]["total_gib"])
    assert three["time"]["step_seconds"] == pytest.approx(one["time"]["step_seconds"])
    page = signed_in(user).get(f"/simulations/{run.id}").content.decode()
    assert "weights and gradients whole for the step" in page
    assert "PP2 (1F1B) DP2 ZeRO3 (runs as ZeRO1 under the pipeline)" in page


def test_a_stack_without_flash_attention_is_slower_and_says_so(user: User,
                                                               p4de: InstanceType) -> None:
    """The JSON API's layout.flash_attention false simulates a stack that moves attention
    scores through GPU memory (before FlashAttention): slower, and the page names it."""
    speeds = {}
    for flash in (True, False):
        request = {**_request(p4de, nodes=1),
                   "layout": {"tp": 1, "pp": 1, "micro_batch": 1, "recompute": "full",
                              "flash_attention": flash}}
        run = services.simulation_create(owner_id=user.id, kind="single", request=request)
        services.simulation_execute(run_id=run.id, attempt=Attempt("another-delivery"))
        run.refresh_from_db()
        assert run.status == "done", run.error
        speeds[flash] = run.result["simulation"]["tokens_per_second"]
    assert speeds[False] < 0.97 * speeds[True]
    page = signed_in(user).get(f"/simulations/{run.id}").content.decode()
    assert "no flash attention" in page
    n_rows = services.shipped_calibration().n_rows
    assert run.result["calibration_used"] == (
        f"the shipped calibration, fitted on {n_rows} published training runs")
    assert f"Predicted with the shipped calibration, fitted on {n_rows} published" in page
    assert "job-stopping failures 19.73 per million GPU-hours" in page


@pytest.mark.parametrize(("change", "field"), [
    ({"workload": {"preset": "gpt-9"}}, "workload.preset"),
    ({"goal": {"tokens": 0}}, "goal"),
    ({"nodes": 0}, "nodes"),
    ({"instance_type_id": 10**9}, "instance_type_id"),
    ({"layout": {"tp_comm_overlap": "sometimes"}}, "layout.tp_comm_overlap"),
])
def test_bad_requests_are_refused_and_nothing_is_stored(
    user: User, p4de: InstanceType, change: dict, field: str
) -> None:
    with pytest.raises(ValueError, match=field.split(".")[0]):
        services.simulation_create(owner_id=user.id, kind="single",
                                   request={**_request(p4de), **change})
    assert not SimulationRun.objects.exists()


def test_page_flow_and_privacy(user: User, p4de: InstanceType, eager_celery: None,
                               django_capture_on_commit_callbacks: Any) -> None:
    client = signed_in(user)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post("/simulations/new", {
            "kind": "single", "preset": "llama2-7b", "tokens": "1e11",
            "instance_type": p4de.id, "nodes": 1})
    assert response.status_code == 302
    page = client.get(response["Location"])
    assert page.status_code == 200
    assert b"Time to train" in page.content and b"GiB" in page.content
    assert b"figure-2" in page.content
    # goodput in percent, as the accuracy page and the plan cards say it; counts separated
    sim = page.context["run"].result["simulation"]
    html = page.content.decode()
    assert f"<td>{fmt.percent(sim['goodput_fraction'])} of whole-run time" in html
    assert f"accumulation {fmt.count(sim['layout']['grad_accum'])}" in html
    assert '<abbr title="Model FLOPs utilisation' in html  # MFU said in words on hover
    # the goodput assumptions in the plan page's words and units ('restart 300 s' before)
    assert "restart after a failure 5 minutes" in html and "write stall 30 seconds" in html
    assert "failures 19.73 per million GPU-hours" in html
    other = signed_in(User.objects.create_user("bob", password="pw-bob-123"))
    assert other.get(response["Location"]).status_code == 404


def test_a_simulation_without_a_goal_answers_speed_and_names_what_time_needs(
    user: User, p4de: InstanceType, eager_celery: None,
    django_capture_on_commit_callbacks: Any,
) -> None:
    client = signed_in(user)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post("/simulations/new", {
            "kind": "single", "preset": "llama2-7b", "instance_type": p4de.id, "nodes": 1})
    assert response.status_code == 302
    run = SimulationRun.objects.get(owner=user)
    sim = run.result["simulation"]
    assert run.status == "done" and sim["tokens_per_second"] > 0 and sim["mfu"] > 0.2
    assert sim["time_to_train_hours"] is None and sim["gpu_hours"] is None
    assert "missing tokens_or_samples_total" in sim["not_predicted"]
    page = client.get(response["Location"])
    assert b"not predicted: missing tokens_or_samples_total" in page.content
    assert b"tokens/s" in page.content


def test_api_creates_and_returns_a_simulation(user: User, p4de: InstanceType, eager_celery: None,
                                              django_capture_on_commit_callbacks: Any) -> None:
    client = signed_in(user)
    body = {"kind": "single", **_request(p4de, 1)}
    with django_capture_on_commit_callbacks(execute=True):
        created = client.post("/api/simulations", json.dumps(body),
                              content_type="application/json")
    assert created.status_code == 201
    run_id = created.json()["id"]
    shown = client.get(f"/api/simulations/{run_id}").json()
    assert shown["status"] == "done"
    assert shown["result"]["simulation"]["memory"]["is_fit"] is True
    bad = client.post("/api/simulations", json.dumps({**body, "nodes": 0}),
                      content_type="application/json")
    assert bad.status_code == 422 and bad.json()["detail"][0]["loc"][-1] == "nodes"


def test_api_sweep_without_a_goal_ranks_by_speed_and_says_time_is_not_predicted(
    user: User, eager_celery: None, django_capture_on_commit_callbacks: Any
) -> None:
    client = signed_in(user)
    body = {"kind": "sweep", "workload": {"preset": "llama2-7b"}, "layout": {}}
    with django_capture_on_commit_callbacks(execute=True):
        created = client.post("/api/simulations", json.dumps(body),
                              content_type="application/json")
    assert created.status_code == 201
    result = client.get(f"/api/simulations/{created.json()['id']}").json()["result"]
    assert "missing tokens_or_samples_total" in result["not_predicted"]
    rows = result["configurations"]
    assert rows and all(r["time_to_train_hours"] is None and r["gpu_hours"] is None
                        for r in rows)
    speeds = [r["samples_per_second"] for r in rows]
    assert speeds == sorted(speeds, reverse=True)


def test_validate_simulator_writes_predictions_and_beats_the_rule(tmp_path: Path) -> None:
    out = tmp_path / "pred.csv"
    stdout = StringIO()
    runs = pd.read_csv(RUNS_CSV)
    # One row moved far beyond the calibration runs: 512 x its GPUs (and its batch).
    for column in ("gpu_count", "dp", "global_batch"):
        runs.loc[0, column] *= 512
    moved = tmp_path / "runs.csv"
    runs.to_csv(moved, index=False)
    call_command("validate_simulator", str(moved), "--out", str(out), stdout=stdout)
    frame = pd.read_csv(out)
    assert list(frame.columns) == ["run_id", "metric", "reported", "predicted", "predicted_p10",
                                   "predicted_p90", "abs_pct_error", "note", "envelope",
                                   "envelope_distance", "envelope_group", "envelope_note"]
    assert frame["predicted"].notna().mean() >= 0.95
    # a row outside the envelope on any axis says which, in words
    outside = frame[frame["envelope"].notna()]
    assert list(outside["run_id"]) == [runs.loc[0, "run_id"]]
    row = outside.iloc[0]
    assert row["envelope"] == "gpu_count" and row["envelope_group"] == "far"
    assert row["envelope_note"].startswith("outside the calibration envelope: 16,384 GPUs is "
                                           "more than the largest calibration run (3,072 GPUs)")
    assert row["envelope_distance"] == pytest.approx(np.log2(16384 / 3072))
    assert (frame["predicted_p10"] <= frame["predicted"]).all()
    text = stdout.getvalue()
    assert "rule median APE %" in text and "tokens_per_sec_per_gpu" in text
    assert "by envelope_group: how far outside the calibration runs" in text


def test_validate_simulator_states_how_far_apart_the_whole_runs_are() -> None:
    stdout = StringIO()
    call_command("validate_simulator", str(RUNS_CSV.with_name("whole_runs.csv")), stdout=stdout)
    line = next(t for t in stdout.getvalue().splitlines() if t.startswith("whole runs:"))
    assert "published / predicted GPU-hours runs from" in line
    assert "a floor for any goodput factor, not an accuracy figure" in line


def test_validate_simulator_notes_rows_it_cannot_predict(tmp_path: Path) -> None:
    runs = pd.read_csv(RUNS_CSV).head(3)
    runs.loc[0, "gpu"] = "Imaginary GPU 1TB"
    path = tmp_path / "runs.csv"
    runs.to_csv(path, index=False)
    out = tmp_path / "pred.csv"
    call_command("validate_simulator", str(path), "--out", str(out), stdout=StringIO())
    frame = pd.read_csv(out)
    assert pd.isna(frame.loc[0, "predicted"]) and isinstance(frame.loc[0, "note"], str)
    assert frame["predicted"].iloc[1:].notna().all()


def test_validate_simulator_missing_file_is_a_command_error() -> None:
    with pytest.raises(CommandError, match="no such file"):
        call_command("validate_simulator", "/nonexistent.csv")


def test_validate_simulator_names_missing_columns_and_unwritable_outputs(tmp_path: Path) -> None:
    jobs = tmp_path / "jobs.csv"  # a job history, not reference runs: was a KeyError traceback
    jobs.write_text("job_id,start,end,gpu_type,gpu_count\nj1,2026-01-01,2026-01-02,A100,8\n")
    with pytest.raises(CommandError, match=r"jobs\.csv has no run_id, source, workload_kind, "
                       r"params_billion, gpu, metric, value columns \(reference-runs and"):
        call_command("validate_simulator", str(jobs), stdout=StringIO())
    runs = pd.read_csv(RUNS_CSV).head(3).drop(columns=["source"])
    runs.to_csv(tmp_path / "runs.csv", index=False)
    with pytest.raises(CommandError, match=r"runs\.csv has no source column \("):
        call_command("validate_simulator", str(tmp_path / "runs.csv"), stdout=StringIO())
    # checked before the fit (minutes), not a FileNotFoundError traceback after it
    for option in ("--out", "--write-calibration"):
        with pytest.raises(CommandError, match=f"^{option}: no folder .*/absent to write x"):
            call_command("validate_simulator", str(RUNS_CSV), option,
                         str(tmp_path / "absent" / "x"), stdout=StringIO())


@pytest.mark.parametrize(("field", "typed", "message"), [
    ("nodes", "100000", "Nodes must be a whole number from 1 to 512, e.g. 4."),
    ("tokens", "-5", "Training tokens must be a number from 1 to 1e16 tokens, e.g. 2e12."),
])
def test_form_marks_an_out_of_range_field_beside_it(user: User, field: str, typed: str,
                                                    message: str) -> None:
    client = signed_in(user)
    data = {"kind": "sweep", "preset": "llama2-7b", "tokens": "1e11", "nodes": 1, field: typed}
    response = client.post("/simulations/new", data)
    assert response.status_code == 400
    body = response.content.decode()
    assert f'<p class="field-error" id="id_{field}_error">{message}</p>' in body
    assert f'aria-describedby="id_{field}_helptext id_{field}_error"' in body
    assert 'aria-invalid="true"' in body and f'href="#id_{field}"' in body
    assert not SimulationRun.objects.exists()


def test_a_sweep_fixed_at_zero_3_keeps_its_pipeline_layouts(loaded_catalog: None) -> None:
    searched = services.simulator_for(request={"workload": {"preset": "llama2-70b"},
                                               "goal": {"tokens": 1e11}, "layout": {}},
                                      owner_id=None)
    fixed = services.simulator_for(request={"workload": {"preset": "llama2-70b"},
                                            "goal": {"tokens": 1e11},
                                            "layout": {"zero_stage": 3}}, owner_id=None)
    grid = services.constrained_grid(fixed.inputs)
    assert set(grid["zero_stage"]) == {3} and (grid["pp"] > 1).any()
    default = services.constrained_grid(searched.inputs)
    assert not ((default["pp"] > 1) & (default["zero_stage"] > 1)).any()


def test_a_sweep_shows_whole_counts_and_the_list_names_its_model(user: User) -> None:
    # the sweep table read '128.0', '1024.0', '1.0/1.0/1024.0' and the list 'llama2-7b'
    config = {"instance_type": "p5.48xlarge", "gpu": "H100 SXM5-80GB", "nodes": 128.0,
              "gpus": 1024.0, "tp": 1.0, "pp": 1.0, "dp": 1024.0, "virtual_stages": 1.0,
              "zero_stage": 1.0, "time_to_train_hours": 4.4, "gpu_hours": 4525.0,
              "memory_per_gpu_gib": 45.0, "mfu": 0.439, "calibration_status": "calibrated"}
    run = SimulationRun.objects.create(
        owner=user, kind="sweep", status="done", progress_pct=100,
        request={"workload": {"preset": "llama2-7b"}},
        result={"n_feasible": 1, "configurations": [config]})
    client = signed_in(user)
    html = client.get(f"/simulations/{run.id}").content.decode()
    assert '<td class="num">128</td>' in html and '<td class="num">1,024</td>' in html
    assert "<td>1/1/1,024</td><td>1</td>" in html and "1024.0" not in html
    listed = client.get("/simulations/").content.decode()
    assert "<td>Llama 2 7B</td>" in listed and "llama2-7b" not in listed
