"""`--dist loadgroup` that still groups on pytest 9.2.

pytest-xdist (3.8) hands each test's `xdist_group` to its scheduler as a suffix of the test's
node id ("tests/x.py::test_y@group"), written into `item._nodeid`; pytest 9.2 keeps node ids in
`item._id` and no longer reads that field, so every group was silently ignored and its tests
spread over the workers (pytest-xdist issue 1386). The suite's slowest fixture, the
leave-one-family-out cross-validation, then ran once in each worker. `apply_group_suffixes`
writes the suffix the way this pytest holds node ids, only where xdist's own write did not
take: nothing changes on a pytest or xdist that works.
"""

from __future__ import annotations

import pytest


def group_suffix(item: pytest.Item) -> str | None:
    """"@name" as pytest-xdist names a test's group (several marks: their names joined)."""
    names = {str(mark.args[0] if mark.args else mark.kwargs.get("name", "default"))
             for mark in item.iter_markers("xdist_group")}
    return "@" + "_".join(sorted(names)) if names else None


def apply_group_suffixes(config: pytest.Config, items: list[pytest.Item]) -> int:
    """In an xdist worker under `--dist loadgroup`, after xdist's own hook: give every grouped
    test that lacks it its group suffix. Returns how many node ids were written."""
    if not config.getoption("loadgroup", default=False):  # set in xdist workers only
        return 0
    written = 0
    for item in items:
        suffix = group_suffix(item)
        if suffix is None or item.nodeid.endswith(suffix):
            continue
        node_id = getattr(item, "_id", None)
        parse = getattr(type(node_id), "parse", None)
        if parse is None:  # a pytest without structured node ids: xdist's write works there
            continue
        item._id = parse(item.nodeid + suffix)  # type: ignore[attr-defined]
        written += 1
    return written
