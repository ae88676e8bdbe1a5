"""Leave-one-source-out validation, split-conformal bands and the rule-of-thumb baseline.

`cross_validate` refits the calibration without each source and predicts that source's rows, so
every figure is out-of-source. A held-out source's P10-P90 band for a metric uses the 10th and
90th percentiles of the *other* sources' out-of-source log residuals of that metric's class
(split conformal, Mondrian by BAND_CLASS), stretched about their median until, source by source
among those others, a source's residuals fall inside the band of the rest TARGET_COVERAGE of the
time (nested leave-one-source-out), so no row or source sets its own band. The rule of thumb
(decode at HBM bandwidth, prefill at 40 % of peak: engine.RULE_OF_THUMB) is scored on the same
rows.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from simulator.core.hardware import GpuSpec
from simulator.core.serving.engine import RULE_OF_THUMB, ServingCalibration
from simulator.core.serving.fit import fit_serving
from simulator.core.serving.predict import predict_case
from simulator.core.serving.runs import METRICS, ServingCase

BAND_QUANTILES = (0.1, 0.9)
MIN_RESIDUALS = 8
# Share of a new publication's values the P10-P90 band should hold (the middle of 70-90 %):
# residuals of one publication are shifted together (software version, its own prompt mix),
# so quantiles pooled over other publications alone under-cover it.
TARGET_COVERAGE = 0.8
WIDENING_GRID = np.round(np.arange(1.0, 4.01, 0.05), 2)
# Bands are set per class of metric: TTFT and TPOT share one (both come from the same load
# point and too few publications measure each alone to estimate a shift between them).
BAND_CLASS: dict[str, str] = {"throughput_tokens_per_s": "throughput", "ttft_ms": "latency",
                              "tpot_ms": "latency"}
PREDICTION_COLUMNS: tuple[str, ...] = ("row_id", "metric", "value", "predicted",
                                       "predicted_p10", "predicted_p90")


@dataclass(frozen=True)
class Bands:
    """Log-residual quantiles (measured / predicted) per metric: the P10-P90 band factors."""

    low: dict[str, float]
    high: dict[str, float]

    def apply(self, metric: str, predicted: float) -> tuple[float, float]:
        if metric not in self.low or not (predicted > 0 and math.isfinite(predicted)):
            return math.nan, math.nan
        return predicted * math.exp(self.low[metric]), predicted * math.exp(self.high[metric])


def predictions_frame(cases: Sequence[ServingCase], gpus: dict[str, GpuSpec],
                      cal: ServingCalibration) -> pd.DataFrame:
    """One row per (case, metric the case's load defines): row_id, source, metric, value
    (NaN where not measured), predicted, rule_predicted, assumptions."""
    rows = []
    for case in cases:
        model = predict_case(case, gpus, cal)
        rule = predict_case(case, gpus, RULE_OF_THUMB)
        for metric in METRICS:
            if metric not in model and math.isnan(case.measured_value(metric)):
                continue
            rows.append({"row_id": case.row_id, "source": case.source, "metric": metric,
                         "value": case.measured_value(metric),
                         "predicted": model.get(metric, math.nan),
                         "rule_predicted": rule.get(metric, math.nan),
                         "assumptions": "; ".join(case.assumptions)})
    return pd.DataFrame(rows)


def log_residuals(frame: pd.DataFrame) -> pd.Series:
    """log(measured / predicted); NaN where either is missing or the prediction failed."""
    ok = (frame["value"] > 0) & (frame["predicted"] > 0) & np.isfinite(frame["predicted"])
    out = pd.Series(np.nan, index=frame.index)
    out[ok] = np.log(frame.loc[ok, "value"] / frame.loc[ok, "predicted"])
    return out


def _band(sample: pd.Series, widening: float) -> tuple[float, float]:
    """P10-P90 of log residuals, stretched `widening` times about their median."""
    low, mid, high = np.quantile(sample, (BAND_QUANTILES[0], 0.5, BAND_QUANTILES[1]))
    return float(mid + widening * (low - mid)), float(mid + widening * (high - mid))


def _metric_sample(residuals: pd.Series, metrics: pd.Series, metric: str) -> pd.Series:
    sample = residuals[metrics.map(BAND_CLASS) == BAND_CLASS[metric]].dropna()
    return sample if len(sample) >= MIN_RESIDUALS else residuals.dropna()


def _widening(residuals: pd.Series, metrics: pd.Series, sources: pd.Series,
              metric: str) -> float:
    """The smallest stretch of the P10-P90 band whose leave-one-source-out coverage of
    `metric` among these rows reaches TARGET_COVERAGE: each source's residuals are checked
    against the band of the others', so a shift between publications widens the band."""
    held_out = [(source, residuals[(sources == source)
                                   & (metrics.map(BAND_CLASS) == BAND_CLASS[metric])].dropna())
                for source in sorted(set(sources))]
    samples = [(part, _metric_sample(residuals[sources != source], metrics[sources != source],
                                     metric)) for source, part in held_out if len(part)]
    total = sum(len(part) for part, _ in samples)
    for widening in WIDENING_GRID:
        covered = 0
        for part, rest in samples:
            if len(rest):
                low, high = _band(rest, widening)
                covered += int(((part >= low) & (part <= high)).sum())
        if total == 0 or covered >= TARGET_COVERAGE * total:
            return float(widening)
    return float(WIDENING_GRID[-1])


def bands_from(frame: pd.DataFrame) -> Bands:
    """Band factors from out-of-sample residuals (`frame` has source and metric columns):
    per metric, the P10-P90 of its residuals stretched by the widening that covers
    TARGET_COVERAGE of each source's residuals from the other sources' (nested
    leave-one-source-out); metrics with fewer than MIN_RESIDUALS residuals borrow the pooled
    residuals of all metrics."""
    residuals = log_residuals(frame)
    low, high = {}, {}
    for metric in METRICS:
        sample = _metric_sample(residuals, frame["metric"], metric)
        if len(sample):
            widening = _widening(residuals, frame["metric"], frame["source"], metric)
            low[metric], high[metric] = _band(sample, widening)
    return Bands(low, high)


def cross_validate(cases: Sequence[ServingCase], gpus: dict[str, GpuSpec],
                   progress: Callable[[str], None] | None = None) -> pd.DataFrame:
    """Out-of-source predictions of every case (fold = its source) with conformal bands."""
    sources = sorted({c.source for c in cases})
    parts = []
    for source in sources:
        train = [c for c in cases if c.source != source]
        test = [c for c in cases if c.source == source]
        if progress:
            progress(f"fitting without {source} ({len(train)} rows)")
        cal = fit_serving(train, gpus)
        part = predictions_frame(test, gpus, cal)
        part["fold"] = source
        parts.append(part)
    frame = pd.concat(parts, ignore_index=True)
    frame["predicted_p10"] = np.nan
    frame["predicted_p90"] = np.nan
    for source in sources:
        held = frame["fold"] == source
        bands = bands_from(frame[~held])
        limits = [bands.apply(str(m), float(p)) for m, p in
                  zip(frame.loc[held, "metric"], frame.loc[held, "predicted"], strict=True)]
        frame.loc[held, "predicted_p10"] = [low for low, _ in limits]
        frame.loc[held, "predicted_p90"] = [high for _, high in limits]
    return frame


def _ape(frame: pd.DataFrame, column: str) -> pd.Series:
    """Absolute percentage error; a failed prediction (NaN/inf) counts as 100 %+ (inf)."""
    predicted = frame[column].where(np.isfinite(frame[column]) & (frame[column] > 0), np.inf)
    return (predicted - frame["value"]).abs() / frame["value"] * 100.0


@dataclass(frozen=True)
class Summary:
    """Accuracy tables (percentages)."""

    by_metric: pd.DataFrame  # metric, rows, median_ape, p90_ape, band_coverage, rule_*
    by_source: pd.DataFrame  # source, rows, median_ape, rule_median_ape, beats_rule
    mlperf_server_latency: pd.DataFrame  # metric, rows, median_ape, rule_median_ape (P99s)


def summarise(frame: pd.DataFrame) -> Summary:
    """The tables validate_serving prints, from a predictions frame with measured values."""
    measured = frame[frame["value"].notna()].copy()
    measured["ape"] = _ape(measured, "predicted")
    measured["rule_ape"] = _ape(measured, "rule_predicted")
    has_band = "predicted_p10" in measured
    if has_band:
        measured["covered"] = ((measured["value"] >= measured["predicted_p10"])
                               & (measured["value"] <= measured["predicted_p90"]))
    metric_rows = []
    for metric, group in measured.groupby("metric", sort=False):
        metric_rows.append({
            "metric": metric, "rows": len(group), "median_ape": group["ape"].median(),
            "p90_ape": group["ape"].quantile(0.9, interpolation="lower"),
            "band_coverage": group["covered"].mean() * 100.0 if has_band else math.nan,
            "rule_median_ape": group["rule_ape"].median(),
            "rule_p90_ape": group["rule_ape"].quantile(0.9, interpolation="lower")})
    source_rows = []
    for source, group in measured.groupby("source"):
        model, rule = group["ape"].median(), group["rule_ape"].median()
        source_rows.append({"source": source, "rows": len(group), "median_ape": model,
                            "rule_median_ape": rule, "beats_rule": bool(model < rule)})
    server = measured[(measured["source"] == "mlperf-v4.1")
                      & measured["metric"].isin(["ttft_ms", "tpot_ms"])]
    server_rows = [{"metric": m, "rows": len(g), "median_ape": g["ape"].median(),
                    "rule_median_ape": g["rule_ape"].median()}
                   for m, g in server.groupby("metric")]
    return Summary(pd.DataFrame(metric_rows), pd.DataFrame(source_rows),
                   pd.DataFrame(server_rows))
