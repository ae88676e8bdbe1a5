"""GPU power caps: measured throughput and energy at reduced power limits, per GPU model.

Pure: no Django. `parse_power_curves` reads pricing/data/power/power_cap_curves.csv (its .md
gives the sources: Zeus NSDI '23 traces, MLPerf and paper headlines) and keeps the measured
per-limit curves (knob `power_limit`, a numeric limit, source kind "measured trace"); the
headline rows are not curves and stay in the file for reading.

Model of a cap at `pct` % of a GPU's highest limit (`power_cap`):
- a measured GPU (V100, A40, P100, RTX 6000): each workload's curve is interpolated linearly
  in the limit's share of the curve's highest limit; the central value is the curve of the
  workload most like the plan's (a transformer: BERT on SQuAD; a CNN: ResNet-50 on ImageNet;
  otherwise the median of the GPU's curves); the band spans the GPU's other workloads.
- a GPU without a measurement (A100, H100, ...): the central value is the median over every
  measured GPU's curve of that workload, and the band spans every measured curve of every
  GPU, wider because no measurement of that GPU exists.
- jobs that never reach the cap (drawing under half of the highest limit, e.g. NCF on
  MovieLens at 38 W of 250 W) are left out: a cap they never hit says nothing about it.
relative_throughput = baseline time / capped time; relative_energy = capped energy / baseline
energy for the same work (GPU only: host power is not in the traces).
"""

from __future__ import annotations

import csv
import io
import math
import statistics
from dataclasses import dataclass

NAME = "power_cap_curves.csv"
POWER_COLUMNS = ("gpu", "workload", "knob", "power_limit_w", "relative_throughput",
                 "relative_energy", "power_w", "source_kind", "source_url", "source_date")
# Most like the plan's workload, by the simulator's workload kinds.
TRANSFORMER_CURVE = "bert_base_uncased on squad"
CNN_CURVE = "resnet50 on imagenet"
TRANSFORMER_KINDS = ("llm", "llm_moe", "llm_lora", "bert", "vit")
# A job drawing less than this share of the highest limit never meets the caps tried.
BOUND_SHARE = 0.5
# The field report's claim this model is checked against: 95 % of the speed at -28 % power.
CLAIM_SPEED, CLAIM_POWER = 0.95, 0.72


@dataclass(frozen=True)
class PowerCurve:
    """One GPU × workload: limits (W, ascending) and the ratios measured at each, relative
    to the highest limit; `power_share` = measured power / measured power at that limit."""

    gpu: str
    workload: str
    limits_w: tuple[float, ...]
    throughput: tuple[float, ...]
    energy: tuple[float, ...]
    power_share: tuple[float, ...]
    source_url: str
    source_date: str

    @property
    def max_limit_w(self) -> float:
        return self.limits_w[-1]

    def at(self, pct: float) -> tuple[float, float]:
        """(relative throughput, relative energy) at `pct` % of the highest limit."""
        shares = [w / self.max_limit_w * 100.0 for w in self.limits_w]
        return _interp(pct, shares, self.throughput), _interp(pct, shares, self.energy)

    def speed_at_power(self, power_share: float) -> float:
        """Relative throughput where measured power is `power_share` of the baseline's."""
        pairs = sorted(zip(self.power_share, self.throughput, strict=True))
        return _interp(power_share, [p for p, _ in pairs], [t for _, t in pairs])


def _interp(x: float, xs: list[float], ys: tuple[float, ...] | list[float]) -> float:
    if x < xs[0] - 1e-9 or x > xs[-1] + 1e-9:
        raise ValueError(f"{x:g} is outside the measured range {xs[0]:g}-{xs[-1]:g}")
    for i in range(1, len(xs)):
        if x <= xs[i] + 1e-9:
            span = xs[i] - xs[i - 1]
            w = 0.0 if span == 0 else (x - xs[i - 1]) / span
            return float(ys[i - 1] + w * (ys[i] - ys[i - 1]))
    return float(ys[-1])


def _curve(gpu: str, workload: str, rows: list[dict[str, str]]) -> PowerCurve:
    rows = sorted(rows, key=lambda r: float(r["power_limit_w"]))
    top_power = float(rows[-1]["power_w"])
    return PowerCurve(
        gpu=gpu, workload=workload,
        limits_w=tuple(float(r["power_limit_w"]) for r in rows),
        throughput=tuple(float(r["relative_throughput"]) for r in rows),
        energy=tuple(float(r["relative_energy"]) for r in rows),
        power_share=tuple(float(r["power_w"]) / top_power for r in rows),
        source_url=rows[-1]["source_url"], source_date=rows[-1]["source_date"])


def parse_power_curves(text: str) -> tuple[PowerCurve, ...]:
    """The measured curves of power_cap_curves.csv (see the module docstring), ordered by
    GPU then workload. ValueError "power_cap_curves.csv line N: field: why"."""
    try:
        return _parse(text)
    except csv.Error as exc:
        raise ValueError(f"{NAME}: not a readable CSV ({exc})") from None


