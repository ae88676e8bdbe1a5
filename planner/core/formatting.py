"""Numbers and codes as people read them: the one formatter of pages, charts and exports.

Django-free: template filters (`planner/templatetags/numbers.py`), chart builders and report
renderers all call these. Every function takes None (or NaN) and returns an em dash, so a
missing value never prints as "None" or "nan". Units are part of the returned text unless the
name says otherwise (`number`, `count`: the caller puts the unit in a header).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from planner.core.cloud import HOURS_PER_DAY
from planner.core.layout_knobs import zero_stage_as_run
from planner.core.providers import PROVIDER_LABELS
from planner.core.purchase_options import PAYMENT_OPTIONS, PURCHASE_OPTION_LABELS

MISSING = "—"
# Shorter than this, a duration reads in hours; from here on, in days.
DAYS_FROM_HOURS = 48.0
# Scaled suffixes for large counts (tokens, samples, FLOPs): thousand, million, billion, trillion.
_SCALES: tuple[tuple[float, str], ...] = (
    (1e15, "P"), (1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "k"))

# What internal codes mean in words: purchase and payment options and providers from their
# tables (planner.core.purchase_options, planner.core.providers); the rest are plan and
# simulator codes.
LABELS: dict[str, str] = {
    **PURCHASE_OPTION_LABELS,
    **{p.code: p.label for p in PAYMENT_OPTIONS if p.code},
    "marketplace_machine": "Marketplace machine",
    "instance": "Cloud instance",
    **PROVIDER_LABELS,
    "llm": "Decoder LLM",
    "llm_moe": "Mixture-of-experts LLM",
    "llm_lora": "LoRA fine-tuning",
    "bert": "BERT encoder",
    "cnn": "CNN",
    "dataset_gb": "Data set size (GB)",
    "checkpoint_gb": "Checkpoint size (GB)",
    # precisions (planner.core.layout_knobs), as the catalog heads them
    "bf16": "BF16",
    "fp16": "FP16",
    "fp8": "FP8",
    "tf32": "TF32",
    "fp32": "FP32",
    # capacity queues (planner.capacity.core.jobs DISCIPLINES, POLICIES)
    "fifo": "FIFO",
    "backfill": "Backfill",
    "size_aware": "Size-aware",
}


def _missing(value: object) -> bool:
    return value is None or value == "" or (isinstance(value, float) and math.isnan(value))


def number(value: float | int | None, max_decimals: int = 2) -> str:
    """1979.0 -> '1,979', 989.5 -> '989.5', 0.12345 -> '0.12': thousands separators, trailing
    zeros dropped. No unit (the caller adds it)."""
    if _missing(value):
        return MISSING
    text = f"{float(value):,.{max_decimals}f}"  # type: ignore[arg-type]
    text = text.rstrip("0").rstrip(".") if "." in text else text
    return "0" if text in ("-0", "") else text


def typed_number(value: float) -> str:
    """A bound as people write it: 3,650 or 0.5 or 1e16 (never 1e+16 or 3650.0)."""
    if abs(value) >= 1e7 and value == float(f"{value:.0e}"):
        return f"{value:.0e}".replace("e+0", "e").replace("e+", "e")
    if float(value).is_integer() and abs(value) < 1e15:
        return f"{int(value):,}"
    return f"{value:,.6g}"


def count(value: float | int | None) -> str:
    """A whole count with separators: 128.0 -> '128', 20783 -> '20,783' (rounded, no '.0')."""
    if _missing(value):
        return MISSING
    return f"{round(float(value)):,}"  # type: ignore[arg-type]


def large_count(value: float | int | None, unit: str = "") -> str:
    """Large counts scaled: 2e12 -> '2.0 T', 3e11 tokens -> '300 B tokens', 950 -> '950'.

    k = thousand, M = million, B = billion, T = trillion, P = quadrillion. Three significant
    digits at most; below a thousand the plain count.
    """
    if _missing(value):
        return MISSING
    amount = float(value)  # type: ignore[arg-type]
    suffix = f" {unit}" if unit else ""
    for scale, letter in _SCALES:
        if abs(amount) >= scale:
            mantissa = amount / scale
            digits = 1 if abs(mantissa) < 100 else 0
            return f"{mantissa:,.{digits}f} {letter}{suffix}"
    return f"{count(amount)}{suffix}"


# Suffixes people type after an amount, as large_count writes them ("2.0 T tokens").
AMOUNT_SUFFIXES = {"k": 1e3, "m": 1e6, "b": 1e9, "g": 1e9, "t": 1e12, "p": 1e15}


def parse_amount(text: str) -> float:
    """An amount as a person types it: "2T", "2.0 T", "500B", "1.5e12", "2,000,000", "7M",
    "2T tokens" -> float. ValueError when it is not one."""
    cleaned = str(text).strip().replace(",", "").replace("_", "")
    for unit in ("tokens", "token", "samples", "sample"):
        if cleaned.lower().endswith(unit):
            cleaned = cleaned[: -len(unit)].strip()
            break
    cleaned = cleaned.replace(" ", "")
    factor = 1.0
    if cleaned and cleaned[-1].lower() in AMOUNT_SUFFIXES and not cleaned[-1].isdigit():
        factor = AMOUNT_SUFFIXES[cleaned[-1].lower()]
        cleaned = cleaned[:-1]
    return float(cleaned) * factor


def usd(value: float | int | None) -> str:
    """US dollars at a sensible precision: '$145,236' from $1,000 up, '$2.10' from $1, '$0.354'
    below a dollar (cheap hourly offers keep three digits), '-$12' for negative amounts."""
    if _missing(value):
        return MISSING
    amount = float(value)  # type: ignore[arg-type]
    sign, amount = ("-" if amount < 0 else ""), abs(amount)
    if amount >= 1000:
        text = f"{amount:,.0f}"
    elif amount >= 1 or amount == 0:
        text = f"{amount:,.2f}"
    else:
        text = f"{amount:.3f}"
    return f"{sign}${text}"


def usd_per(value: float | int | None, per: str) -> str:
    """A price rate: usd_per(2.1, 'GPU-hour') -> '$2.10/GPU-hour'."""
    text = usd(value)
    return text if text == MISSING else f"{text}/{per}"


def rate(value: float | int | None, unit: str) -> str:
    """A rate with three significant digits and its unit: '1,234 tokens/s', '0.452 samples/s',
    '12.3 M tokens/s' from a million up."""
    if _missing(value):
        return MISSING
    amount = float(value)  # type: ignore[arg-type]
    if abs(amount) >= 1e6:
        return large_count(amount, unit)
    if abs(amount) >= 100:
        return f"{amount:,.0f} {unit}"
    return f"{_significant(amount, 3)} {unit}"


def _significant(amount: float, digits: int) -> str:
    if amount == 0:
        return "0"
    decimals = max(0, digits - 1 - math.floor(math.log10(abs(amount))))
    return f"{amount:,.{decimals}f}"


def percent(fraction: float | int | None, decimals: int = 1) -> str:
    """A fraction as a percentage: 0.012 -> '1.2%'."""
    if _missing(fraction):
        return MISSING
    return f"{float(fraction) * 100:,.{decimals}f}%"  # type: ignore[arg-type]


def percent_points(value: float | int | None, decimals: int = 1) -> str:
    """A value already in percent, written as `percent` writes fractions: 7.46 -> '7.5%',
    2339.4 -> '2,339.4%'."""
    if _missing(value):
        return MISSING
    return percent(float(value) / 100, decimals)  # type: ignore[arg-type]


def duration(hours: float | int | None) -> str:
    """A duration from hours: in days from two days on ('125.3 days'), in hours below
    ('36 h', '5.5 h'), in minutes under an hour ('15 min', '2.0 min')."""
    if _missing(hours):
        return MISSING
    value = float(hours)  # type: ignore[arg-type]
    if value >= DAYS_FROM_HOURS:
        return f"{value / HOURS_PER_DAY:,.1f} days"
    if value < 1.0:
        minutes = value * 60.0
        return f"{_significant(minutes, 2) if minutes < 10 else f'{minutes:,.0f}'} min"
    return f"{_significant(value, 2) if value < 10 else f'{value:,.0f}'} h"


def duration_band(low_hours: float | None, high_hours: float | None) -> str:
    """A range in one unit, chosen by its upper end: '108.1–152.5 days', '5.2–9.8 h',
    '2.0–2.6 min'."""
    if _missing(low_hours) or _missing(high_hours):
        return MISSING
    low, high = float(low_hours), float(high_hours)  # type: ignore[arg-type]
    if high >= DAYS_FROM_HOURS:
        return f"{low / HOURS_PER_DAY:,.1f}–{high / HOURS_PER_DAY:,.1f} days"
    if high < 1.0:
        return f"{_significant(low * 60.0, 2)}–{_significant(high * 60.0, 2)} min"
    # one decimal at both ends: '0.9–5.4 h', not '0.89–5.4 h'
    return f"{low:,.1f}–{high:,.1f} h"


def label(code: str | None) -> str:
    """An internal code in words: 'on_demand' -> 'On-demand'; an unknown code has its
    underscores replaced and its first letter capitalised ('zero_stage' -> 'Zero stage')."""
    if code is None or code == "":
        return MISSING
    text = str(code)
    if text in LABELS:
        return LABELS[text]
    words = text.replace("_", " ")
    return words[:1].upper() + words[1:]


def compact(value: float) -> str:
    """An axis tick: 1000 -> '1k', 2.5e6 -> '2.5M', 1e12 -> '1T', 0.5 -> '0.5'."""
    for scale, letter in _SCALES:
        if abs(value) >= scale:
            return f"{_trim(value / scale)}{letter}"
    return _trim(value)


def _trim(value: float) -> str:
    text = f"{value:.2f}".rstrip("0").rstrip(".")
    return text or "0"


@dataclass(frozen=True)
class LogTicks:
    """Tick positions and their texts for a log axis (Plotly tickvals / ticktext)."""

    values: list[float]
    texts: list[str]


# Below this max/min ratio a 1-2-5 log grid leaves one tick or none in view (e.g. $190k to
# $240k): such axes get evenly stepped round ticks instead.
NARROW_LOG_SPAN = 4.0


def _narrow_ticks(low: float, high: float) -> LogTicks:
    """About five round ticks (steps of 1, 2 or 5 × 10^n) from just below `low` to just above
    `high`; three around a single value."""
    span = high - low if high > low else high * 0.2
    raw = span / 4
    base = 10.0 ** math.floor(math.log10(raw))
    step = next(base * m for m in (1.0, 2.0, 5.0, 10.0) if base * m >= raw)
    first = math.floor((low if high > low else low - span / 2) / step) * step
    last = math.ceil((high if high > low else high + span / 2) / step) * step
    ticks = [first + i * step for i in range(int(round((last - first) / step)) + 1)]
    ticks = [float(f"{t:.12g}") for t in ticks if t > 0]
    return LogTicks(ticks, [compact(t) for t in ticks])


def log_ticks(values: Sequence[float]) -> LogTicks:
    """Readable ticks for a log axis over `values` (positive entries only): 1, 2, 5 per decade
    when the data spans at most two decades, powers of ten otherwise ('1k', '10k', '1M')."""
    positive = [float(v) for v in values if v is not None and not _missing(v) and v > 0]
    if not positive:
        return LogTicks([], [])
    if max(positive) / min(positive) < NARROW_LOG_SPAN:
        return _narrow_ticks(min(positive), max(positive))
    low = math.floor(math.log10(min(positive)))
    high = math.ceil(math.log10(max(positive)))
    is_short = math.log10(max(positive) / min(positive)) <= 2
    steps = (1.0, 2.0, 5.0) if is_short else (1.0,)
    ticks = [step * 10.0**exponent for exponent in range(low, high + 1) for step in steps]
    ticks = [t for t in ticks if min(positive) / 2 <= t <= max(positive) * 2]
    return LogTicks(ticks, [compact(t) for t in ticks])


def round_ticks(high: float, target: int = 5) -> list[float]:
    """Round ticks from 0 to just above `high` (steps of 1, 2, 2.5 or 5 × 10^n, about
    `target` of them): 0, 20, 40, 60, never 39.9 / 79.8."""
    if _missing(high) or not math.isfinite(high) or high <= 0:
        return [0.0, 1.0]
    raw = high / target
    base = 10.0 ** math.floor(math.log10(raw))
    step = next(base * m for m in (1.0, 2.0, 2.5, 5.0, 10.0) if base * m >= raw)
    n = math.ceil(high / step - 1e-9)
    return [float(f"{i * step:.12g}") for i in range(n + 1)]


@dataclass(frozen=True)
class TimeScale:
    """A time axis in the unit its largest value reads in (formatting.duration's rule):
    `unit` 'hours' or 'days', `hours_per_unit` to divide by, round tick values and texts."""

    unit: str
    hours_per_unit: float
    values: list[float]
    texts: list[str]


def time_scale(hours: Sequence[float | None]) -> TimeScale:
    """Round ticks in hours below two days, in days from there (as durations read)."""
    known = [float(h) for h in hours if not _missing(h) and math.isfinite(float(h))]  # type: ignore[arg-type]
    high = max(known, default=0.0)
    unit, per = ("days", HOURS_PER_DAY) if high >= DAYS_FROM_HOURS else ("hours", 1.0)
    ticks = round_ticks(high / per)
    return TimeScale(unit, per, ticks, [number(t, 2) for t in ticks])


# Plotly's Dark24 qualitative palette with its three near-duplicate magentas and pinks swapped
# for cyan, olive yellow and grey: 24 colours distinct on a white background, so charts with
# up to 24 lines (the throughput chart has about 18) repeat none.
PALETTE: tuple[str, ...] = (
    "#2E91E5", "#E15F99", "#1CA71C", "#FB0D0D", "#DA16FF", "#222A2A", "#B68100", "#750D86",
    "#EB663B", "#511CFB", "#00A08B", "#17BECF", "#BCBD22", "#B2828D", "#6C7C32", "#778AAE",
    "#862A16", "#A777F1", "#620042", "#1616A7", "#7F7F7F", "#6C4516", "#0D2A63", "#AF0038",
)


# Marker shapes beside the colours: with 5 shapes and 24 colours (coprime) the first 120
# series each get their own pair, and lines stay apart in grey print too.
MARKER_SYMBOLS: tuple[str, ...] = ("circle", "square", "diamond", "triangle-up", "x")


def series_style(index: int) -> tuple[str, str]:
    """The colour and marker shape of a chart's `index`-th series (no two alike)."""
    return PALETTE[index % len(PALETTE)], MARKER_SYMBOLS[index % len(MARKER_SYMBOLS)]


def log_range(values: Sequence[float], pad: float = 0.06) -> list[float]:
    """A Plotly log axis range (log10 units) that holds every positive value with `pad`
    decades to spare on each side, so no marker sits on or past the plot's edge."""
    positive = [float(v) for v in values if not _missing(v) and float(v) > 0]
    if not positive:
        return [0.0, 1.0]
    return [math.log10(min(positive)) - pad, math.log10(max(positive)) + pad]


def log_axis(values: Sequence[float], title: str) -> dict[str, object]:
    """A Plotly log axis over `values` with readable ticks ('1k', '10k', '1M') and a title."""
    ticks = log_ticks(values)
    axis: dict[str, object] = {"type": "log", "title": {"text": title}}
    if ticks.values:
        axis.update(tickmode="array", tickvals=ticks.values, ticktext=ticks.texts)
    return axis


def goodput_line(overhead_pct: float | int | None, overhead_usd: float | int | None) -> str:
    """The cost-breakdown line of a whole run's goodput loss: 'expected failures, restarts
    and overhead: +28.0 % GPU-hours, $1,377,117' (MISSING for a plan stored before it)."""
    if _missing(overhead_pct):
        return MISSING
    return f"expected failures, restarts and overhead: {overhead_text(overhead_pct, overhead_usd)}"


def goodput_parts(option: Mapping[str, Any]) -> str:
    """An option's goodput loss in its two parts: 'failures, restarts and checkpoints
    (modelled): +2.0 % GPU-hours, $48,170; production overhead (evaluation, data stalls,
    rollbacks, slow nodes, ramp-up; set by the goodput profile): +9.1 % GPU-hours, $219,048'
    (goodput_line's single line for a plan stored before the split)."""
    failure = option.get("failure_overhead_gpu_hours_pct")
    if _missing(failure):
        return goodput_line(option.get("overhead_gpu_hours_pct"), option.get("overhead_usd"))
    production = overhead_text(option.get("production_overhead_gpu_hours_pct"),
                               option.get("production_overhead_usd"))
    return (f"failures, restarts and checkpoints (modelled): "
            f"{overhead_text(failure, option.get('failure_overhead_usd'))}; production overhead "
            f"(evaluation, data stalls, rollbacks, slow nodes, ramp-up; set by the goodput "
            f"profile): {production}")


def overhead_text(overhead_pct: float | int | None, overhead_usd: float | int | None) -> str:
    """A whole run's goodput loss, as its cost-breakdown line and the plan table write it:
    '+50.0 % GPU-hours, $75,619' (one decimal always, so a column of them lines up)."""
    if _missing(overhead_pct):
        return MISSING
    pct = float(overhead_pct)  # type: ignore[arg-type]
    return f"+{pct:.1f} % GPU-hours, {usd(overhead_usd)}"


def pipeline_schedule(pp: float | int | None, virtual_stages: float | int | None) -> str:
    """The pipeline schedule of a layout: '' without a pipeline, '1F1B', or 'interleaved 1F1B
    ×4' (four model chunks per stage: bubble (pp-1)/(4·micro-batches))."""
    if _missing(pp) or float(pp) <= 1:  # type: ignore[arg-type]
        return ""
    chunks = 1.0 if _missing(virtual_stages) else float(virtual_stages)  # type: ignore[arg-type]
    return "1F1B" if chunks <= 1 else f"interleaved 1F1B ×{chunks:.0f}"


def layout_label(layout: Mapping[str, Any]) -> str:
    """One line for a parallel layout, wherever a layout is shown: 'TP4 PP2 (interleaved 1F1B
    ×4) DP128 ZeRO1, selective recompute'. Context parallelism shows when used ('CP2'); a
    ZeRO stage that a pipeline runs as another says so ('ZeRO3 (runs as ZeRO1 under the
    pipeline)', layout_knobs.zero_stage_as_run)."""
    def degree(name: str) -> str:
        value = layout.get(name)
        return f"{name.upper()}{count(value if not _missing(value) else 1)}"
    schedule = pipeline_schedule(layout.get("pp"), layout.get("virtual_stages"))
    pipeline = degree("pp") + (f" ({schedule})" if schedule else "")
    zero = layout.get("zero_stage")
    zero_text = f"ZeRO{count(zero if not _missing(zero) else 0)}"
    as_run = zero_as_run(layout)
    if as_run is not None:
        zero_text += f" (runs as ZeRO{as_run} under the pipeline)"
    context = [degree("cp")] if float(layout.get("cp") or 1) > 1 else []
    parts = [degree("tp"), pipeline, *context, degree("dp"), zero_text]
    recompute = layout.get("recompute")
    if _missing(recompute) or not recompute:
        return " ".join(parts)
    mode = "no" if recompute == "none" else recompute
    return " ".join(parts) + f", {mode} recompute"


def serving_layout_label(option: Mapping[str, Any]) -> str:
    """A serving replica's layout, wherever one is shown: 'TP8 PP2 EP16' (a plan stored before
    pipelines and experts were ranked has no pp/ep: 1 each)."""
    def degree(name: str) -> str:
        value = option.get(name)
        return f"{name.upper()}{count(1 if _missing(value) else value)}"
    return " ".join(degree(name) for name in ("tp", "pp", "ep"))


def serving_gpus_per_replica(option: Mapping[str, Any]) -> int:
    """GPUs one serving replica holds, wherever shown: tp x pp (a plan stored before pipelines
    were ranked has neither gpus_per_replica nor pp: its tp)."""
    stored: Any = option.get("gpus_per_replica")
    if not _missing(stored):
        return int(stored)
    pp: Any = option.get("pp")
    return int(option["tp"]) * (1 if _missing(pp) else int(pp))


def zero_as_run(layout: Mapping[str, Any]) -> int | None:
    """The ZeRO stage a layout's pipeline runs its ZeRO stage as, when that differs (ZeRO 2/3
    under a pipeline run as ZeRO 1: layout_knobs.zero_stage_as_run); else None."""
    if _missing(layout.get("zero_stage")) or _missing(layout.get("pp")):
        return None
    zero = int(float(layout["zero_stage"]))
    as_run = int(zero_stage_as_run(float(layout["pp"]), zero))
    return as_run if as_run != zero else None


def data_year(text: object) -> str:
    """A source's data year as a reader wants it: '2023' as given, 'year not stated' for a
    source that states none (the carbon table says 'unstated ...')."""
    words = str(text or "").strip()
    return "year not stated" if not words or words.lower().startswith("unstated") else words
