"""Continuous batching under load: latency and throughput of one replica.

A replica runs iterations: each decodes one token for every sequence in flight and prefills the
prompts that arrived meanwhile (chunked prefill), so an iteration lasts
T = decode_step(b) + prefills x prefill time. Under Poisson arrivals at rate r (requests/s per
replica) the share of time spent prefilling is rho = r x prefill, so T = decode_step / (1 - rho),
and Little's law gives the batch in flight, b = r x (TTFT + output x T), solved as a fixed
point. TTFT = the prompt's own prefill + waiting behind other prefills (M/D/1 mean, exponential
tail) + the rest of the running iteration. Per-request TPOT = its decode steps plus the prefills
that land during its life (Poisson), so its P99 rises with load. Units: seconds, tokens.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from simulator.core.serving.engine import (
    Replica,
    ServingCalibration,
    decode_step_seconds,
    max_batch,
    prefill_seconds,
)

Z_P99 = 2.326  # standard normal 99th percentile
MAX_FIXED_POINT_ITERATIONS = 60


@dataclass(frozen=True)
class Traffic:
    """Mean prompt and output lengths of the requests, tokens. `beams`: sequences decoded per
    request (beam search; 1 for greedy or sampling): each beam is a sequence of the decode batch
    with its own KV, the prompt is prefilled once and one beam's tokens are returned."""

    prompt_tokens: float
    output_tokens: float
    beams: int = 1

    def __post_init__(self) -> None:
        if self.prompt_tokens < 1 or self.output_tokens < 1:
            raise ValueError("prompt and output lengths must be at least 1 token")
        if self.beams < 1:
            raise ValueError("beams must be at least 1")

    @property
    def context_tokens(self) -> float:
        """Mean KV length of a sequence while it decodes."""
        return self.prompt_tokens + self.output_tokens / 2.0


@dataclass(frozen=True)
class LoadPoint:
    """One replica at one load. Rates per replica; latencies in seconds."""

    rate_per_s: float
    batch: float
    is_stable: bool
    ttft_mean_s: float
    ttft_p50_s: float
    ttft_p99_s: float
    tpot_mean_s: float
    tpot_p50_s: float
    tpot_p99_s: float
    output_tokens_per_s: float
    utilisation: float  # batch in flight / largest batch the KV cache and scheduler allow


def _request_limit(replica: Replica, traffic: Traffic, cal: ServingCalibration) -> float:
    """Most requests in flight: the KV cache and scheduler hold `beams` sequences per request."""
    sequences = max_batch(replica, traffic.prompt_tokens + traffic.output_tokens, cal)
    return float(math.floor(sequences / traffic.beams))


def _step(replica: Replica, traffic: Traffic, requests: float,
          cal: ServingCalibration) -> float:
    """One decode step of `requests` requests in flight (beams x requests sequences)."""
    return decode_step_seconds(replica, max(requests, 1.0) * traffic.beams,
                               traffic.context_tokens, cal)


def _unstable(rate: float, batch: float) -> LoadPoint:
    inf = math.inf
    return LoadPoint(rate, batch, False, inf, inf, inf, inf, inf, inf, 0.0, 1.0)


def saturated(replica: Replica, traffic: Traffic, rate_per_s: float,
              cal: ServingCalibration, n_requests: int = 0) -> LoadPoint:
    """Arrivals faster than the replica completes them (is_stable False): it runs full.
    With a finite benchmark of `n_requests` sent at `rate_per_s`, the queue grows for the
    whole run and the mean TTFT includes the mean wait of that growing queue; without one,
    the latencies are those of the full replica (a run held at its capacity)."""
    limit = _request_limit(replica, traffic, cal)
    if limit < 1:
        return _unstable(rate_per_s, 0.0)
    iteration = _iteration_seconds(replica, limit, traffic, cal)
    prefill = prefill_seconds(replica, traffic.prompt_tokens, traffic.prompt_tokens, cal)
    served_per_s = limit / (traffic.output_tokens * iteration)
    wait = 0.0
    if n_requests > 0 and rate_per_s > served_per_s:
        wait = n_requests / 2.0 * (1.0 / served_per_s - 1.0 / rate_per_s)
    ttft = prefill + iteration + wait
    return LoadPoint(rate_per_s, limit, False, ttft, ttft, ttft, iteration, iteration,
                     iteration, limit / iteration, 1.0)


