"""The one formatter: money, durations, counts, rates, codes and log-axis ticks."""

import math

import pytest

from planner.core import formatting as f


@pytest.mark.parametrize(("value", "text"), [
    (145236.4, "$145,236"), (2.1, "$2.10"), (0.3541, "$0.354"), (0, "$0.00"), (113.456, "$113.46"),
    (-12.5, "-$12.50"), (1_234_567.0, "$1,234,567"), (None, "—"), (math.nan, "—"),
])
def test_usd_has_separators_and_sensible_precision(value: float | None, text: str) -> None:
    assert f.usd(value) == text


def test_usd_per_names_the_unit() -> None:
    assert f.usd_per(2.1, "GPU-hour") == "$2.10/GPU-hour"
    assert f.usd_per(None, "GPU-hour") == "—"


@pytest.mark.parametrize(("hours", "text"), [
    (3007.2, "125.3 days"), (48, "2.0 days"), (36, "36 h"), (5.5, "5.5 h"), (0.25, "15 min"),
    (0.034, "2.0 min"),
    (None, "—"),
])
def test_duration_reads_in_days_hours_and_minutes(hours: float, text: str) -> None:
    assert f.duration(hours) == text


def test_duration_band_uses_one_unit() -> None:
    # The plan page used to read "125.3 days (P10-P90 2594-3660 h)".
    assert f.duration_band(2594, 3660) == "108.1–152.5 days"
    assert f.duration_band(5.2, 9.8) == "5.2–9.8 h"
    assert f.duration_band(0.89, 5.4) == "0.9–5.4 h"  # both ends alike, not '0.89–5.4 h'
    assert f.duration_band(12.0, 40.5) == "12.0–40.5 h"
    assert f.duration_band(20, 50) == "0.8–2.1 days"
    assert f.duration_band(0.034, 0.043) == "2.0–2.6 min"


@pytest.mark.parametrize(("value", "text"), [
    (128.0, "128"), (20783, "20,783"), (2_000_000_000_000.0, "2,000,000,000,000"),
    (None, "—"),
])
def test_count_is_a_whole_number_with_separators(value: float, text: str) -> None:
    assert f.count(value) == text


@pytest.mark.parametrize(("value", "unit", "text"), [
    (2e12, "tokens", "2.0 T tokens"), (3e11, "tokens", "300 B tokens"),
    (1.5e6, "", "1.5 M"), (950, "samples", "950 samples"), (12_345, "", "12.3 k"),
])
def test_large_count_is_scaled(value: float, unit: str, text: str) -> None:
    assert f.large_count(value, unit) == text


@pytest.mark.parametrize(("value", "unit", "text"), [
    (1234.4, "tokens/s", "1,234 tokens/s"), (0.4523, "samples/s", "0.452 samples/s"),
    (12.34, "tokens/s", "12.3 tokens/s"), (2.5e7, "tokens/s", "25.0 M tokens/s"),
])
def test_rate_keeps_three_significant_digits(value: float, unit: str, text: str) -> None:
    assert f.rate(value, unit) == text


def test_number_and_percent() -> None:
    assert f.number(1979.0) == "1,979"
    assert f.number(989.5) == "989.5"
    assert f.percent(0.012) == "1.2%"
    assert f.percent(23.394) == "2,339.4%"
    # already in percent, written the same way (one table mixed '7.5 %' and '79.7%')
    assert f.percent_points(7.46) == "7.5%"
    assert f.percent_points(-0.84) == "-0.8%"
    assert f.percent_points(None) == "—"


@pytest.mark.parametrize(("code", "text"), [
    ("on_demand", "On-demand"), ("reserved_1y", "Reserved 1 year"), ("aws", "AWS"),
    ("marketplace_machine", "Marketplace machine"), ("zero_stage", "Zero stage"), ("", "—"),
])
def test_label_turns_codes_into_words(code: str, text: str) -> None:
    assert f.label(code) == text


def test_labels_match_the_price_models_choices() -> None:
    from pricing.models import PaymentOption, PurchaseOption

    for choice in [*PurchaseOption, *PaymentOption]:
        if choice.value:
            assert f.label(choice.value) == choice.label


def test_log_ticks_over_many_decades_are_powers_of_ten() -> None:
    ticks = f.log_ticks([1, 8, 100, 1000, 50_000, 2e6])
    assert ticks.values == [1, 10, 100, 1000, 10_000, 100_000, 1_000_000]
    assert ticks.texts == ["1", "10", "100", "1k", "10k", "100k", "1M"]


def test_log_ticks_over_a_short_range_add_twos_and_fives() -> None:
    ticks = f.log_ticks([8, 30, 120])
    assert ticks.texts == ["5", "10", "20", "50", "100", "200"]


def test_log_ticks_over_a_narrow_range_still_show_several_numbers() -> None:
    ticks = f.log_ticks([190_458, 237_053])
    assert ticks.texts == ["180k", "200k", "220k", "240k"]
    assert len(f.log_ticks([2.0, 2.0]).values) >= 3  # a single value gets numbers around it