def _parse(text: str) -> tuple[PowerCurve, ...]:
    reader = csv.DictReader(io.StringIO(text))
    missing = [c for c in POWER_COLUMNS if c not in (reader.fieldnames or ())]
    if missing:
        raise ValueError(f"power_cap_curves.csv: missing columns {missing}")
    groups: dict[tuple[str, str], list[dict[str, str]]] = {}
    for line, raw in enumerate(reader, start=2):
        row = {k: (raw.get(k) or "") for k in POWER_COLUMNS}
        if row["knob"] != "power_limit" or not row["source_kind"].startswith("measured"):
            continue
        for name in ("power_limit_w", "relative_throughput", "relative_energy", "power_w"):
            try:
                value = float(row[name])
            except (TypeError, ValueError):
                raise ValueError(f"power_cap_curves.csv line {line}: {name}: not a number "
                                 f"({row[name]!r})") from None
            if not (math.isfinite(value) and value > 0):
                raise ValueError(f"power_cap_curves.csv line {line}: {name}: must be > 0")
        workload = row["workload"].removeprefix("training ").split(",")[0].strip()
        groups.setdefault((row["gpu"].strip(), workload), []).append(row)
    curves = [_curve(gpu, workload, rows) for (gpu, workload), rows in sorted(groups.items())
              if len(rows) >= 2]
    if not curves:
        raise ValueError("power_cap_curves.csv: no measured power-limit curve")
    return tuple(c for c in curves if _is_bound(c, groups[(c.gpu, c.workload)]))


def _is_bound(curve: PowerCurve, rows: list[dict[str, str]]) -> bool:
    top = max(rows, key=lambda r: float(r["power_limit_w"]))
    return float(top["power_w"]) >= BOUND_SHARE * curve.max_limit_w


@dataclass(frozen=True)
class PowerCap:
    """A cap's effect on one GPU model: ratios to the uncapped run (central and band)."""

    gpu: str
    pct: float
    throughput: float
    energy: float
    throughput_low: float
    throughput_high: float
    energy_low: float
    energy_high: float
    measured_gpu: str  # "" when the GPU has no measurement
    curve: str  # the workload the central value comes from
    basis: str  # one sentence: where the numbers come from
    claim: str  # what the measurements say about 95 % speed at 72 % power

    @property
    def is_measured(self) -> bool:
        return bool(self.measured_gpu)


def measured_gpu(gpu: str, curves: tuple[PowerCurve, ...]) -> str:
    """The measured GPU name a plan's GPU ("V100 SXM2-16GB") matches, "" if none."""
    names = sorted({c.gpu for c in curves}, key=len, reverse=True)
    text = gpu.strip().lower()
    return next((n for n in names if text == n.lower() or text.startswith(n.lower() + " ")),
                "")


def _central_workload(kind: str) -> str:
    return TRANSFORMER_CURVE if kind in TRANSFORMER_KINDS else CNN_CURVE


def measured_gpus_text(curves: tuple[PowerCurve, ...]) -> str:
    """The measured GPUs of the table, in its order: "A40, P100, RTX 6000 and V100"."""
    names = list(dict.fromkeys(c.gpu for c in curves))
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def _claim(gpu: str, own: list[PowerCurve], every: tuple[PowerCurve, ...]) -> str:
    if not own:
        count = len({c.gpu for c in every})
        return (f"No measured power-limit curve of the {gpu}: the field report's 95 % of the "
                f"speed at 28 % less power cannot be checked on it. On the {count} measured "
                f"GPUs ({measured_gpus_text(every)}) {_best_claim_text(list(every))}")
    return f"On the {gpu}, {_best_claim_text(own)}"


def _best_claim_text(own: list[PowerCurve]) -> str:
    speeds = []
    for curve in own:
        try:
            speeds.append((curve.speed_at_power(CLAIM_POWER), curve))
        except ValueError:
            continue
    if not speeds:
        return "no measured point reaches 72 % of the baseline power."
    best, curve = max(speeds, key=lambda s: s[0])
    hits = sum(1 for s, _ in speeds if s >= CLAIM_SPEED)
    return (f"{hits} of {len(speeds)} measured workloads keep 95 % of the speed at 72 % of "
            f"the measured power; the best keeps {best:.2f} ({curve.workload}, {curve.gpu}).")


def power_cap(gpu: str, pct: float, kind: str, curves: tuple[PowerCurve, ...]) -> PowerCap:
    """The cap's ratios for `gpu` at `pct` % of its highest limit (see module docstring).
    ValueError when `pct` is outside a measured GPU's measured range."""
    name = measured_gpu(gpu, curves)
    wanted = _central_workload(kind)
    own = [c for c in curves if c.gpu == name] if name else list(curves)
    points = [(c, *c.at(pct)) for c in own if c.limits_w[0] / c.max_limit_w * 100 <= pct + 1e-9]
    if not points:
        raise ValueError(f"power_limit_pct: {pct:g} % is below every measured limit of {gpu}")
    central = [p for p in points if p[0].workload == wanted] or points
    throughput = statistics.median(p[1] for p in central)
    energy = statistics.median(p[2] for p in central)
    scope = (f"measured on the {name} (Zeus NSDI '23 traces, {central[0][0].workload}); band: "
             f"the {name}'s other workloads" if name else
             f"no measurement of the {gpu}: median of the measured GPUs' {wanted} curves; band: "
             f"every measured curve of {measured_gpus_text(curves)}, wider for that reason")
    return PowerCap(
        gpu=gpu, pct=pct, throughput=throughput, energy=energy,
        throughput_low=min(p[1] for p in points), throughput_high=max(p[1] for p in points),
        energy_low=min(p[2] for p in points), energy_high=max(p[2] for p in points),
        measured_gpu=name, curve=central[0][0].workload if len(central) == 1 else wanted,
        basis=f"{pct:g} % of the highest power limit: {scope}.",
        claim=_claim(name or gpu, [c for c in curves if c.gpu == name] if name else [], curves))
