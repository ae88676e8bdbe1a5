"""Where the calibration has data, and how sure a prediction outside it can be.

Every prediction carries a calibration status:
- ``calibrated``: its GPU × precision class has calibration runs of the same model group
  (decoder LLM, encoder, CNN), at a similar scale (GPU count within a factor SCALE_SLACK of
  those runs) and with a fitted efficiency of its own;
- ``extrapolated``: its architecture has runs of that group, but not this GPU, precision,
  scale or sequence length, or its architecture shares the generic efficiency;
- ``uncalibrated``: no run of that architecture × precision class × model group informs the
  fit (e.g. any CDNA or Gaudi run, LLM training on Blackwell or Ada today): the efficiency is
  the prior. Runs at the generic efficiency are validated but do not inform the fit
  (fitting.family_weights), so they do not enter the domain either.

It also carries its envelope (see envelope: the axes it is outside, their distance and the
group that distance falls in). P10-P90 bands are the band class's out-of-family residual
quantiles scaled by `band_scale`: the envelope group's width (CalibrationDomain.
envelope_scales, set from the out-of-family errors of rows that far outside, see
crossval.with_bands) times the fixed multipliers of a guessed batch or row-wise fp8.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, replace
from typing import Any

import numpy as np
import numpy.typing as npt

from simulator.core.envelope import (
    AXES,
    ENVELOPE_GROUPS,
    DomainEntry,
    Placement,
    axis_sizes,
    axis_words,
    entry_from_values,
    envelope_distance,
    envelope_group_index,
    envelope_note,
    finite_or_zero,
    is_consumer_part,
)
from simulator.core.hardware import efficiency_class_of, precision_class

__all__ = ["BAND_GROUPS", "DEFAULT_ENVELOPE_SCALES", "Assessment", "CalibrationDomain",
           "DomainEntry", "DomainPoint", "ManyAssessments", "assess", "assess_many",
           "band_group", "domain_from_points", "setting_scale"]

STATUSES: tuple[str, ...] = ("calibrated", "extrapolated", "uncalibrated")
# Model groups: decoders, encoders and CNNs differ in kernels and error structure; a run of one
# group does not calibrate another (a ResNet benchmark says little about LLM training).
BAND_GROUPS: tuple[str, ...] = ("llm", "encoder", "vision")
# Band multipliers of the envelope groups (ENVELOPE_GROUPS order) before a fit sets them from
# out-of-family errors: the multipliers the statuses had (fixed in advance).
DEFAULT_ENVELOPE_SCALES: tuple[float, ...] = (1.0, 1.5, 2.0, 2.5)
# A GPU count within this factor of calibration runs still counts as the same scale (status).
SCALE_SLACK = 4.0
# Band multiplier when the global batch was not given and a published-practice default was
# assumed: the per-GPU batch, and with it the GEMM sizes and the share of communication, is
# a guess (fixed in advance). Out of family, benchmark rows without a batch err 18 % median
# against 8 % for the rest, whole runs 18 % against 15 %.
BATCH_DEFAULT_BAND_SCALE = 1.5
BATCH_DEFAULT_NOTE = "global batch not given (a published-practice default assumed)"
# Band multiplier at fp8 with row-wise scaling: the model gathers its tensor-parallel inputs
# in bf16 and slows its GEMMs by calibration.fp8_rowwise_factor, fitted on two sources only
# (6 row-wise rows); widened, not tuned (fixed in advance, like the above).
FP8_ROWWISE_BAND_SCALE = 1.5
FP8_ROWWISE_NOTE = ("fp8 row-wise scaling (its GEMM rate is fitted on two sources only: "
                    "torchtitan and torchao benchmarks)")


@dataclass(frozen=True)
class CalibrationDomain:
    """GPU, architecture and model-group keys with calibration runs (each × precision class),
    and the band multiplier of each envelope group (ENVELOPE_GROUPS order)."""

    gpus: tuple[DomainEntry, ...] = ()
    architectures: tuple[DomainEntry, ...] = ()
    groups: tuple[DomainEntry, ...] = ()
    envelope_scales: tuple[float, ...] = field(default=DEFAULT_ENVELOPE_SCALES)

    def __post_init__(self) -> None:
        if len(self.envelope_scales) != len(ENVELOPE_GROUPS) or not all(
                math.isfinite(s) and s > 0 for s in self.envelope_scales):
            raise ValueError(f"envelope_scales must be {len(ENVELOPE_GROUPS)} positive numbers")

    def entry(self, key: str, *, is_architecture: bool) -> DomainEntry | None:
        """The entry for `key`, or None without runs."""
        table = self.architectures if is_architecture else self.gpus
        return next((e for e in table if e.key == key), None)

    def group_entry(self, group: str) -> DomainEntry | None:
        """The model group's entry (every architecture and precision), or None."""
        return next((e for e in self.groups if e.key == group), None)

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe form."""
        return {"gpus": [asdict(e) for e in self.gpus],
                "architectures": [asdict(e) for e in self.architectures],
                "groups": [asdict(e) for e in self.groups],
                "envelope_scales": [float(s) for s in self.envelope_scales]}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CalibrationDomain:
        """Inverse of to_dict (older dicts without groups or scales get the defaults).
        Raises ValueError on malformed entries."""
        try:
            return cls(tuple(_entry(e) for e in data.get("gpus", [])),
                       tuple(_entry(e) for e in data.get("architectures", [])),
                       tuple(_entry(e) for e in data.get("groups", [])),
                       tuple(float(s) for s in data.get("envelope_scales",
                                                        DEFAULT_ENVELOPE_SCALES)))
        except (TypeError, KeyError, ValueError, AttributeError) as exc:
            raise ValueError(f"malformed calibration domain: {exc}") from exc

    def with_envelope_scales(self, scales: tuple[float, ...]) -> CalibrationDomain:
        """Copy with the envelope groups' band multipliers set."""
        return replace(self, envelope_scales=tuple(float(s) for s in scales))


