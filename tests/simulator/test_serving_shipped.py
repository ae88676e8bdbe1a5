"""The shipped serving calibration (simulator.serving) is read from disk once per process."""

from pathlib import Path
from typing import Any

import pytest

from simulator import serving


def test_the_shipped_calibration_file_is_read_once_for_every_figure_drawn_from_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    reads: list[Path] = []
    read_text = Path.read_text

    def counting(self: Path, *args: Any, **kwargs: Any) -> str:
        reads.append(self)
        return read_text(self, *args, **kwargs)

    monkeypatch.setattr(Path, "read_text", counting)
    for cached in (serving._shipped, serving.serving_calibration, serving.serving_accuracy):
        cached.cache_clear()
    for _ in range(3):
        cal, bands = serving.serving_calibration()
        accuracy = serving.serving_accuracy()
    assert reads == [serving.SERVING_CALIBRATION_JSON]
    assert set(accuracy) >= {"ttft_ms", "tpot_ms"} and bands.low and cal.batch_cap > 0
