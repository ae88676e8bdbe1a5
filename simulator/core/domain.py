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

P10-P90 bands are the out-of-family residual quantiles scaled by `band_scale`, which grows with
the status and with the distance (octaves of GPU count or sequence length) outside the data.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, replace
from typing import Any

import numpy as np
import numpy.typing as npt

from simulator.core.hardware import efficiency_class_of, precision_class

STATUSES: tuple[str, ...] = ("calibrated", "extrapolated", "uncalibrated")
# Model groups: decoders, encoders and CNNs differ in kernels and error structure; a run of one
# group does not calibrate another (a ResNet benchmark says little about LLM training).
BAND_GROUPS: tuple[str, ...] = ("llm", "encoder", "vision")
# Band multipliers by status: fixed in advance (not tuned on the held-out families).
STATUS_BAND_SCALE: dict[str, float] = {"calibrated": 1.0, "extrapolated": 1.5,
                                       "uncalibrated": 2.5}
# Added to the band multiplier per octave outside the calibrated GPU-count / sequence range.
SCALE_OCTAVE_WIDENING = 0.15
SEQ_OCTAVE_WIDENING = 0.10
# A GPU count within this factor of calibration runs still counts as the same scale.
SCALE_SLACK = 4.0
# Band multiplier when the global batch was not given and a published-practice default was
# assumed: the per-GPU batch, and with it the GEMM sizes and the share of communication, is
# a guess (the same multiplier as an extrapolated status; fixed in advance). Out of family,
# benchmark rows without a batch err 18 % median against 8 % for the rest, whole runs 18 %
# against 15 %.
BATCH_DEFAULT_BAND_SCALE = 1.5
BATCH_DEFAULT_NOTE = "global batch not given (a published-practice default assumed)"
# Band multiplier at fp8 with row-wise scaling: the model gathers its tensor-parallel inputs
# in bf16 and slows its GEMMs by calibration.fp8_rowwise_factor, fitted on two sources only
# (6 row-wise rows); widened, not tuned (fixed in advance, like the above).
FP8_ROWWISE_BAND_SCALE = 1.5
FP8_ROWWISE_NOTE = ("fp8 row-wise scaling (its GEMM rate is fitted on two sources only: "
                    "torchtitan and torchao benchmarks)")


@dataclass(frozen=True)
class DomainEntry:
    """Calibration runs of one key ("<GPU>|<precision class>" or "<architecture>|<class>")."""

    key: str
    n_rows: int
    min_gpus: float
    max_gpus: float
    min_seq_len: float
    max_seq_len: float


@dataclass(frozen=True)
class CalibrationDomain:
    """GPU × precision and architecture × precision keys with calibration runs."""

    gpus: tuple[DomainEntry, ...] = ()
    architectures: tuple[DomainEntry, ...] = ()

    def entry(self, key: str, *, is_architecture: bool) -> DomainEntry | None:
        """The entry for `key`, or None without runs."""
        table = self.architectures if is_architecture else self.gpus
        return next((e for e in table if e.key == key), None)

    def to_dict(self) -> dict[str, list[dict[str, Any]]]:
        """JSON-safe form."""
        return {"gpus": [asdict(e) for e in self.gpus],
                "architectures": [asdict(e) for e in self.architectures]}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CalibrationDomain:
        """Inverse of to_dict. Raises ValueError on malformed entries."""
        try:
            return cls(tuple(_entry(e) for e in data.get("gpus", [])),
                       tuple(_entry(e) for e in data.get("architectures", [])))
        except (TypeError, KeyError, ValueError, AttributeError) as exc:
            raise ValueError(f"malformed calibration domain: {exc}") from exc


def _entry(data: dict[str, Any]) -> DomainEntry:
    return DomainEntry(str(data["key"]), int(data["n_rows"]), float(data["min_gpus"]),
                       float(data["max_gpus"]), float(data["min_seq_len"]),
                       float(data["max_seq_len"]))


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
    """One configuration located in the domain: GPU, precision, scale and model group."""

    gpu_name: str
    architecture: str
    precision: str
    n_gpus: float
    seq_len: float
    group: str = "llm"
    is_batch_default: bool = False
    is_fp8_rowwise: bool = False


def domain_from_points(points: list[DomainPoint]) -> CalibrationDomain:
    """Domain covered by calibration rows."""
    return CalibrationDomain(
        _entries([(gpu_key(p.gpu_name, p.precision, p.group), p) for p in points]),
        _entries([(architecture_key(p.architecture, p.precision, p.group), p) for p in points]))


