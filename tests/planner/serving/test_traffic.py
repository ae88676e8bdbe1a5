"""Serving traffic over the day: a stated daily profile, an uploaded request log, replicas hour
by hour (peak and trough), and the fleet's purchase by the one buying rule."""

import io
import math
from pathlib import Path

import numpy as np
import pytest

from planner.purchase_mix.core.offers import CommitmentOption, GpuOffer
from planner.purchase_mix.core.risk import RiskSettings
from planner.serving.core.fields import FieldError, parse_serving_input
from planner.serving.core.mix import FORECAST_WORDS, serving_mix
from planner.serving.core.plan import ServingOffer, billed_instance_hours, plan_serving
from planner.serving.core.request_log import parse_request_log
from planner.serving.core.traffic import needed_replicas, parse_daily_profile
from simulator.core.hardware import load_gpu_specs
from simulator.core.serving.crossval import Bands
from simulator.core.serving.engine import ServingCalibration

ROOT = Path(__file__).resolve().parents[3]
GPUS = load_gpu_specs(str(ROOT / "pricing" / "data" / "gpus.csv"))
CAL = ServingCalibration()
BANDS = Bands({"ttft_ms": -0.3, "tpot_ms": -0.2}, {"ttft_ms": 0.5, "tpot_ms": 0.4})
PROFILE = "2,1,1,1,1,2,4,7,9,10,10,10,9,9,10,10,9,8,7,6,5,4,3,2"
EXAMPLE = {"model": "llama3.1-70b", "precision": "fp8", "rate": 20, "input_tokens": 2000,
           "output_tokens": 300, "ttft_p99_ms": 2000, "tpot_p99_ms": 60}
OFFER = ServingOffer("aws", "p5.48xlarge", "us-east-1", "on_demand", "H100 SXM5-80GB", 8, 40.0,
                     "2026-01-21", "test", "listed", 400.0, 1.2)
MB = 1024**2


def _plan(**changes: object):
    checked = parse_serving_input({**EXAMPLE, **changes})
    return checked, plan_serving(checked.request, [OFFER], GPUS, CAL, BANDS)


# --- the stated daily profile ---------------------------------------------------------------

def test_a_profile_is_24_weights_scaled_so_the_busiest_hour_is_one() -> None:
    weights = parse_daily_profile(PROFILE)
    assert len(weights) == 24 and max(weights) == 1.0 and weights[1] == 0.1


@pytest.mark.parametrize(("text", "words"), [
    ("1,2,3", "expected 24 comma-separated numbers (hour 0 to 23), got 3"),
    (",".join(["1"] * 5 + ["x"] + ["1"] * 18), "hour 5: expected a number, got 'x'"),
    (",".join(["0"] * 24), "every hour is 0"),
    (",".join(["1"] * 23 + ["-1"]), "hour 23: must be between 0 and"),
    ("1," * 500, "in at most 768 characters, got 1,000"),
])
def test_a_bad_profile_is_refused_naming_the_field_and_the_hour(text: str, words: str) -> None:
    with pytest.raises(FieldError, match="^daily_profile: ") as caught:
        parse_serving_input({**EXAMPLE, "daily_profile": text})
    assert words in str(caught.value)


def test_replicas_follow_the_profile_hour_by_hour_at_least_one() -> None:
    _, plan = _plan(daily_profile=PROFILE)
    option = plan.options[0]
    per_instance = option.layout.replicas_per_instance(8)
    spans = option.layout.instances_per_replica(8)
    rates = [20 * w for w in parse_daily_profile(PROFILE)]
    for rate, replicas, instances in zip(rates, option.replicas_by_hour,
                                         option.instances_by_hour, strict=True):
        needed = needed_replicas(rate, option.goodput_per_replica_per_s)
        assert instances == math.ceil(needed / per_instance) * spans
        assert replicas == instances // spans * per_instance >= 1
    assert option.replicas == max(option.replicas_by_hour)
    assert option.replicas_at_trough == min(option.replicas_by_hour)
    assert option.replicas_at_trough < option.replicas
    # The busiest hour needs as many as a constant rate at the peak.
    _, flat = _plan()
    same = next(o for o in flat.options if o.layout == option.layout)
    assert same.replicas == option.replicas


