"""Simulation charts: round time ticks in the unit the times read in, units on every axis."""

from simulator import charts


def _points(hours: list[float]) -> list[dict]:
    return [{"gpus": 8 * 2**i, "is_fit": True, "tokens_per_second": 31_000.0 * 2**i,
             "time_to_train_hours": h} for i, h in enumerate(hours)]


def test_time_to_train_ticks_are_round_days_never_39_9_or_79_8() -> None:
    figure = charts.scaling_figure(_points([14_130.0, 7_070.0, 3_536.0, 1_770.0, 905.0]))
    axis = figure.layout.yaxis2
    assert axis.title.text == "Time to train (days)"
    assert list(axis.ticktext) == ["0", "200", "400", "600"]
    assert list(axis.tickvals) == [0.0, 200.0, 400.0, 600.0]
    assert axis.range[1] >= 14_130.0 / 24  # the slowest point is inside
    assert figure.data[1].name == "Time to train (days)"
    assert figure.data[1].y[0] == 14_130.0 / 24
    assert figure.layout.meta["finding"] == (
        "From 8 to 128 GPUs throughput goes from 31,000 tokens/s to 496,000 tokens/s and "
        "time to train from 588.8 days to 37.7 days.")


def test_short_runs_tick_in_hours() -> None:
    figure = charts.scaling_figure(_points([40.0, 20.0, 10.0]))
    axis = figure.layout.yaxis2
    assert axis.title.text == "Time to train (hours)"
    assert list(axis.ticktext) == ["0", "10", "20", "30", "40"]


def test_a_run_without_a_goal_has_throughput_only() -> None:
    points = [{**p, "time_to_train_hours": None} for p in _points([1.0, 1.0])]
    figure = charts.scaling_figure(points)
    assert len(figure.data[1].x) == 0
    assert figure.layout.yaxis.title.text == "Throughput (tokens/s)"
    assert "time to train" not in figure.layout.meta["finding"]
