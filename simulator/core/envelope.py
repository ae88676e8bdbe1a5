"""The calibration envelope: the ways a prediction lies outside the runs the fit learnt from.

A DomainEntry summarises the calibration runs of one key (a GPU, an architecture or a whole
model group, each at a precision class). A configuration is measured against them axis by
axis; each axis it is outside adds its size to the *envelope distance*:

========== =============================================================== ===============
axis       outside when                                                    size
========== =============================================================== ===============
gpu        no run of this GPU at this precision class (its architecture's   1
           runs are used)
architect. no run of this architecture at this precision class in this      2
           model group (decoder, encoder, CNN)
gpu_count  more GPUs than the largest run of the GPU (else architecture);   octaves beyond;
           fewer than the smallest                                          half below
model      more parameters per GPU (params / (TP·PP)) than any run          octaves beyond
pipeline   a deeper pipeline than any run                                   octaves beyond
seq_len    a sequence length outside the runs'                              octaves outside
era        a run year outside the runs' years (only when both are known)    years / 2
metric     no run of the architecture reports this kind of figure           1
           (steady-state speed, benchmark time to train, whole run)
consumer   a consumer part (GeForce) and no consumer part among the runs    1
========== =============================================================== ===============

Fewer GPUs than any run count half: a smaller run drops communication rather than adding it.
The distance puts every prediction in one ENVELOPE_GROUPS entry (inside: 0; near: up to 1;
far: beyond; unseen: its architecture has no run at this precision, so its GEMM efficiency
is a prior, whatever else), and each group's band width is set from the out-of-family errors
of the held-out rows that were that far outside (crossval.with_bands). Sizes and group limits are
fixed in advance, not tuned on the rows they are scored on.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]

ENVELOPE_GROUPS: tuple[str, ...] = ("inside", "near", "far", "unseen")
NEAR_DISTANCE = 1.0  # the largest distance still "near"
# Each group in words (the accuracy page, validate_simulator), ENVELOPE_GROUPS order.
ENVELOPE_GROUP_WORDS: dict[str, str] = {
    "inside": "within the runs on every axis",
    "near": "one unseen GPU or up to an octave beyond them",
    "far": "further",
    "unseen": "its architecture has no run at this precision (its GEMM efficiency is a prior)"}
AXES: tuple[str, ...] = ("gpu", "architecture", "gpu_count", "model", "pipeline", "seq_len",
                         "era", "metric", "consumer")
# Each axis in a few words (tables, the accuracy page).
AXIS_LABELS: dict[str, str] = {
    "gpu": "GPU at this precision not seen", "architecture": "architecture not seen",
    "gpu_count": "GPU count", "model": "parameters per GPU", "pipeline": "pipeline depth",
    "seq_len": "sequence length", "era": "software era (year)",
    "metric": "kind of figure", "consumer": "consumer part"}
# Size of each categorical axis (numeric axes are measured in octaves or years).
UNSEEN_GPU_SIZE = 1.0
UNSEEN_ARCHITECTURE_SIZE = 2.0
SMALLER_SCALE_WEIGHT = 0.5
YEARS_PER_UNIT = 2.0
METRIC_KINDS: dict[str, str] = {"steady": "steady-state speed",
                                "time": "benchmark times to train",
                                "whole_run": "whole-run GPU-hours"}
CONSUMER_MARKERS: tuple[str, ...] = ("GeForce",)


def is_consumer_part(gpu_name: str) -> bool:
    """Whether a GPU is a consumer (gaming) part rather than a datacenter one."""
    return any(marker in gpu_name for marker in CONSUMER_MARKERS)


def metric_kind(metric: str) -> str:
    """METRIC_KINDS entry of a reference-runs metric."""
    return {"gpu_hours": "whole_run", "time_to_train_minutes": "time"}.get(metric, "steady")


@dataclass(frozen=True)
class DomainEntry:
    """Calibration runs of one key ("<GPU>|<class>|<group>", "<architecture>|<class>|<group>"
    or "<group>"). Zero in max_pp, max_params_per_gpu or the years means not recorded
    (a calibration stored before the envelope had that axis): the axis is not judged."""

    key: str
    n_rows: int
    min_gpus: float
    max_gpus: float
    min_seq_len: float
    max_seq_len: float
    max_pp: float = 0.0
    max_params_per_gpu: float = 0.0  # billions of parameters per GPU, params / (TP·PP)
    min_year: float = 0.0
    max_year: float = 0.0
    metric_kinds: tuple[str, ...] = ()
    n_consumer: int = 0


@dataclass(frozen=True)
class Placement:
    """Where configurations sit: one GPU model at one precision, many layouts (arrays)."""

    gpu_name: str
    architecture: str
    precision_class: str
    n_gpus: FloatArray
    pp: FloatArray
    params_per_gpu: FloatArray  # billions
    seq_len: float
    year: float = 0.0  # 0: unknown
    metric_kind: str = "steady"
    is_generic_efficiency: bool = False  # its GEMMs run at the unfitted generic efficiency


def params_per_gpu(params: FloatArray | float, tp: FloatArray | float,
                   pp: FloatArray | float) -> FloatArray:
    """Billions of parameters each GPU holds the weights of, params / (TP·PP): the model axis."""
    return np.asarray(np.asarray(params, dtype=np.float64) / 1e9
                      / np.maximum(np.multiply(tp, pp), 1.0), dtype=np.float64)


def _octaves_above(value: FloatArray, high: float) -> FloatArray:
    if high <= 0:
        return np.zeros(value.shape)
    return np.asarray(np.log2(np.maximum(value, high) / high), dtype=np.float64)


def _octaves_below(value: FloatArray, low: float) -> FloatArray:
    if low <= 0:
        return np.zeros(value.shape)
    return np.asarray(np.log2(low / np.clip(value, 1e-12, low)), dtype=np.float64)


def axis_sizes(place: Placement, own: DomainEntry | None, family: DomainEntry | None,
               group: DomainEntry | None) -> dict[str, FloatArray]:
    """Size of every AXES entry per configuration (0 inside), see the module table.

    `own` is the GPU's entry, `family` its architecture's, `group` the model group's (the
    reference when the architecture has no runs at all)."""
    shape = place.n_gpus.shape
    sizes = {axis: np.zeros(shape) for axis in AXES}
    if family is None:
        sizes["architecture"] += UNSEEN_ARCHITECTURE_SIZE
    elif own is None:
        sizes["gpu"] += UNSEEN_GPU_SIZE
    if is_consumer_part(place.gpu_name) and (group is None or group.n_consumer == 0):
        sizes["consumer"] += 1.0
    reference = family or group
    if reference is None:
        return sizes
    counts = own or reference
    sizes["gpu_count"] = (_octaves_above(place.n_gpus, counts.max_gpus)
                          + SMALLER_SCALE_WEIGHT * _octaves_below(place.n_gpus, counts.min_gpus))
    sizes["model"] = _octaves_above(place.params_per_gpu, reference.max_params_per_gpu)
    sizes["pipeline"] = _octaves_above(place.pp, reference.max_pp)
    seq = np.array([place.seq_len])
    sizes["seq_len"] += float((_octaves_above(seq, reference.max_seq_len)
                               + _octaves_below(seq, reference.min_seq_len))[0])
    sizes["era"] += _years_outside(place.year, reference) / YEARS_PER_UNIT
    if reference.metric_kinds and place.metric_kind not in reference.metric_kinds:
        sizes["metric"] += 1.0
    return sizes


def _years_outside(year: float, entry: DomainEntry) -> float:
    if year <= 0 or entry.min_year <= 0:
        return 0.0
    return max(entry.min_year - year, year - entry.max_year, 0.0)


def envelope_distance(sizes: dict[str, FloatArray]) -> FloatArray:
    """Sum of the axis sizes per configuration."""
    return np.asarray(sum(sizes.values()), dtype=np.float64)


def envelope_group_index(distance: FloatArray,
                         is_unseen: FloatArray | None = None) -> npt.NDArray[np.intp]:
    """Index into ENVELOPE_GROUPS of each configuration: unseen when its architecture has no
    run at this precision (`is_unseen` > 0), else by distance (inside 0, near up to
    NEAR_DISTANCE, far beyond)."""
    by_distance = np.where(distance <= 0.0, 0, np.where(distance <= NEAR_DISTANCE, 1, 2))
    unseen = np.zeros(distance.shape) if is_unseen is None else is_unseen
    return np.where(unseen > 0, 3, by_distance).astype(np.intp)


def axis_words(axis: str, place: Placement, i: int, own: DomainEntry | None,
               family: DomainEntry | None, group: DomainEntry | None) -> str:
    """One axis of configuration `i` in words (the axis must be outside)."""
    reference = family or group
    counts = own or reference
    if axis == "architecture":
        generic = (" (its GEMMs run at the generic efficiency, which no run fits)"
                   if place.is_generic_efficiency else "")
        return (f"no calibration runs of {place.architecture} at {place.precision_class} "
                f"in this model group{generic}")
    if axis == "gpu":
        return (f"no calibration runs of the {place.gpu_name} at {place.precision_class} "
                "(its architecture's runs used)")
    if axis == "consumer":
        return f"the {place.gpu_name} is a consumer part; no calibration run is on one"
    assert reference is not None and counts is not None
    n = float(place.n_gpus[i])
    words = {
        "gpu_count": (f"{n:,.0f} GPUs is more than the largest calibration run "
                      f"({counts.max_gpus:,.0f} GPUs)" if n > counts.max_gpus else
                      f"{n:,.0f} GPUs is below the smallest calibration run "
                      f"({counts.min_gpus:,.0f} GPUs)"),
        "model": (f"{float(place.params_per_gpu[i]):,.2g}B parameters per GPU (params / TP·PP) "
                  f"is more than any calibration run's ({reference.max_params_per_gpu:,.2g}B)"),
        "pipeline": (f"a {float(place.pp[i]):.0f}-stage pipeline is deeper than any calibration "
                     f"run's ({reference.max_pp:.0f})"),
        "seq_len": (f"sequence of {place.seq_len:,.0f} tokens outside the calibrated "
                    f"{reference.min_seq_len:,.0f}-{reference.max_seq_len:,.0f}"),
        "era": (f"a {place.year:.0f} run; the calibration runs date from "
                f"{reference.min_year:.0f}-{reference.max_year:.0f}"),
        "metric": (f"no calibration run of {place.architecture} at {place.precision_class} "
                   f"reports {METRIC_KINDS.get(place.metric_kind, place.metric_kind)}"),
    }
    return words[axis]


def envelope_note(axes: list[str], words: list[str], settings: list[str]) -> str:
    """The note of one configuration: the axes it is outside in words, then the settings that
    widen its band; "" inside with nothing widened."""
    if axes:
        return "; ".join(["outside the calibration envelope: " + "; ".join(words), *settings])
    return "; ".join(settings)


def entry_from_values(key: str, n_gpus: list[float], seq_len: list[float], pp: list[float],
                      params_per_gpu: list[float], years: list[float], kinds: list[str],
                      consumer: list[bool]) -> DomainEntry:
    """DomainEntry of the calibration runs with these values (years 0 = unknown, ignored)."""
    known = [y for y in years if y > 0]
    return DomainEntry(key, len(n_gpus), min(n_gpus), max(n_gpus), min(seq_len), max(seq_len),
                       max(pp), max(params_per_gpu), min(known, default=0.0),
                       max(known, default=0.0), tuple(sorted(set(kinds))), sum(consumer))


def finite_or_zero(value: float) -> float:
    """A finite float, or 0 (unknown) for NaN / infinity."""
    return value if math.isfinite(value) else 0.0