def test_a_profiled_fleet_costs_its_billed_instance_hours_not_its_peak_all_day() -> None:
    checked, plan = _plan(daily_profile=PROFILE, scale_up_minutes=12)
    option = plan.options[0]
    billed = billed_instance_hours(option.instances_by_hour, 12.0)
    assert option.usd_per_month == pytest.approx(sum(billed) * 40.0 * 730 / 24)
    _, flat = _plan()
    same = next(o for o in flat.options if o.layout == option.layout)
    assert option.usd_per_month < same.usd_per_month
    assert checked.request.scale_up_minutes == 12


def test_each_added_instance_is_billed_for_the_scale_up_delay_the_day_wrapping() -> None:
    # hour 0 follows hour 23 (3 -> 1: no rise); 1 -> 3 at hour 1, 3 -> 4 at hour 2
    billed = billed_instance_hours((1, 3, 4) + (3,) * 21, 30.0)
    assert billed[:3] == (1.0, 3.0 + 0.5 * 2, 4.0 + 0.5)
    assert billed[3:] == (3.0,) * 21
    assert billed_instance_hours((1, 3, 4) + (3,) * 21, 30.0, is_hourly=False) == (4.0,) * 24


# --- the uploaded request log --------------------------------------------------------------

def _log(per_hour: dict[int, int], days: int = 2, start: int = 1_767_225_600) -> bytes:
    """A log whose hour h of the day has per_hour[h] requests on day 0 and half on the others,
    prompts 100..199 tokens and outputs 50."""
    lines = ["timestamp,input_tokens,output_tokens"]
    i = 0
    for day in range(days):
        for hour, count in per_hour.items():
            n = count if day == 0 else count // 2
            for k in range(n):
                t = start + (day * 24 + hour) * 3600 + k * 3600 // max(n, 1)
                lines.append(f"{t},{100 + i % 100},50")
                i += 1
    return "\n".join(lines).encode()