def _entry(data: dict[str, Any]) -> DomainEntry:
    return DomainEntry(str(data["key"]), int(data["n_rows"]), float(data["min_gpus"]),
                       float(data["max_gpus"]), float(data["min_seq_len"]),
                       float(data["max_seq_len"]), float(data.get("max_pp", 0.0)),
                       float(data.get("max_params_per_gpu", 0.0)),
                       float(data.get("min_year", 0.0)), float(data.get("max_year", 0.0)),
                       tuple(str(k) for k in data.get("metric_kinds", ())),
                       int(data.get("n_consumer", 0)))


def band_group(workload_kind: str) -> str:
    """BAND_GROUPS entry of a workload kind (bert -> encoder, resnet50 -> vision, else llm)."""
    return {"bert": "encoder", "resnet50": "vision"}.get(workload_kind, "llm")


def gpu_key(gpu_name: str, precision: str, group: str = "llm") -> str:
    """Domain key of a GPU at a precision for a model group: "<GPU>|<precision class>|<group>"."""
    return f"{gpu_name}|{precision_class(precision)}|{group}"


def architecture_key(architecture: str, precision: str, group: str = "llm") -> str:
    """Domain key of an architecture: "<architecture>|<precision class>|<group>"."""
    return f"{architecture}|{precision_class(precision)}|{group}"


@dataclass(frozen=True)
class DomainPoint:
    """One configuration located in the domain: GPU, precision, scale, model group, layout,
    run year (0: unknown) and the kind of figure predicted (envelope.METRIC_KINDS)."""

    gpu_name: str
    architecture: str
    precision: str
    n_gpus: float
    seq_len: float
    group: str = "llm"
    is_batch_default: bool = False
    is_fp8_rowwise: bool = False
    pp: float = 1.0
    params_per_gpu: float = 0.0  # billions of parameters per GPU, params / (TP·PP)
    year: float = 0.0
    metric_kind: str = "steady"


def domain_from_points(points: list[DomainPoint]) -> CalibrationDomain:
    """Domain covered by calibration rows."""
    return CalibrationDomain(
        _entries([(gpu_key(p.gpu_name, p.precision, p.group), p) for p in points]),
        _entries([(architecture_key(p.architecture, p.precision, p.group), p) for p in points]),
        _entries([(p.group, p) for p in points]))


