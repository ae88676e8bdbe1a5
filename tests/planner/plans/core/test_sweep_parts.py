"""Splitting a plan's sweep into parts: every instance once, in order, sized by cells."""

import numpy as np
import pandas as pd
import pytest

from planner.core.serialize import frame_from_table, frame_to_table
from planner.plans.core.sweep_parts import sweep_parts


@pytest.mark.parametrize(("n_keys", "cells_per_instance", "cells_per_part", "max_parts", "sizes"), [
    (10, 100, 1_000, 16, [10]),          # fits in one part: stays one task
    (10, 100, 999, 16, [5, 5]),          # just over: two parts
    (10, 100, 300, 16, [3, 3, 2, 2]),    # ceil(1000 / 300) = 4 parts, sizes differ by one
    (10, 100, 1, 16, [1] * 10),          # never more parts than instances
    (40, 100, 1, 16, [3] * 8 + [2] * 8), # nor more than max_parts
    (0, 100, 10, 16, []),                # nothing to sweep, no part
])
def test_parts_keep_every_key_once_in_order(
    n_keys: int, cells_per_instance: int, cells_per_part: int, max_parts: int, sizes: list[int]
) -> None:
    keys = list(range(100, 100 + n_keys))
    parts = sweep_parts(keys, cells_per_instance=cells_per_instance,
                        cells_per_part=cells_per_part, max_parts=max_parts)
    assert [len(p) for p in parts] == sizes
    assert [k for p in parts for k in p] == keys


def test_a_part_size_below_one_cell_is_refused() -> None:
    with pytest.raises(ValueError, match="cells_per_part"):
        sweep_parts([1, 2], cells_per_instance=5, cells_per_part=0, max_parts=4)


def test_a_frame_survives_its_json_table_exactly() -> None:
    frame = pd.DataFrame({
        "instance_key": np.array([3, 1], dtype=np.int64),
        "time_to_train_hours": [1 / 3, np.nan],
        "gpu": pd.array(["H100 SXM", "A100 80GB"], dtype="str"),
    })
    table = frame_to_table(frame)
    assert table["rows"][1][1] is None  # JSON has no NaN (PostgreSQL's jsonb refuses it)
    back = frame_from_table(table)
    pd.testing.assert_frame_equal(back, frame)