def batched_wait_quantile(iteration: float, prefill: float, arrivals: float,
                          q: float) -> float:
    """Quantile q (0 < q < 1) of W = U x iteration + N x prefill, seconds: a request waits for
    the running iteration to end (U uniform on [0, 1)) and then for the prefills of the N
    prompts that arrived during it (N ~ Poisson(`arrivals`)), which the scheduler batches into
    the same mixed iteration as its own. Exact for that model (numpy, no fitted constant).
    NaN when an input is (a GPU without a peak for the precision gives NaN times)."""
    return batched_wait_quantiles(iteration, prefill, arrivals, (q,))[0]


def batched_wait_quantiles(iteration: float, prefill: float, arrivals: float,
                           qs: tuple[float, ...]) -> tuple[float, ...]:
    """batched_wait_quantile at several levels from one distribution (one numpy pass)."""
    if not all(math.isfinite(v) for v in (iteration, prefill, arrivals)):
        return tuple(math.nan for _ in qs)
    if arrivals <= 0 or prefill <= 0:
        return tuple(q * iteration for q in qs)
    top = int(arrivals + 10.0 * math.sqrt(arrivals) + 12.0)
    k = np.arange(top + 1, dtype=float)
    log_factorial = np.concatenate(([0.0], np.cumsum(np.log(k[1:]))))
    pmf = np.exp(k * math.log(arrivals) - arrivals - log_factorial)
    grid = np.linspace(0.0, top * prefill + iteration, 256)
    spread = max(iteration, 1e-12)
    cdf = pmf @ np.clip((grid[None, :] - prefill * k[:, None]) / spread, 0.0, 1.0)
    return tuple(float(v) for v in np.interp(qs, cdf / cdf[-1], grid))


def offline_tokens_per_s(replica: Replica, traffic: Traffic, cal: ServingCalibration) -> float:
    """Output tokens/s of a replica kept full (all requests queued: MLPerf Offline)."""
    batch = _request_limit(replica, traffic, cal)
    if batch < 1:
        return 0.0
    return batch / _iteration_seconds(replica, batch, traffic, cal)


def _iteration_seconds(replica: Replica, batch: float, traffic: Traffic,
                       cal: ServingCalibration) -> float:
    """Closed loop: every finished sequence is replaced, so batch / output prefills run per
    iteration."""
    step = _step(replica, traffic, batch, cal)
    prefill = prefill_seconds(replica, traffic.prompt_tokens, traffic.prompt_tokens, cal)
    return step + batch / traffic.output_tokens * prefill


def at_concurrency(replica: Replica, traffic: Traffic, concurrency: float,
                   cal: ServingCalibration) -> LoadPoint:
    """A closed loop of `concurrency` clients (a new request as soon as one finishes)."""
    limit = _request_limit(replica, traffic, cal)
    if limit < 1:
        return _unstable(0.0, concurrency)
    batch = min(concurrency, limit)
    iteration = _iteration_seconds(replica, batch, traffic, cal)
    step = _step(replica, traffic, batch, cal)
    prefill = prefill_seconds(replica, traffic.prompt_tokens, traffic.prompt_tokens, cal)
    rho = min(batch / traffic.output_tokens * prefill / iteration, 0.99)
    wait = cal.queue_factor * rho * prefill / (2.0 * (1.0 - rho))
    # Clients beyond the batch limit wait for a slot: one frees every output x T / batch.
    slot_wait = max(concurrency - batch, 0.0) * traffic.output_tokens * iteration / batch
    # The prompt's prefill shares its iteration with one decode step of the running batch
    # (continuous batching): the first token leaves when that mixed iteration ends.
    ttft = prefill + step + wait + iteration / 2.0 + slot_wait
    rate = batch / (traffic.output_tokens * iteration)
    return LoadPoint(rate, batch, True, ttft, ttft, ttft, iteration, iteration, iteration,
                     batch / iteration, batch / limit)


def static_batch(replica: Replica, traffic: Traffic, batch: float,
                 cal: ServingCalibration) -> LoadPoint:
    """A static batch: all prompts prefilled together, then every output token decoded. A
    batch larger than the KV cache holds runs in waves of the largest batch that fits."""
    limit = max(_request_limit(replica, traffic, cal), 1.0)
    batch = min(batch, limit)
    tokens = batch * traffic.prompt_tokens
    ttft = prefill_seconds(replica, tokens, traffic.prompt_tokens, cal)
    step = _step(replica, traffic, batch, cal)
    total = ttft + traffic.output_tokens * step
    rate = batch / total
    stable = replica.fits()
    return LoadPoint(rate, batch, stable, ttft, ttft, ttft, step, step, step,
                     batch * traffic.output_tokens / total, batch / limit)