def _entries(keyed: list[tuple[str, DomainPoint]]) -> tuple[DomainEntry, ...]:
    grouped: dict[str, list[DomainPoint]] = {}
    for key, point in keyed:
        grouped.setdefault(key, []).append(point)
    return tuple(entry_from_values(
        k, [p.n_gpus for p in v], [p.seq_len for p in v], [p.pp for p in v],
        [finite_or_zero(p.params_per_gpu) for p in v], [finite_or_zero(p.year) for p in v],
        [p.metric_kind for p in v], [is_consumer_part(p.gpu_name) for p in v])
        for k, v in sorted(grouped.items()))


@dataclass(frozen=True)
class Assessment:
    """Calibration status of one configuration, its band multiplier (> 0) and its envelope.

    `envelope` lists the envelope.AXES it is outside (() inside), `envelope_distance` their
    summed size and `envelope_group` the ENVELOPE_GROUPS entry it falls in. `envelope_note`
    says in words which ways it is outside and what else widens its band ("" when nothing).
    """

    status: str
    band_scale: float
    reason: str
    envelope_note: str = ""
    envelope: tuple[str, ...] = ()
    envelope_distance: float = 0.0
    envelope_group: str = "inside"


@dataclass(frozen=True)
class ManyAssessments:
    """assess() of many layouts of one GPU model (arrays, one entry per configuration)."""

    status: npt.NDArray[np.str_]
    reason: npt.NDArray[np.object_]
    band_scale: npt.NDArray[np.float64]
    notes: npt.NDArray[np.object_]
    envelope: npt.NDArray[np.object_]  # ";"-joined axes outside, "" inside
    distance: npt.NDArray[np.float64]
    group: npt.NDArray[np.str_]


def _setting_notes(is_batch_default: bool, is_fp8_rowwise: bool) -> list[str]:
    return ([BATCH_DEFAULT_NOTE] if is_batch_default else []) + (
        [FP8_ROWWISE_NOTE] if is_fp8_rowwise else [])


def setting_scale(point: DomainPoint) -> float:
    """The fixed band multiplier of a point's settings (a guessed batch, row-wise fp8)."""
    return _setting_scale(point.is_batch_default, point.is_fp8_rowwise)


def _setting_scale(is_batch_default: bool, is_fp8_rowwise: bool) -> float:
    return ((BATCH_DEFAULT_BAND_SCALE if is_batch_default else 1.0)
            * (FP8_ROWWISE_BAND_SCALE if is_fp8_rowwise else 1.0))


def assess(domain: CalibrationDomain, point: DomainPoint) -> Assessment:
    """Calibration status, envelope and band multiplier of one configuration (the envelope
    group's scale, × BATCH_DEFAULT_BAND_SCALE when its global batch is a default, ×
    FP8_ROWWISE_BAND_SCALE at fp8 row-wise scaling)."""
    many = assess_many(domain, point.gpu_name, point.architecture, point.precision,
                       np.array([float(point.n_gpus)]), point.seq_len, point.group,
                       point.is_batch_default, point.is_fp8_rowwise,
                       pp=np.array([float(point.pp)]),
                       params_per_gpu=np.array([float(point.params_per_gpu)]),
                       year=point.year, metric_kind=point.metric_kind)
    envelope = str(many.envelope[0])
    return Assessment(str(many.status[0]), float(many.band_scale[0]),
                      str(many.reason[0]), str(many.notes[0]),
                      tuple(envelope.split(";")) if envelope else (),
                      float(many.distance[0]), str(many.group[0]))