def _entries(keyed: list[tuple[str, DomainPoint]]) -> tuple[DomainEntry, ...]:
    grouped: dict[str, list[DomainPoint]] = {}
    for key, point in keyed:
        grouped.setdefault(key, []).append(point)
    return tuple(DomainEntry(k, len(v), min(p.n_gpus for p in v), max(p.n_gpus for p in v),
                             min(p.seq_len for p in v), max(p.seq_len for p in v))
                 for k, v in sorted(grouped.items()))


def _octaves_outside(value: float, low: float, high: float) -> float:
    if value <= 0 or low <= 0:
        return 0.0
    if value < low:
        return math.log2(low / value)
    return math.log2(value / high) if value > high else 0.0


@dataclass(frozen=True)
class Assessment:
    """Calibration status of one configuration and its band multiplier (>= 1).

    `envelope_note` says when the configuration is outside the calibration envelope and why
    ("" inside it): no runs of the GPU or architecture at this precision, a GPU count or
    sequence length beyond the calibrated ones, a generic efficiency.
    """

    status: str
    band_scale: float
    reason: str
    envelope_note: str = ""


def envelope_note(point: DomainPoint, own: DomainEntry | None, family: DomainEntry | None,
                  scale_octaves: float, seq_octaves: float, is_shared: bool) -> str:
    """Why a configuration is outside the calibration envelope, in words ("" inside it)."""
    if family is None:
        generic = (" (its GEMMs run at the generic efficiency, which no run fits)"
                   if is_shared else "")
        return (f"outside the calibration envelope: no calibration runs of "
                f"{point.architecture} at {precision_class(point.precision)}{generic}")
    parts = []
    if own is None:
        parts.append(f"no calibration runs of the {point.gpu_name} at "
                     f"{precision_class(point.precision)} (its architecture's runs used)")
    reference = own or family
    if scale_octaves > 0:
        parts.append(f"{point.n_gpus:,.0f} GPUs is {scale_octaves:.1f} octaves outside the "
                     f"{reference.min_gpus:,.0f}-{reference.max_gpus:,.0f} GPUs calibrated")
    elif point.n_gpus > reference.max_gpus:
        # Within SCALE_SLACK the status and band stay, but the user is told.
        parts.append(f"{point.n_gpus:,.0f} GPUs is more than the largest calibration run "
                     f"({reference.max_gpus:,.0f} GPUs)")
    if seq_octaves > 0:
        parts.append(f"sequence of {point.seq_len:,.0f} tokens outside the calibrated "
                     f"{family.min_seq_len:,.0f}-{family.max_seq_len:,.0f}")
    if is_shared:
        parts.append("generic efficiency shared with other architectures")
    parts += _setting_notes(point.is_batch_default, point.is_fp8_rowwise)
    return "outside the calibration envelope: " + "; ".join(parts) if parts else ""


def _setting_notes(is_batch_default: bool, is_fp8_rowwise: bool) -> list[str]:
    return ([BATCH_DEFAULT_NOTE] if is_batch_default else []) + (
        [FP8_ROWWISE_NOTE] if is_fp8_rowwise else [])


def _setting_scale(is_batch_default: bool, is_fp8_rowwise: bool) -> float:
    return ((BATCH_DEFAULT_BAND_SCALE if is_batch_default else 1.0)
            * (FP8_ROWWISE_BAND_SCALE if is_fp8_rowwise else 1.0))


def assess(domain: CalibrationDomain, point: DomainPoint) -> Assessment:
    """Calibration status and band multiplier of one configuration (× BATCH_DEFAULT_BAND_SCALE
    when its global batch is a default, × FP8_ROWWISE_BAND_SCALE at fp8 row-wise scaling)."""
    verdict = _assess(domain, point)
    scale = _setting_scale(point.is_batch_default, point.is_fp8_rowwise)
    if scale == 1.0:
        return verdict
    return replace(verdict, band_scale=verdict.band_scale * scale)


