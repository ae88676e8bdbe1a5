"""Rank serving configurations over GPU offers: replicas, cost per month and per million tokens,
predicted P99 TTFT/TPOT with bands, utilisation and carbon.

For each GPU kind and tensor-parallel degree that fits in one instance, the calibrated serving
model gives one replica's goodput (the highest Poisson rate whose P99 TTFT and TPOT meet the
targets). Replicas = ceil(rate / goodput), packed into whole instances; the deployed fleet's
latencies are predicted at the rate each replica then carries. Cost per million tokens splits
the fleet's cost between prompt and output tokens by the share of replica time each phase takes
(prefill vs decode). Units: USD, hours (730 per month), seconds inside, ms out, kg CO2e.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from planner.core.cloud import HOURS_PER_MONTH
from simulator.core.hardware import GpuSpec, fabric_gbytes_per_s
from simulator.core.serving.crossval import Bands
from simulator.core.serving.engine import Replica, ServingCalibration, prefill_seconds
from simulator.core.serving.models import ServingModel, check_precision
from simulator.core.serving.queueing import Traffic, at_rate
from simulator.core.serving.targets import Targets, goodput_rate, load_curve, saturation_rate

TP_DEGREES: tuple[int, ...] = (1, 2, 4, 8)
MAX_OPTIONS = 60
SECONDS_PER_MONTH = HOURS_PER_MONTH * 3600.0


@dataclass(frozen=True)
class ServingOffer:
    """One current price of an instance type (from pricing.selectors via the service)."""

    provider: str
    instance_type: str
    region: str
    purchase_option: str
    gpu: str  # catalog name, "<model> <variant>"
    gpus_per_instance: int
    usd_per_hour: float
    as_of: str
    source: str
    basis: str  # listed, derived or estimated
    g_co2e_per_kwh: float = math.nan
    pue: float = math.nan


@dataclass(frozen=True)
class ServingRequest:
    """What to serve: a model at a precision, Poisson traffic and P99 targets (inf: none)."""

    model: ServingModel
    precision: str
    rate_per_s: float
    prompt_tokens: float
    output_tokens: float
    ttft_p99_s: float
    tpot_p99_s: float

    def __post_init__(self) -> None:
        check_precision(self.precision)
        if not self.rate_per_s > 0:
            raise ValueError("rate must be above 0 requests/s")
        Traffic(self.prompt_tokens, self.output_tokens)
        Targets(self.ttft_p99_s, self.tpot_p99_s)


@dataclass(frozen=True)
class ServingOption:
    """One deployable configuration and what it is predicted to do."""

    provider: str
    instance_type: str
    region: str
    purchase_option: str
    gpu: str
    tp: int
    replicas: int
    instances: int
    gpus: int
    ttft_p99_ms: float
    ttft_p99_ms_band: tuple[float, float]
    tpot_p99_ms: float
    tpot_p99_ms_band: tuple[float, float]
    usd_per_month: float
    usd_per_million_input_tokens: float
    usd_per_million_output_tokens: float
    usd_per_million_tokens: float  # all tokens, prompt and output, at the same weight
    utilisation: float  # rate per replica / goodput per replica
    goodput_per_replica_per_s: float
    kg_co2e_per_million_tokens: float  # NaN where the region has no grid factor
    price_as_of: str
    price_source: str
    price_basis: str


@dataclass(frozen=True)
class ServingPlan:
    options: tuple[ServingOption, ...]  # cheapest first
    n_offers: int
    unfit: tuple[str, ...]  # "<gpu>: why" for GPU kinds with no configuration


@dataclass(frozen=True)
class _Replica:
    tp: int
    replica: Replica
    goodput: float


def _replicas_for(request: ServingRequest, gpu: GpuSpec, gpus_per_instance: int,
                  cal: ServingCalibration) -> list[_Replica]:
    traffic = Traffic(request.prompt_tokens, request.output_tokens)
    targets = Targets(request.ttft_p99_s, request.tpot_p99_s)
    out = []
    for tp in TP_DEGREES:
        if tp > gpus_per_instance or gpus_per_instance % tp:
            continue
        replica = replica_for(request, gpu, tp)
        if not replica.fits():
            continue
        rate = (goodput_rate(replica, traffic, targets, cal) if targets.is_bounded
                else saturation_rate(replica, traffic, cal))
        if rate > 0:
            out.append(_Replica(tp, replica, rate))
    return out


def _option(request: ServingRequest, offer: ServingOffer, choice: _Replica,
            cal: ServingCalibration, bands: Bands) -> ServingOption | None:
    per_instance = offer.gpus_per_instance // choice.tp
    replicas = math.ceil(request.rate_per_s / choice.goodput)
    instances = math.ceil(replicas / per_instance)
    replicas = instances * per_instance  # whole instances: spare slots serve too
    traffic = Traffic(request.prompt_tokens, request.output_tokens)
    load = request.rate_per_s / replicas
    point = at_rate(choice.replica, traffic, load, cal)
    if not point.is_stable:
        return None
    usd_per_s = instances * offer.usd_per_hour / 3600.0
    prompt_s = prefill_seconds(choice.replica, traffic.prompt_tokens, traffic.prompt_tokens, cal)
    prefill_share = min(load * prompt_s, 1.0)  # share of replica time spent prefilling
    input_per_s = request.rate_per_s * request.prompt_tokens
    output_per_s = request.rate_per_s * request.output_tokens
    gpus = instances * offer.gpus_per_instance
    kg = math.nan
    if not (math.isnan(offer.g_co2e_per_kwh) or math.isnan(offer.pue)):
        kw = gpus * choice.replica.gpu.tdp_watts / 1000.0 * offer.pue
        kg = kw / 3600.0 * offer.g_co2e_per_kwh / 1000.0 / (input_per_s + output_per_s) * 1e6
    ttft_ms, tpot_ms = point.ttft_p99_s * 1e3, point.tpot_p99_s * 1e3
    return ServingOption(
        offer.provider, offer.instance_type, offer.region, offer.purchase_option, offer.gpu,
        choice.tp, replicas, instances, gpus, ttft_ms, bands.apply("ttft_ms", ttft_ms),
        tpot_ms, bands.apply("tpot_ms", tpot_ms), usd_per_s * SECONDS_PER_MONTH,
        usd_per_s * prefill_share / input_per_s * 1e6,
        usd_per_s * (1.0 - prefill_share) / output_per_s * 1e6,
        usd_per_s / (input_per_s + output_per_s) * 1e6, load / choice.goodput, choice.goodput,
        kg, offer.as_of, offer.source, offer.basis,
    )


def plan_serving(request: ServingRequest, offers: Sequence[ServingOffer],
                 gpus: dict[str, GpuSpec], cal: ServingCalibration, bands: Bands,
                 max_options: int = MAX_OPTIONS) -> ServingPlan:
    """Options meeting the targets, cheapest per month first (ties: lower P99 TPOT), the
    cheapest region of each provider, instance type, purchase option and TP kept."""
    cache: dict[tuple[str, int], list[_Replica]] = {}
    unfit: dict[str, str] = {}
    best: dict[tuple[str, str, str, int], ServingOption] = {}
    for offer in offers:
        spec = gpus.get(offer.gpu)
        if spec is None:
            unfit[offer.gpu] = "no specs in the catalog"
            continue
        key = (offer.gpu, offer.gpus_per_instance)
        if key not in cache:
            cache[key] = _replicas_for(request, spec, offer.gpus_per_instance, cal)
        if not cache[key]:
            unfit.setdefault(offer.gpu, "the model does not fit, or no replica meets the "
                             "targets at any load")
        for choice in cache[key]:
            option = _option(request, offer, choice, cal, bands)
            if option is None:
                continue
            slot = (offer.provider, offer.instance_type, offer.purchase_option, choice.tp)
            if slot not in best or option.usd_per_month < best[slot].usd_per_month:
                best[slot] = option
    fitted = {gpu for (gpu, _), choices in cache.items() if choices}
    ranked = sorted(best.values(), key=lambda o: (o.usd_per_month, o.tpot_p99_ms))
    return ServingPlan(tuple(ranked[:max_options]), len(offers),
                       tuple(f"{g}: {why}" for g, why in sorted(unfit.items())
                             if g not in fitted))


def cards(plan: ServingPlan) -> dict[str, ServingOption | None]:
    """The three choices a reader looks for: cheapest meeting the targets, lowest P99 TPOT
    within 1.5x the cheapest cost, lowest kg CO2e per million tokens."""
    if not plan.options:
        return {"cheapest": None, "lowest_latency": None, "lowest_carbon": None}
    cheapest = plan.options[0]
    within = [o for o in plan.options if o.usd_per_month <= 1.5 * cheapest.usd_per_month]
    carbon = [o for o in plan.options if not math.isnan(o.kg_co2e_per_million_tokens)]
    return {"cheapest": cheapest,
            "lowest_latency": min(within, key=lambda o: o.tpot_p99_ms),
            "lowest_carbon": min(carbon, key=lambda o: o.kg_co2e_per_million_tokens)
            if carbon else None}


def replica_for(request: ServingRequest, gpu: GpuSpec, tp: int) -> Replica:
    """The replica an option runs (fp8 weights keep an fp8 KV cache)."""
    return Replica(request.model, gpu, tp, request.precision,
                   1.0 if request.precision == "fp8" else 2.0,
                   fabric_gbytes_per_s(gpu, "unknown"))


def option_curve(request: ServingRequest, option: ServingOption, gpus: dict[str, GpuSpec],
                 cal: ServingCalibration) -> list[dict[str, float]]:
    """One replica of `option` from light load to saturation: output tokens/s, P99 TTFT and
    TPOT (ms) per point, and `is_knee` on the point of greatest power."""
    curve = load_curve(replica_for(request, gpus[option.gpu], option.tp),
                       Traffic(request.prompt_tokens, request.output_tokens), cal)
    return [{"rate_per_s": p.rate_per_s, "output_tokens_per_s": p.output_tokens_per_s,
             "ttft_p99_ms": p.ttft_p99_s * 1e3, "tpot_p99_ms": p.tpot_p99_s * 1e3,
             "is_knee": i == curve.knee_index} for i, p in enumerate(curve.points)]