def _status(own: DomainEntry | None, family: DomainEntry | None, family_key: str,
            architecture: str, precision: str, counts: npt.NDArray[np.float64],
            seq_len: float) -> tuple[npt.NDArray[np.str_], npt.NDArray[np.object_]]:
    """(calibration status, its reason) per GPU count: the module docstring's rule, once."""
    if family is None:
        return (np.full(counts.shape, "uncalibrated"),
                np.full(counts.shape, f"no calibration runs of {family_key}", dtype=object))
    reference = own or family
    low, high = reference.min_gpus / SCALE_SLACK, reference.max_gpus * SCALE_SLACK
    outside = (counts < low) | (counts > high)
    outside |= not family.min_seq_len <= seq_len <= family.max_seq_len
    if own is None:
        reason = np.full(counts.shape, "no runs of this GPU at this precision", dtype=object)
    elif efficiency_class_of(architecture, precision) == "other":
        reason = np.full(counts.shape, "generic efficiency shared with other architectures",
                         dtype=object)
    else:
        reason = np.full(counts.shape, f"{own.n_rows} calibration runs", dtype=object)
        reason[outside] = "outside the calibrated GPU count or sequence length"
        return np.where(outside, "extrapolated", "calibrated"), reason
    return np.full(counts.shape, "extrapolated"), reason


def assess_many(domain: CalibrationDomain, gpu_name: str, architecture: str, precision: str,
                n_gpus: npt.NDArray[np.float64], seq_len: float, group: str = "llm",
                is_batch_default: bool = False, is_fp8_rowwise: bool = False, *,
                pp: npt.NDArray[np.float64] | None = None,
                params_per_gpu: npt.NDArray[np.float64] | None = None,
                year: float = 0.0, metric_kind: str = "steady") -> ManyAssessments:
    """assess() for one GPU model at many GPU counts and layouts (the sweep), vectorized;
    notes are worded once per distinct set of outside values (a sweep has a handful)."""
    counts = np.asarray(n_gpus, dtype=np.float64)
    place = Placement(gpu_name, architecture, precision_class(precision), counts,
                      np.ones(counts.shape) if pp is None else np.asarray(pp, dtype=np.float64),
                      np.zeros(counts.shape) if params_per_gpu is None
                      else np.asarray(params_per_gpu, dtype=np.float64), seq_len, year,
                      metric_kind, efficiency_class_of(architecture, precision) == "other")
    own = domain.entry(gpu_key(gpu_name, precision, group), is_architecture=False)
    family_key = architecture_key(architecture, precision, group)
    family = domain.entry(family_key, is_architecture=True)
    group_entry = domain.group_entry(group)
    sizes = axis_sizes(place, own, family, group_entry)
    distance = envelope_distance(sizes)
    index = envelope_group_index(distance, sizes["architecture"])
    scale = (np.asarray(domain.envelope_scales, dtype=np.float64)[index]
             * _setting_scale(is_batch_default, is_fp8_rowwise))
    envelope, notes = _words(sizes, place, own, family, group_entry,
                             _setting_notes(is_batch_default, is_fp8_rowwise))
    status, reason = _status(own, family, family_key, architecture, precision, counts, seq_len)
    return ManyAssessments(status, reason, scale, notes, envelope, distance,
                           np.asarray(ENVELOPE_GROUPS)[index])


def _words(sizes: dict[str, npt.NDArray[np.float64]], place: Placement,
           own: DomainEntry | None, family: DomainEntry | None, group: DomainEntry | None,
           settings: list[str]) -> tuple[npt.NDArray[np.object_], npt.NDArray[np.object_]]:
    """(";"-joined axes outside, note) per configuration."""
    outside = np.stack([sizes[a] > 0 for a in AXES], axis=1)
    # Rows alike in what is outside and in the values the words quote share one note.
    quoted = np.stack([np.where(sizes["gpu_count"] > 0, place.n_gpus, 0.0),
                       np.where(sizes["pipeline"] > 0, place.pp, 0.0),
                       np.where(sizes["model"] > 0, np.round(place.params_per_gpu, 2), 0.0)],
                      axis=1)
    keys = np.concatenate([outside.astype(np.float64), quoted], axis=1)
    unique, first, inverse = np.unique(keys, axis=0, return_index=True, return_inverse=True)
    envelope = np.empty(len(unique), dtype=object)
    notes = np.empty(len(unique), dtype=object)
    for u, i in enumerate(first):
        axes = [a for a, flag in zip(AXES, outside[i], strict=True) if flag]
        words = [axis_words(a, place, int(i), own, family, group) for a in axes]
        envelope[u], notes[u] = ";".join(axes), envelope_note(axes, words, settings)
    flat = np.asarray(inverse).reshape(-1)
    return envelope[flat], notes[flat]
