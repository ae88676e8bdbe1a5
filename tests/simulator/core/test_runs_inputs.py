"""Reference rows to simulator inputs: the optional tp_comm_overlap column."""

from __future__ import annotations

from pathlib import Path

from simulator.core.reference_runs import load_reference_runs, run_inputs

DATA = Path(__file__).resolve().parents[3] / "simulator" / "data"
FILES = (str(DATA / "reference_runs.csv"), str(DATA / "reference_runs_additions.csv"))


def _row(run_id: str) -> dict[str, object]:
    runs = load_reference_runs(*FILES)
    return runs[runs["run_id"] == run_id].iloc[0].to_dict()


def test_tp_comm_overlap_reaches_the_layout_constraints(gpu_specs):
    overlapped = run_inputs(_row("TTITAN-2506-70B-256gpu-bf16-asynctp"), gpu_specs)
    plain = run_inputs(_row("TTITAN-2506-70B-256gpu-bf16-vanillatp"), gpu_specs)
    assert overlapped.constraints.tp_comm_overlap is True
    assert plain.constraints.tp_comm_overlap is False