def _assess(domain: CalibrationDomain, point: DomainPoint) -> Assessment:
    arch_key = architecture_key(point.architecture, point.precision, point.group)
    own = domain.entry(gpu_key(point.gpu_name, point.precision, point.group),
                       is_architecture=False)
    family = domain.entry(arch_key, is_architecture=True)
    shared = efficiency_class_of(point.architecture, point.precision) == "other"
    if family is None:
        note = "; ".join([envelope_note(point, own, family, 0.0, 0.0, shared),
                          *_setting_notes(point.is_batch_default, point.is_fp8_rowwise)])
        return Assessment("uncalibrated", STATUS_BAND_SCALE["uncalibrated"],
                          f"no calibration runs of {arch_key}", note)
    reference = own or family
    scale = _octaves_outside(point.n_gpus, reference.min_gpus / SCALE_SLACK,
                             reference.max_gpus * SCALE_SLACK)
    seq = _octaves_outside(point.seq_len, family.min_seq_len, family.max_seq_len)
    widening = 1.0 + SCALE_OCTAVE_WIDENING * scale + SEQ_OCTAVE_WIDENING * seq
    note = envelope_note(point, own, family, scale, seq, shared)
    if own is None or shared or scale > 0 or seq > 0:
        reason = ("no runs of this GPU at this precision" if own is None else
                  "generic efficiency shared with other architectures" if shared else
                  "outside the calibrated GPU count or sequence length")
        return Assessment("extrapolated", STATUS_BAND_SCALE["extrapolated"] * widening, reason,
                          note)
    return Assessment("calibrated", widening, f"{own.n_rows} calibration runs", note)


def envelope_notes(domain: CalibrationDomain, gpu_name: str, architecture: str, precision: str,
                   n_gpus: npt.NDArray[np.float64], seq_len: float,
                   group: str = "llm", is_batch_default: bool = False,
                   is_fp8_rowwise: bool = False) -> npt.NDArray[np.object_]:
    """assess(...).envelope_note for one GPU at many GPU counts (one assess per distinct
    count: a sweep has a handful)."""
    counts = np.asarray(n_gpus, dtype=np.float64)
    out = np.empty(counts.shape, dtype=object)
    for value in np.unique(counts):
        point = DomainPoint(gpu_name, architecture, precision, float(value), seq_len, group,
                            is_batch_default, is_fp8_rowwise)
        out[counts == value] = assess(domain, point).envelope_note
    return out


def assess_gpu_counts(domain: CalibrationDomain, gpu_name: str, architecture: str,
                      precision: str, n_gpus: npt.NDArray[np.float64], seq_len: float,
                      group: str = "llm", is_batch_default: bool = False,
                      is_fp8_rowwise: bool = False
                      ) -> tuple[npt.NDArray[np.str_], npt.NDArray[np.float64]]:
    """assess() for one GPU at many GPU counts (the sweep), vectorized: (status, band_scale).

    Same results as calling assess() per count.
    """
    status, band = _assess_gpu_counts(domain, gpu_name, architecture, precision, n_gpus,
                                      seq_len, group)
    return status, band * _setting_scale(is_batch_default, is_fp8_rowwise)


def _assess_gpu_counts(domain: CalibrationDomain, gpu_name: str, architecture: str,
                       precision: str, n_gpus: npt.NDArray[np.float64], seq_len: float,
                       group: str) -> tuple[npt.NDArray[np.str_], npt.NDArray[np.float64]]:
    counts = np.asarray(n_gpus, dtype=np.float64)
    base = _assess(domain, DomainPoint(gpu_name, architecture, precision, 1.0, seq_len, group))
    own = domain.entry(gpu_key(gpu_name, precision, group), is_architecture=False)
    family = domain.entry(architecture_key(architecture, precision, group), is_architecture=True)
    if family is None:
        return np.full(counts.shape, base.status), np.full(counts.shape, base.band_scale)
    reference = own or family
    low, high = reference.min_gpus / SCALE_SLACK, reference.max_gpus * SCALE_SLACK
    scale = np.where(counts < low, np.log2(low / counts),
                     np.where(counts > high, np.log2(np.maximum(counts, 1.0) / high), 0.0))
    seq = _octaves_outside(seq_len, family.min_seq_len, family.max_seq_len)
    widening = 1.0 + SCALE_OCTAVE_WIDENING * scale + SEQ_OCTAVE_WIDENING * seq
    shared = efficiency_class_of(architecture, precision) == "other"
    is_extrapolated = (own is None) | shared | (scale > 0) | (seq > 0)
    status = np.where(is_extrapolated, "extrapolated", "calibrated")
    band = np.where(is_extrapolated, STATUS_BAND_SCALE["extrapolated"], 1.0) * widening
    return status, band