def test_the_log_gives_the_busiest_rate_of_each_hour_peak_trough_and_lengths() -> None:
    per_hour = {h: 36 * (h + 1) for h in range(24)}
    traffic = parse_request_log(io.BytesIO(_log(per_hour)), max_bytes=10 * MB)
    assert traffic.hourly_rate_per_s == pytest.approx([(h + 1) * 0.01 for h in range(24)])
    assert traffic.peak_rate_per_s == pytest.approx(0.24)
    assert traffic.trough_rate_per_s == pytest.approx(0.01)
    assert traffic.rows == sum(per_hour.values()) + sum(c // 2 for c in per_hour.values())
    assert traffic.prompt_tokens_mean == pytest.approx(149.5, abs=0.5)
    assert traffic.prompt_tokens_p99 == pytest.approx(199, abs=1)
    assert traffic.output_tokens_mean == traffic.output_tokens_p99 == 50
    assert len(traffic.history_rate_per_s) == 48 and traffic.start.startswith("2026-01-01")


def test_a_log_sets_the_rate_profile_and_lengths_of_the_plan() -> None:
    traffic = parse_request_log(io.BytesIO(_log({h: 36 * (h + 1) for h in range(24)})),
                                max_bytes=10 * MB)
    checked = parse_serving_input({**EXAMPLE, "rate": 999}, request_log=traffic)
    assert checked.request.rate_per_s == pytest.approx(0.24)
    assert checked.request.hourly_rate_per_s == traffic.hourly_rate_per_s
    assert checked.request.prompt_tokens == pytest.approx(traffic.prompt_tokens_mean)
    assert checked.request.p99_request_tokens == pytest.approx(
        traffic.prompt_tokens_p99 + 50)
    assert checked.data["daily_profile"].split(",")[0] == "0.04167"


@pytest.mark.parametrize(("body", "words"), [
    (b"timestamp,input_tokens,output_tokens\n2026-01-01T00:00:00Z,10,5\nnoon,10,5\n"
     b"2026-01-02T01:00:00Z,10,5\n", "line 3, timestamp: 'noon' is not a date and time"),
    (b"timestamp,input_tokens,output_tokens\n2026-01-01T00:00:00Z,10,5\n"
     b"2026-01-02T01:00:00Z,0,5\n", "line 3, input_tokens: '0' is not a whole number of "
                                    "tokens from 1 to 1,000,000"),
    (b"timestamp,input_tokens,output_tokens\n2026-01-01T00:00:00Z,10,5\n"
     b"2026-01-02T01:00:00Z,10,2.5\n", "line 3, output_tokens: '2.5'"),
    (b"timestamp,input_tokens,output_tokens\n2026-01-01T00:00:00Z,10,5,7\n",
     "line 2: expected 3 fields, found 4"),
    (b"timestamp,prompt,output_tokens\n1,2,3\n", "the file has no 'input_tokens' column"),
    (b"timestamp,input_tokens,output_tokens\n2026-01-01T00:00:00Z,10,5\n"
     b"2026-01-01T05:00:00Z,10,5\n", "the log covers 5.0 hours"),
    (b"timestamp,input_tokens,output_tokens\n2024-01-01T00:00:00Z,10,5\n"
     b"2026-01-01T00:00:00Z,10,5\n", "the log spans 731.0 days"),
    (b"\x1f\x8b\x08\x00", "gzip-compressed"),
])
def test_a_bad_log_is_refused_naming_the_line_and_column(body: bytes, words: str) -> None:
    with pytest.raises(ValueError) as caught:
        parse_request_log(io.BytesIO(body), max_bytes=10 * MB)
    assert words in str(caught.value)


def test_a_log_over_its_row_or_byte_bound_is_refused() -> None:
    body = _log({h: 10 for h in range(24)})
    with pytest.raises(ValueError, match="more than 100 rows"):
        parse_request_log(io.BytesIO(body), max_bytes=10 * MB, max_rows=100)
    with pytest.raises(ValueError, match="larger than the 1000-byte limit"):
        parse_request_log(io.BytesIO(body), max_bytes=1000)


# --- the purchase mix by the one buying rule -------------------------------------------------

H100 = GpuOffer("H100", "aws", "us-east-1", "p5.48xlarge", 8, 98.32,
                (CommitmentOption("committed_1y", 1.0, 62.0),
                 CommitmentOption("committed_3y", 3.0, 43.0)), spot_usd_per_hour=40.0)
DAY = (2, 1, 1, 1, 1, 2, 4, 7, 9, 10, 10, 10, 9, 9, 10, 10, 9, 8, 7, 6, 5, 4, 3, 2)


def _mix(history: np.ndarray, *, is_offline: bool = False, offer: GpuOffer = H100):
    return serving_mix(offer, DAY, history, scale_up_minutes=10, is_offline=is_offline,
                       settings=RiskSettings(n_paths=16))


def test_a_stated_profile_is_a_forecast_so_the_rule_commits_nothing_and_says_why() -> None:
    mix = _mix(np.zeros(0))
    assert mix.is_forecast and not mix.committed.lines and mix.committed_instances == 0
    assert mix.committed.gate.days == 0
    assert "The history covers 0.0 days; a commitment needs at least 30 days" in mix.lines[-1]
    assert FORECAST_WORDS in mix.lines
    assert mix.mix_usd_per_month == pytest.approx(mix.all_on_demand_usd_per_month)
    billed = sum(billed_instance_hours(DAY, 10.0))
    assert mix.all_on_demand_usd_per_month == pytest.approx(billed * 98.32 * 730 / 24)


def test_a_log_of_45_days_commits_the_always_on_base_for_one_year_in_the_rules_words() -> None:
    history = np.array([DAY[h % 24] + (h // 24) % 2 for h in range(24 * 45)], dtype=float)
    mix = _mix(history)
    assert not mix.is_forecast and mix.base_instances == 1 == mix.committed_instances
    (line,) = mix.committed.lines
    assert line.term == "committed_1y"  # 45 days: the rule allows no 3-year term
    assert line.sentence.startswith("1 x p5.48xlarge (8 GPUs each, 8 GPUs) in AWS us-east-1")
    assert "break-even at 63% utilisation" in line.sentence
    assert mix.lines[0] == line.sentence
    assert mix.committed_usd_per_month == pytest.approx(62.0 * 730)
    assert mix.mix_usd_per_month < mix.all_on_demand_usd_per_month
    peaks = sum(billed_instance_hours(tuple(n - 1 for n in DAY), 10.0))
    assert mix.on_demand_usd_per_month == pytest.approx(peaks * 98.32 * 730 / 24)


def test_spot_runs_the_peaks_only_for_offline_work() -> None:
    online = _mix(np.zeros(0))
    assert online.spot_usd_per_month == 0 and any(
        line.startswith("No spot: latency targets are set") for line in online.lines)
    offline = _mix(np.zeros(0), is_offline=True)
    assert offline.on_demand_usd_per_month == 0 and offline.spot_usd_per_month > 0
    assert "on spot (offline batch work" in offline.lines[0]
    assert offline.mix_usd_per_month < online.mix_usd_per_month
