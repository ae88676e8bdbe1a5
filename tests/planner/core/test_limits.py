"""The bounds table (planner.core.limits): each bound documented with its value, and the
memory check refusing before allocation with the size in words."""

from pathlib import Path

import pytest

from planner.core.limits import LIMITS, MAX_ARRAY_BYTES, check_array_bytes

DOCS = Path(__file__).resolve().parents[3] / "docs" / "limits.md"


def test_every_bound_is_in_the_manual_with_its_value() -> None:
    text = DOCS.read_text()
    for limit in LIMITS:
        shown = f"{limit.value:,.0f}" if limit.unit != "bytes" else "1 GiB"
        assert f"`{limit.name}`" in text and shown in text, limit.name


def test_an_array_over_the_budget_is_refused_saying_how_much_and_what_to_do() -> None:
    with pytest.raises(ValueError, match=r"^the grid would need 2.0 GiB of memory "
                                         r"\(16,384 x 16,384 values\); at most 1.0 GiB per "
                                         r"step: ask for less$"):
        check_array_bytes((16_384, 16_384), "the grid", "ask for less")


def test_an_array_at_the_budget_passes() -> None:
    check_array_bytes((MAX_ARRAY_BYTES // 8,), "the grid", "ask for less")
    check_array_bytes((MAX_ARRAY_BYTES // 16, 2), "the grid", "ask for less")
    with pytest.raises(ValueError):
        check_array_bytes((MAX_ARRAY_BYTES // 16, 2), "the grid", "ask for less", copies=2)