def test_log_axis_is_a_plotly_log_axis_with_texts() -> None:
    axis = f.log_axis([1e3, 1e6], "Throughput (tokens/s)")
    assert axis["type"] == "log"
    assert axis["ticktext"] == ["1k", "10k", "100k", "1M"]
    assert axis["title"] == {"text": "Throughput (tokens/s)"}
    assert f.log_axis([], "x") == {"type": "log", "title": {"text": "x"}}


def test_palette_has_at_least_eighteen_clearly_different_colours() -> None:
    import itertools

    rgb = [tuple(int(c[i:i + 2], 16) for i in (1, 3, 5)) for c in f.PALETTE[:18]]
    assert len(f.PALETTE) >= 18
    # No two of the first 18 closer than 50 apart in RGB space.
    assert min(math.dist(a, b) for a, b in itertools.combinations(rgb, 2)) > 50


@pytest.mark.parametrize(
    ("value", "text"),
    [(3650, "3,650"), (0.5, "0.5"), (1e16, "1e16"), (2e12, "2e12"), (4096.0, "4,096")],
)
def test_a_bound_reads_as_people_type_it(value: float, text: str) -> None:
    assert f.typed_number(value) == text


@pytest.mark.parametrize(("layout", "expected"), [
    ({"tp": 4, "pp": 2, "dp": 128, "zero_stage": 1, "recompute": "selective",
      "virtual_stages": 4}, "TP4 PP2 (interleaved 1F1B ×4) DP128 ZeRO1, selective recompute"),
    ({"tp": 8, "pp": 4, "dp": 2, "zero_stage": 0, "recompute": "full", "virtual_stages": 1},
     "TP8 PP4 (1F1B) DP2 ZeRO0, full recompute"),
    ({"tp": 1, "pp": 1, "dp": 8, "zero_stage": 3}, "TP1 PP1 DP8 ZeRO3"),
    # ZeRO 3 under a pipeline runs as ZeRO 1 (FSDP2 + pipelining); the label says so.
    ({"tp": 8, "pp": 2, "dp": 1, "zero_stage": 3, "recompute": "none", "virtual_stages": 1},
     "TP8 PP2 (1F1B) DP1 ZeRO3 (runs as ZeRO1 under the pipeline), no recompute"),
    ({"tp": 8, "pp": 16, "cp": 2, "dp": 64, "zero_stage": 1, "recompute": "full",
      "virtual_stages": 1}, "TP8 PP16 (1F1B) CP2 DP64 ZeRO1, full recompute"),
])
def test_layout_label_names_the_pipeline_schedule(layout, expected):
    assert f.layout_label(layout) == expected


def test_goodput_line_reads_as_a_cost_breakdown_line():
    assert f.goodput_line(28.04, 1377117.4) == (
        "expected failures, restarts and overhead: +28.0 % GPU-hours, $1,377,117")
    assert f.goodput_line(None, None) == f.MISSING
    # the plan table's cells: one decimal always ('+50 %' beside '+49.5 %' did not line up)
    assert f.overhead_text(50.0, 75619.2) == "+50.0 % GPU-hours, $75,619"


@pytest.mark.parametrize(("high", "ticks"), [
    (79.8, [0, 20, 40, 60, 80]), (39.9, [0, 10, 20, 30, 40]), (605.0, [0, 200, 400, 600, 800]),
    (1.0, [0, 0.2, 0.4, 0.6, 0.8, 1.0]), (12.0, [0, 2.5, 5, 7.5, 10, 12.5]), (0.0, [0, 1]),
])
def test_round_ticks_start_at_zero_and_step_by_one_two_or_five(high, ticks) -> None:
    assert f.round_ticks(high) == [float(t) for t in ticks]


@pytest.mark.parametrize(("hours", "unit", "texts"), [
    ([30.0, 5.0], "hours", ["0", "10", "20", "30"]),
    ([47.0], "hours", ["0", "10", "20", "30", "40", "50"]),
    ([48.0], "days", ["0", "0.5", "1", "1.5", "2"]),
    ([14_130.0, None], "days", ["0", "200", "400", "600"]),
])
def test_time_scale_picks_hours_or_days_like_durations(hours, unit, texts) -> None:
    scale = f.time_scale(hours)
    assert scale.unit == unit and scale.texts == texts
    assert scale.hours_per_unit == (24.0 if unit == "days" else 1.0)


def test_series_styles_never_repeat_within_a_hundred_and_twenty() -> None:
    assert len({f.series_style(i) for i in range(120)}) == 120


def test_a_data_year_a_source_does_not_state_reads_year_not_stated():
    from planner.core.formatting import data_year

    assert data_year("2023") == "2023" and data_year("2020 (eGRID2020)") == "2020 (eGRID2020)"
    assert data_year("unstated (Google-published; CCF does not state the year)") == (
        "year not stated")
    assert data_year("") == data_year(None) == "year not stated"
