"""Reference rows to simulator inputs: the optional tp_comm_overlap and virtual_stages columns."""

from __future__ import annotations

from pathlib import Path

from simulator.core.reference_runs import load_reference_runs, run_inputs
from simulator.core.search import best_layout

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


def test_a_stated_1f1b_schedule_keeps_the_search_off_interleaving(gpu_specs, calibration):
    """torchtitan's 405B table names "1F1B" for one row and "Interleaved 1F1B" for the next:
    the first is searched with one chunk per stage, the second may interleave."""
    plain = run_inputs(_row("TTITAN-2412-405B-512gpu-1f1b-float8"), gpu_specs)
    interleaved = run_inputs(_row("TTITAN-2412-405B-512gpu-interleaved1f1b-float8"), gpu_specs)
    assert plain.constraints.virtual_stages == 1
    assert interleaved.constraints.virtual_stages is None
    chosen = best_layout(plain.workload, plain.hardware, plain.goal, calibration,
                         plain.constraints)
    assert chosen.result.layout.virtual_stages == 1 and chosen.result.layout.pp == 8
