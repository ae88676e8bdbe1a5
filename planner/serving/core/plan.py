"""Rank serving configurations over GPU offers: replicas, cost per month and per million tokens,
predicted P99 TTFT/TPOT with bands, utilisation and carbon.

For each GPU kind and parallel layout (planner.serving.core.parallelism: TP inside an instance,
PP stages that may span instances over their scale-out network, EP over the replica's GPUs for
a mixture of experts) the calibrated serving model gives one replica's goodput (the highest
Poisson rate whose P99 TTFT and TPOT meet the targets). Each hour of the day's traffic (24
hourly rates; a constant rate is the same every hour) needs ceil(rate / goodput) replicas, at
least one, in whole instances (several replicas to an instance, or the pp stages of one replica
on several instances): the fleet scales hour by hour, and the peak hour's fleet is the option's
`replicas`. The latencies shown are those of the hour whose replicas carry the most load. The
monthly cost is the instance-hours of the day's schedule x price x 730 / 24. Cost per million
tokens splits the fleet's cost between prompt and output tokens by the share of replica time
each phase takes (prefill vs decode), hour by hour. Units: USD, hours (730 per month), seconds
inside, ms out, kg CO2e.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from planner.core.cloud import HOURS_PER_MONTH
from planner.core.purchase_options import PAY_AS_YOU_GO
from planner.serving.core.parallelism import Layout, candidate_layouts
from planner.serving.core.traffic import HOURS_PER_DAY
from simulator.core.hardware import GpuSpec, default_inter_node_gbits_per_s, fabric_gbytes_per_s
from simulator.core.serving.crossval import Bands
from simulator.core.serving.engine import (
    Replica,
    ServingCalibration,
    max_batch,
    prefill_seconds,
)
from simulator.core.serving.models import ServingModel, check_precision
from simulator.core.serving.queueing import Traffic, at_rate
from simulator.core.serving.targets import Targets, goodput_rate, load_curve, saturation_rate

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
    # Scale-out network of one instance, Gbit/s (all NICs); NaN: the typical figure for the GPU
    # (simulator.core.hardware.default_inter_node_gbits_per_s). Carries PP across instances.
    network_gbits_per_s: float = math.nan

    def inter_node_gbits_per_s(self, gpu: GpuSpec) -> float:
        """The network a replica spanning instances uses, Gbit/s per instance."""
        if math.isnan(self.network_gbits_per_s):
            return default_inter_node_gbits_per_s(gpu, self.gpus_per_instance)
        return self.network_gbits_per_s


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
    # 24 hourly rates, requests/s, the largest equal to rate_per_s; () for a constant rate.
    hourly_rate_per_s: tuple[float, ...] = ()
    # P99 prompt + P99 output tokens of a request log (0: not known): a replica whose KV cache
    # cannot hold one such request is left out.
    p99_request_tokens: float = 0.0
    # Minutes from asking for an on-demand instance to it serving: billed before each rise.
    scale_up_minutes: float = 0.0

    def __post_init__(self) -> None:
        check_precision(self.precision)
        if not self.rate_per_s > 0:
            raise ValueError("rate must be above 0 requests/s")
        Traffic(self.prompt_tokens, self.output_tokens)
        Targets(self.ttft_p99_s, self.tpot_p99_s)
        if not 0 <= self.scale_up_minutes <= 60:
            raise ValueError("scale-up delay must be between 0 and 60 minutes")
        if self.hourly_rate_per_s and (len(self.hourly_rate_per_s) != HOURS_PER_DAY or not
                                       math.isclose(max(self.hourly_rate_per_s),
                                                    self.rate_per_s)):
            raise ValueError("hourly rates: 24 of them, the largest equal to the peak rate")

    @property
    def hourly_rates(self) -> tuple[float, ...]:
        """The rate of each hour of the day, requests/s."""
        return self.hourly_rate_per_s or (self.rate_per_s,) * HOURS_PER_DAY


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
    replicas_at_trough: int = 0
    instances_at_trough: int = 0
    replicas_by_hour: tuple[int, ...] = ()  # hour 0 first, whole instances' replicas
    instances_by_hour: tuple[int, ...] = ()
    pp: int = 1  # pipeline stages; past one instance's GPUs each replica spans pp x tp / G
    ep: int = 1  # GPUs the experts are split over (1: every TP rank holds a slice of each)
    # Scale-out network between a replica's instances, Gbit/s per instance; NaN in one instance.
    network_gbits_per_s: float = math.nan

    @property
    def layout(self) -> Layout:
        return Layout(self.tp, self.pp, self.ep)

    @property
    def gpus_per_replica(self) -> int:
        return self.layout.gpus_per_replica


@dataclass(frozen=True)
class ServingPlan:
    options: tuple[ServingOption, ...]  # cheapest first
    n_offers: int
    unfit: tuple[str, ...]  # "<gpu>: why" for GPU kinds with no configuration


@dataclass(frozen=True)
class _Replica:
    layout: Layout
    replica: Replica
    goodput: float
    network_gbits_per_s: float  # between the replica's instances; NaN inside one


# A replica's goodput by GPU, layout and network (0 inside one instance): offers of
# different sizes and networks share the layouts they have in common.
_Memo = dict[tuple[str, Layout, float], float]


def _replicas_for(request: ServingRequest, gpu: GpuSpec, gpus_per_instance: int,
                  network_gbits_per_s: float, cal: ServingCalibration,
                  memo: _Memo) -> list[_Replica]:
    """Every candidate layout that fits and has a goodput above 0 under the targets."""
    traffic = Traffic(request.prompt_tokens, request.output_tokens)
    targets = Targets(request.ttft_p99_s, request.tpot_p99_s)

    def network(layout: Layout) -> float:
        return network_gbits_per_s if layout.spans_instances(gpus_per_instance) else math.nan

    def goodput(layout: Layout) -> float:
        """Requests/s one replica serves within the targets; -1 when it does not fit."""
        spans = layout.spans_instances(gpus_per_instance)
        key = (gpu.name, layout, network_gbits_per_s if spans else 0.0)
        if key not in memo:
            replica = replica_for(request, gpu, layout, network(layout))
            if not replica.fits() or (request.p99_request_tokens and max_batch(
                    replica, request.p99_request_tokens, cal) < 1):
                memo[key] = -1.0
            else:
                memo[key] = (goodput_rate(replica, traffic, targets, cal) if targets.is_bounded
                             else saturation_rate(replica, traffic, cal))
        return memo[key]

    def is_kv_bound(layout: Layout) -> bool:
        replica = replica_for(request, gpu, layout, network(layout))
        return max_batch(replica, traffic.prompt_tokens + traffic.output_tokens,
                         cal) < cal.batch_cap

    layouts = candidate_layouts(gpus_per_instance, request.model.is_moe,
                                lambda layout: goodput(layout) >= 0, is_kv_bound)
    return [_Replica(layout, replica_for(request, gpu, layout, network(layout)),
                     goodput(layout), network(layout))
            for layout in layouts if goodput(layout) > 0]


@dataclass(frozen=True)
class _Money:
    usd_per_month: float
    usd_per_million_input: float
    usd_per_million_output: float
    usd_per_million_all: float
    utilisation: float
    kg_co2e_per_million: float


def billed_instance_hours(instances: tuple[int, ...], scale_up_minutes: float,
                          is_hourly: bool = True) -> tuple[float, ...]:
    """Instance-hours billed in each hour of the day: an hourly (on-demand) fleet pays its
    instances plus, for each instance added since the hour before (the day wraps), the
    scale-up delay before it serves; a committed fleet pays its peak every hour."""
    if not is_hourly:
        return (float(max(instances)),) * len(instances)
    lead = scale_up_minutes / 60.0
    return tuple(n + lead * max(0, n - instances[h - 1]) for h, n in enumerate(instances))


def _money(request: ServingRequest, offer: ServingOffer, choice: _Replica,
           instances: tuple[int, ...], cal: ServingCalibration) -> _Money:
    """The day's schedule priced hour by hour: cost, its split between prompt and output
    tokens by prefill time, mean utilisation and carbon."""
    billed = billed_instance_hours(instances, request.scale_up_minutes,
                                   offer.purchase_option in PAY_AS_YOU_GO)
    rates = request.hourly_rates
    prompt_s = prefill_seconds(choice.replica, request.prompt_tokens, request.prompt_tokens,
                               cal)
    usd_in = usd_out = tokens_in = tokens_out = kwh = used = 0.0
    for rate, count, paid in zip(rates, instances, billed, strict=True):
        usd = paid * offer.usd_per_hour
        load = rate / choice.layout.replicas_in(count, offer.gpus_per_instance)
        share = min(load * prompt_s, 1.0)  # share of replica time spent prefilling
        usd_in, usd_out = usd_in + usd * share, usd_out + usd * (1.0 - share)
        tokens_in += rate * 3600.0 * request.prompt_tokens
        tokens_out += rate * 3600.0 * request.output_tokens
        kwh += paid * offer.gpus_per_instance * choice.replica.gpu.tdp_watts / 1000.0
        used += load / choice.goodput
    kg = math.nan
    if not (math.isnan(offer.g_co2e_per_kwh) or math.isnan(offer.pue)):
        kg = kwh * offer.pue * offer.g_co2e_per_kwh / 1000.0 / (tokens_in + tokens_out) * 1e6
    days = HOURS_PER_MONTH / HOURS_PER_DAY
    return _Money((usd_in + usd_out) * days, usd_in / tokens_in * 1e6,
                  usd_out / tokens_out * 1e6, (usd_in + usd_out) / (tokens_in + tokens_out) * 1e6,
                  used / len(rates), kg)


def _option(request: ServingRequest, offer: ServingOffer, choice: _Replica,
            cal: ServingCalibration, bands: Bands) -> ServingOption | None:
    layout, per_instance = choice.layout, offer.gpus_per_instance
    instances = layout.hourly_instances(request.hourly_rates, choice.goodput, per_instance)
    # Whole instances: spare slots serve.
    replicas = tuple(layout.replicas_in(n, per_instance) for n in instances)
    traffic = Traffic(request.prompt_tokens, request.output_tokens)
    load = max(r / n for r, n in zip(request.hourly_rates, replicas, strict=True))
    point = at_rate(choice.replica, traffic, load, cal)  # the most loaded hour: worst latency
    if not point.is_stable:
        return None
    money = _money(request, offer, choice, instances, cal)
    ttft_ms, tpot_ms = point.ttft_p99_s * 1e3, point.tpot_p99_s * 1e3
    return ServingOption(
        offer.provider, offer.instance_type, offer.region, offer.purchase_option, offer.gpu,
        layout.tp, max(replicas), max(instances), max(instances) * offer.gpus_per_instance,
        ttft_ms, bands.apply("ttft_ms", ttft_ms), tpot_ms, bands.apply("tpot_ms", tpot_ms),
        money.usd_per_month, money.usd_per_million_input, money.usd_per_million_output,
        money.usd_per_million_all, money.utilisation, choice.goodput,
        money.kg_co2e_per_million, offer.as_of, offer.source, offer.basis,
        min(replicas), min(instances), replicas, instances, layout.pp, layout.ep,
        choice.network_gbits_per_s,
    )


def plan_serving(request: ServingRequest, offers: Sequence[ServingOffer],
                 gpus: dict[str, GpuSpec], cal: ServingCalibration, bands: Bands,
                 max_options: int = MAX_OPTIONS) -> ServingPlan:
    """Options meeting the targets, cheapest per month first (ties: lower P99 TPOT), the
    cheapest region of each provider, instance type, purchase option and layout kept."""
    cache: dict[tuple[str, int, float], list[_Replica]] = {}
    memo: _Memo = {}
    unfit: dict[str, str] = {}
    best: dict[tuple[str, str, str, Layout], ServingOption] = {}
    for offer in offers:
        spec = gpus.get(offer.gpu)
        if spec is None:
            unfit[offer.gpu] = "no specs in the catalog"
            continue
        network = offer.inter_node_gbits_per_s(spec)
        key = (offer.gpu, offer.gpus_per_instance, network)
        if key not in cache:
            cache[key] = _replicas_for(request, spec, offer.gpus_per_instance, network, cal,
                                       memo)
        if not cache[key]:
            unfit.setdefault(offer.gpu, "the model does not fit, or no replica meets the "
                             "targets at any load")
        for choice in cache[key]:
            option = _option(request, offer, choice, cal, bands)
            if option is None:
                continue
            slot = (offer.provider, offer.instance_type, offer.purchase_option, choice.layout)
            if slot not in best or option.usd_per_month < best[slot].usd_per_month:
                best[slot] = option
    fitted = {gpu for (gpu, _, _), choices in cache.items() if choices}
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


def replica_for(request: ServingRequest, gpu: GpuSpec, layout: Layout,
                network_gbits_per_s: float = math.nan) -> Replica:
    """The replica an option runs (fp8 weights keep an fp8 KV cache); `network_gbits_per_s`:
    the scale-out network between its instances (NaN: it sits in one instance)."""
    return Replica(request.model, gpu, layout.tp, request.precision,
                   1.0 if request.precision == "fp8" else 2.0,
                   fabric_gbytes_per_s(gpu, "unknown"), layout.pp, layout.ep,
                   inter_node_gbytes_per_s=network_gbits_per_s / 8.0)


def option_curve(request: ServingRequest, option: ServingOption, gpus: dict[str, GpuSpec],
                 cal: ServingCalibration) -> list[dict[str, float]]:
    """One replica of `option` from light load to saturation: output tokens/s, P99 TTFT and
    TPOT (ms) per point, and `is_knee` on the point of greatest power."""
    curve = load_curve(replica_for(request, gpus[option.gpu], option.layout,
                                   option.network_gbits_per_s),
                       Traffic(request.prompt_tokens, request.output_tokens), cal)
    return [{"rate_per_s": p.rate_per_s, "output_tokens_per_s": p.output_tokens_per_s,
             "ttft_p99_ms": p.ttft_p99_s * 1e3, "tpot_p99_ms": p.tpot_p99_s * 1e3,
             "is_knee": i == curve.knee_index} for i, p in enumerate(curve.points)]
