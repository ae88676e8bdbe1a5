"""Split a plan's catalog sweep into parts that workers sweep in parallel."""

from __future__ import annotations

import math
from collections.abc import Sequence


def sweep_parts(
    instance_keys: Sequence[int], *, cells_per_instance: int, cells_per_part: int,
    max_parts: int,
) -> list[list[int]]:
    """Instance keys in contiguous parts of about `cells_per_part` sweep cells each.

    A cell is one instance type × node count × layout the simulator evaluates, so a sweep of
    n instances has n × cells_per_instance cells. The order of `instance_keys` is kept (callers
    pass them grouped by GPUs per node, which the vectorized sweep evaluates together). One part
    when the whole sweep fits in one; never more than `max_parts` parts or one per instance.
    Every key is in exactly one part.
    """
    if cells_per_part < 1 or max_parts < 1 or cells_per_instance < 0:
        raise ValueError("cells_per_part and max_parts must be at least 1")
    keys = list(instance_keys)
    cells = len(keys) * cells_per_instance
    n_parts = max(1, min(math.ceil(cells / cells_per_part), max_parts, len(keys)))
    size, extra = divmod(len(keys), n_parts)
    parts, start = [], 0
    for index in range(n_parts):
        stop = start + size + (1 if index < extra else 0)
        parts.append(keys[start:stop])
        start = stop
    return [part for part in parts if part]
