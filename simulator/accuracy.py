"""The simulator's out-of-family accuracy, as shipped: leave-one-family-out predictions of the
reference runs (written by `validate_simulator --write-calibration`) and their summaries.

The file is regenerated with the calibration, so the accuracy page always describes the
shipped model; tests/simulator/core/test_crossval.py checks it against a fresh
cross-validation.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from planner.core.formatting import PALETTE, log_axis
from simulator.core.envelope import AXIS_LABELS, ENVELOPE_GROUPS
from simulator.core.goodput import goodput_fraction, whole_run_goodput
from simulator.core.validation import SingleFactorFloor, single_factor_floor, summarize_errors

ACCURACY_FILE = "validation_family.csv"
ACCURACY_PATH = Path(__file__).resolve().parent / "data" / ACCURACY_FILE
ACCURACY_COLUMNS = ["run_id", "family", "source", "metric", "gpu", "precision", "workload_kind",
                    "scale_band", "calibration_status", "n_gpus", "reported", "predicted",
                    "predicted_p10", "predicted_p90", "abs_pct_error", "signed_pct_error",
                    "is_covered", "baseline", "baseline_abs_pct_error", "is_answerable", "note",
                    "envelope_group", "envelope", "envelope_distance", "envelope_note"]
# Tables of the page, in order: (group_by of summarize_errors, heading).
SECTIONS = (("family", "By family (the unit left out)"), ("gpu", "By GPU"),
            ("precision", "By precision"), ("scale_band", "By scale"),
            ("metric", "By metric"), ("workload_kind", "By model type"),
            ("calibration_status", "By calibration status"),
            ("envelope_group", "By envelope group"))


# Whole runs the accuracy page quotes the shipped goodput for: (GPUs, days of useful steps).
GOODPUT_EXAMPLES = ((64, 7.0), (1024, 30.0), (4096, 60.0))


def goodput_summary(production_overhead_fraction: float) -> dict[str, Any]:
    """The whole-run goodput of the shipped calibration: its fitted production overhead and
    the goodput it gives runs of GOODPUT_EXAMPLES sizes (with the default failure model)."""
    assumptions = whole_run_goodput(production_overhead_fraction)
    examples = [{"gpus": gpus, "days": days,
                 "goodput": float(goodput_fraction(gpus, days * 86400.0, assumptions))}
                for gpus, days in GOODPUT_EXAMPLES]
    return {"production_overhead_fraction": production_overhead_fraction,
            "failures_per_million_gpu_hours": assumptions.failures_per_gpu_hour * 1e6,
            "examples": examples}


def write_accuracy(predictions: pd.DataFrame, path: Path) -> None:
    """Write the ACCURACY_COLUMNS of cross-validation predictions (is_covered as 1/0/blank)."""
    frame = predictions.reindex(columns=ACCURACY_COLUMNS).copy()
    frame["is_covered"] = pd.to_numeric(frame["is_covered"], errors="coerce")
    frame.to_csv(path, index=False, float_format="%.6g")


@dataclass(frozen=True)
class AccuracyReport:
    """Per-row predictions and their summaries (summarize_errors rows as records)."""

    rows: pd.DataFrame
    summary: pd.DataFrame

    def table(self, group_by: str) -> list[dict[str, Any]]:
        part = self.summary[self.summary["group_by"] == group_by].copy()
        part["beats_rule"] = ((part["median_ape"] < part["baseline_median_ape"])
                              & (part["p90_ape"] < part["baseline_p90_ape"]))
        return list(part.to_dict("records"))

    def envelope_groups(self, scales: tuple[float, ...]) -> list[dict[str, Any]]:
        """The envelope groups in order (ENVELOPE_GROUPS) that have predicted rows: each
        one's summary row (n_predicted: the rows its coverage and band width rest on), its
        shipped band multiplier (`scales`, CalibrationDomain.envelope_scales) and the axes
        that put its rows there, most frequent first ("GPU count 12, pipeline depth 3")."""
        summary = {r["group"]: r for r in self.table("envelope_group")}
        predicted = self.rows[self.rows["predicted"].notna()]
        out = []
        for group, scale in zip(ENVELOPE_GROUPS, scales, strict=True):
            if group not in summary or not summary[group]["n_predicted"]:
                continue
            part = predicted[predicted["envelope_group"] == group]
            axes = Counter(a for e in part["envelope"] for a in str(e).split(";") if a)
            words = ", ".join(f"{AXIS_LABELS[a]} {n}" for a, n in axes.most_common())
            out.append({**summary[group], "band_multiplier": scale, "axes": words})
        return out

    def families_beaten(self) -> tuple[int, int]:
        """(families where the simulator beats the rule on median and P90, families with a
        predicted row)."""
        families = [f for f in self.table("family") if f["n_predicted"]]
        return sum(bool(f["beats_rule"]) for f in families), len(families)

    def whole_run_floor(self) -> SingleFactorFloor | None:
        """How far apart the published whole runs are (validation.single_factor_floor)."""
        return single_factor_floor(self.rows, "whole-run")

    def families_not_beaten(self) -> list[str]:
        """Families with a predicted row where the rule of thumb wins on median or P90."""
        return [str(f["group"]) for f in self.table("family")
                if f["n_predicted"] and not f["beats_rule"]]


# Raise when the page's figure or tables change shape: cached pages are keyed by it too.
ACCURACY_PAGE_VERSION = 7


def accuracy_version(path: Path = ACCURACY_PATH) -> str:
    """A token that changes with the accuracy file, the calibrations beside it (training and
    serving) or the page's code version (the key of the accuracy page's cache)."""
    parts = [path, path.parent / "calibration.json", path.parent / "serving_calibration.json"]
    files = ":".join(f"{p.stat().st_mtime_ns}-{p.stat().st_size}" for p in parts if p.exists())
    return f"{ACCURACY_PAGE_VERSION}:{files}"


def accuracy_report(path: Path = ACCURACY_PATH) -> AccuracyReport:
    """The report of the file at `path`, re-read when the file changes."""
    return _report(str(path), path.stat().st_mtime_ns)


@lru_cache(maxsize=4)
def _report(path: str, _mtime_ns: int) -> AccuracyReport:
    rows = pd.read_csv(path)
    rows["is_covered"] = rows["is_covered"].astype(float)
    rows["is_answerable"] = rows["is_answerable"].astype(bool)
    rows["note"] = rows["note"].fillna("")
    for column in ("envelope", "envelope_note"):
        rows[column] = rows[column].fillna("") if column in rows else ""
    return AccuracyReport(rows, summarize_errors(rows))


TICK_CHARACTERS = 40


def _tick_label(family: str, index: int) -> str:
    """A family's axis label: whole when short, else cut with an ellipsis and numbered, so two
    long names that start alike stay two columns (the hover and the data table say it whole)."""
    if len(family) <= TICK_CHARACTERS:
        return family
    return f"{family[:TICK_CHARACTERS - 5].rstrip()}… ({index + 1})"


def accuracy_figure(report: AccuracyReport) -> go.Figure:
    """Predicted ÷ published per run (log axis) with its P10-P90 band, one colour per family."""
    rows = report.rows[report.rows["predicted"].notna()]
    figure = go.Figure()
    extent: list[float] = []
    for i, (family, part) in enumerate(rows.groupby("family", sort=True)):
        ratio = part["predicted"] / part["reported"]
        low = part["predicted_p10"] / part["reported"]
        high = part["predicted_p90"] / part["reported"]
        # A time metric's band is inverted: p10 is the longer time.
        low, high = np.minimum(low, high), np.maximum(low, high)
        extent += [float(low.min()), float(high.max())]
        figure.add_trace(go.Scatter(
            x=[_tick_label(str(family), i)] * len(part), y=ratio, mode="markers",
            name=str(family), marker={"color": PALETTE[i % len(PALETTE)], "size": 7},
            error_y={"type": "data", "symmetric": False, "array": high - ratio,
                     "arrayminus": ratio - low, "thickness": 1, "width": 0},
            text=part["run_id"], customdata=[str(family)] * len(part),
            hovertemplate="%{text}<br>%{customdata}<br>predicted ÷ published %{y:.2f}"
                          "<extra></extra>"))
    figure.add_hline(y=1.0, line_dash="dash", line_color="#555")
    figure.update_layout(
        title="Out-of-family prediction ÷ published value, with the P10–P90 band",
        template="plotly_white", height=520, showlegend=False,
        margin={"l": 70, "r": 20, "t": 50, "b": 160},
        yaxis=log_axis(extent or [1.0], "Predicted ÷ published (ratio, log scale)"),
        xaxis={"title": "", "tickangle": 35})
    return figure
