"""The serving model's seam for commands, the planner and the API: shipped data and the
calibration file around the Django-free core in simulator.core.serving.

serving_calibration.json holds the fitted ServingCalibration and the P10-P90 band factors per
metric from leave-one-source-out validation (written by `validate_serving --cv source
--write-calibration`, never by a request).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path
from typing import Any

import pandas as pd

from simulator.core.hardware import GpuSpec
from simulator.core.serving.crossval import (
    Bands,
    Summary,
    bands_from,
    cross_validate,
    predictions_frame,
    summarise,
)
from simulator.core.serving.engine import ServingCalibration
from simulator.core.serving.fit import fit_serving
from simulator.core.serving.runs import RowReading, ServingCase, read_runs
from simulator.services import shipped_gpu_specs

DATA_DIR = Path(__file__).resolve().parent / "data"
INFERENCE_RUNS_CSV = DATA_DIR / "inference_runs.csv"
SERVING_CALIBRATION_JSON = DATA_DIR / "serving_calibration.json"


@dataclass(frozen=True)
class ServingValidation:
    """What validate_serving prints and writes."""

    predictions: pd.DataFrame  # crossval.PREDICTION_COLUMNS + source, rule_predicted, ...
    unanswered: list[RowReading]
    cases: list[ServingCase]  # the rows answered (their `unanswered` lists values that are not)
    summary: Summary
    calibration: ServingCalibration
    bands: Bands


@cache
def _shipped() -> dict[str, Any] | None:
    """serving_calibration.json parsed, once per process (None when none is shipped)."""
    if not SERVING_CALIBRATION_JSON.exists():
        return None
    data: dict[str, Any] = json.loads(SERVING_CALIBRATION_JSON.read_text())
    return data


@cache
def serving_calibration() -> tuple[ServingCalibration, Bands]:
    """The shipped calibration and band factors (defaults and no bands if none shipped)."""
    data = _shipped()
    if data is None:
        return ServingCalibration(), Bands({}, {})
    cal = replace(ServingCalibration(), **data["calibration"])
    return cal, Bands(data["bands"]["low"], data["bands"]["high"])


@cache
def serving_accuracy() -> dict[str, dict[str, float]]:
    """metric -> median_ape, p90_ape, band_coverage (%) of the shipped leave-one-source-out
    validation; empty when no calibration is shipped."""
    data = _shipped()
    if data is None:
        return {}
    rows = data["validation"]["by_metric"]
    return {str(r["metric"]): {k: float(r[k]) for k in ("median_ape", "p90_ape",
                                                          "band_coverage")} for r in rows}


METRIC_LABELS: dict[str, str] = {"throughput_tokens_per_s": "Throughput (output tokens/s)",
                                  "ttft_ms": "Time to first token (ms)",
                                  "tpot_ms": "Time per output token (ms)"}


def serving_validation() -> dict[str, Any]:
    """The shipped leave-one-source-out validation for the accuracy page: by_metric rows (with
    a label, the rule of thumb's errors and whether the model beats it), by_source rows,
    mlperf_server_latency rows, and how many sources the model beats the rule in; empty when
    no calibration is shipped."""
    data = _shipped()
    if data is None:
        return {}
    validation = data["validation"]
    by_metric = [{**r, "label": METRIC_LABELS.get(str(r["metric"]), str(r["metric"])),
                  "beats_rule": bool(r["median_ape"] < r.get("rule_median_ape", math.inf))}
                 for r in validation["by_metric"]]
    by_source = list(validation["by_source"])
    return {"by_metric": by_metric, "by_source": by_source,
            "mlperf_server_latency": list(validation.get("mlperf_server_latency", [])),
            "sources_beaten": sum(bool(r["beats_rule"]) for r in by_source),
            "sources": len(by_source)}


def _read(paths: Sequence[Path], gpus: dict[str, GpuSpec]) -> list[RowReading]:
    readings: list[RowReading] = []
    for path in paths:
        try:
            frame = pd.read_csv(path)
        except (OSError, pd.errors.ParserError, UnicodeDecodeError) as exc:
            raise ValueError(f"{path}: cannot read ({exc})") from exc
        try:
            readings.extend(read_runs(frame, gpus))
        except ValueError as exc:
            raise ValueError(f"{path}: {exc}") from exc
    return readings


def serving_validate_files(paths: Sequence[Path], *, cv: str | None,
                           progress: Callable[[str], None] | None = None) -> ServingValidation:
    """Predict every answerable row of `paths`. With cv="source" every prediction is
    out-of-source and carries its conformal band; without, the shipped calibration predicts
    and the shipped bands apply. ValueError naming the file on unreadable input."""
    gpus = shipped_gpu_specs()
    readings = _read(paths, gpus)
    cases = [r.case for r in readings if r.case is not None]
    unanswered = [r for r in readings if r.case is None]
    if not cases:
        raise ValueError("no row can be answered")
    if cv == "source":
        frame = cross_validate(cases, gpus, progress)
        calibration = fit_serving(cases, gpus)
        bands = bands_from(frame)
    else:
        calibration, bands = serving_calibration()
        frame = predictions_frame(cases, gpus, calibration)
        limits = [bands.apply(m, p) for m, p in zip(frame["metric"], frame["predicted"],
                                                    strict=True)]
        frame["predicted_p10"] = [low for low, _ in limits]
        frame["predicted_p90"] = [high for _, high in limits]
    return ServingValidation(frame, unanswered, cases, summarise(frame), calibration, bands)


def serving_calibration_write(result: ServingValidation, path: Path) -> None:
    """Write the fit on every row and the out-of-source band factors (shipped file)."""
    summary = result.summary
    data = {
        "calibration": result.calibration.to_dict(),
        "bands": {"low": result.bands.low, "high": result.bands.high},
        "fitted_on": "simulator/data/inference_runs.csv",
        "validation": {
            "by_metric": summary.by_metric.to_dict(orient="records"),
            "by_source": summary.by_source.to_dict(orient="records"),
            "mlperf_server_latency": summary.mlperf_server_latency.to_dict(orient="records"),
        },
    }
    path.write_text(json.dumps(data, indent=2, default=float) + "\n")
    for cached in (_shipped, serving_calibration, serving_accuracy):
        cached.cache_clear()
