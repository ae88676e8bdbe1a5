"""Capacity charts: the queue's two axes tick round numbers from 0, each in its own unit."""

from planner.capacity import charts


def test_the_queue_axes_tick_round_numbers_never_22_9_or_45_7() -> None:
    document = {
        "queue": {"hours": [0.0, 1.0, 2.0, 3.0], "jobs": [0, 70, 12, 3],
                  "gpus": [0, 160, 40, 8]},
        "recommended": {"pool_gpus": 205, "mean_wait_hours": 0.3, "discipline": "backfill",
                        "policy": "size_aware", "max_wait_hours": 4.0},
    }
    figure = charts.queue_figure(document)
    assert list(figure.layout.yaxis.ticktext) == ["0", "20", "40", "60", "80"]
    assert list(figure.layout.yaxis2.ticktext) == ["0", "50", "100", "150", "200"]
    assert figure.layout.yaxis.title.text == "Jobs waiting (count)"
    assert figure.layout.yaxis2.title.text == "GPUs waited for"  # the unit said once
    assert figure.layout.xaxis.title.text == "Time since the first submit (h)"
    # the caption's wait as the page's table writes it ('0.3 h', not '0.30 h')
    assert figure.layout.meta["finding"].endswith("the mean wait is 0.3 h.")
    assert figure.layout.yaxis2.range[1] >= 160 and figure.layout.yaxis.range[1] >= 70