def at_rate(replica: Replica, traffic: Traffic, rate_per_s: float,
            cal: ServingCalibration) -> LoadPoint:
    """Poisson arrivals at `rate_per_s` requests/s to one replica (see the module doc)."""
    limit = _request_limit(replica, traffic, cal)
    prefill = prefill_seconds(replica, traffic.prompt_tokens, traffic.prompt_tokens, cal)
    rho = rate_per_s * prefill
    if limit < 1 or rho >= 1.0:
        return _unstable(rate_per_s, limit)
    batch = max(rate_per_s * traffic.output_tokens
                * _step(replica, traffic, 1.0, cal), 1e-9)
    for _ in range(MAX_FIXED_POINT_ITERATIONS):
        step = _step(replica, traffic, batch, cal)
        iteration = step / (1.0 - rho)
        updated = rate_per_s * (prefill + traffic.output_tokens * iteration)
        if updated > limit:
            return _unstable(rate_per_s, updated)
        if abs(updated - batch) < 1e-6 * max(batch, 1.0):
            batch = updated
            break
        batch = updated
    return _latencies(replica, traffic, rate_per_s, batch, limit, prefill, cal)


def _latencies(replica: Replica, traffic: Traffic, rate: float, batch: float, limit: float,
               prefill: float, cal: ServingCalibration) -> LoadPoint:
    rho = rate * prefill
    step = _step(replica, traffic, batch, cal)
    iteration = step / (1.0 - rho)
    # A new prompt waits for the running iteration, then runs in the next one with the other
    # prompts that arrived meanwhile (Poisson; queue_factor scales it for burstier arrivals)
    # and one decode step of the batch (prefill-decode interference): the first token ends it.
    arrivals = cal.queue_factor * rate * iteration
    ttft_mean = prefill + step + iteration / 2.0 + arrivals * prefill
    wait_p50, wait_p99 = batched_wait_quantiles(iteration, prefill, arrivals, (0.5, 0.99))
    ttft_p50 = prefill + step + wait_p50
    ttft_p99 = prefill + step + wait_p99
    # Per-request TPOT: prefills landing during its decode ~ Poisson(m), batch ~ Poisson(b).
    expected_prefills = rate * traffic.output_tokens * iteration
    spread = Z_P99 * cal.tail_factor
    busy_batch = min(batch + spread * math.sqrt(batch), max(limit, batch))
    busy_prefills = expected_prefills + spread * math.sqrt(expected_prefills)
    tpot_p99 = (_step(replica, traffic, busy_batch, cal)
                + busy_prefills * prefill / traffic.output_tokens)
    return LoadPoint(rate, batch, True, ttft_mean, ttft_p50, ttft_p99, iteration, iteration,
                     tpot_p99, rate * traffic.output_tokens, batch / limit)


def burst(replica: Replica, traffic: Traffic, n_requests: int,
          cal: ServingCalibration) -> LoadPoint:
    """`n_requests` sent at once (a benchmark's unlimited request rate): the replica runs full
    and request i waits for a free slot; TTFT is the mean over the requests."""
    limit = _request_limit(replica, traffic, cal)
    if limit < 1:
        return _unstable(math.inf, 0.0)
    batch = min(float(n_requests), limit)
    iteration = _iteration_seconds(replica, batch, traffic, cal)
    prefill = prefill_seconds(replica, traffic.prompt_tokens, traffic.prompt_tokens, cal)
    per_request_s = traffic.output_tokens * iteration / batch  # one slot frees this often
    waiting = max(n_requests - batch, 0.0)
    mean_wait = waiting * (waiting + 1.0) / 2.0 * per_request_s / n_requests
    first_wave = batch / n_requests * batch * prefill / 2.0  # the first batch's prefills queue
    ttft = prefill + mean_wait + first_wave
    return LoadPoint(math.inf, batch, True, ttft, ttft, ttft, iteration, iteration, iteration,
                     batch / iteration, batch / limit)
