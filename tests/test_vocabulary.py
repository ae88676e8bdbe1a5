"""Each vocabulary is written once: its table. A second hand-written copy of a code drifts
(provider labels did: `vastai`/`runpod` keys no code produced), so these tests fail when a
code appears as a string literal outside its table, the migrations and the tests."""

import ast
import re
from pathlib import Path

import pytest

from planner.core.formatting import label
from planner.core.providers import PROVIDER_CODES, PROVIDERS
from planner.core.purchase_options import PAYMENT_OPTIONS, PURCHASE_OPTION_CODES

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("planner", "pricing", "simulator")
PURCHASE_TABLE = "planner/core/purchase_options.py"
PROVIDER_TABLE = "planner/core/providers.py"
# Literals equal to a code that mean something else, each with its reason.
NOT_CODES = {
    # the purchase-mix document's `spot` field (a dataclass field name, not an option code)
    ("planner/reports/core/purchase_mix.py", "spot"),
}


def _sources() -> list[Path]:
    return [p for package in PACKAGES for p in (ROOT / package).rglob("*.py")
            if "migrations" not in p.parts]


def _templates() -> list[Path]:
    return [*(ROOT / "templates").rglob("*.html"), *(ROOT / "static" / "js").rglob("*.js")]


def _literal_copies(codes: set[str], table: str) -> list[str]:
    """path:line of every string constant equal to one of `codes` outside `table`."""
    found = []
    for path in _sources():
        rel = path.relative_to(ROOT).as_posix()
        if rel == table:
            continue
        for node in ast.walk(ast.parse(path.read_text(), rel)):
            if (isinstance(node, ast.Constant) and node.value in codes
                    and (rel, node.value) not in NOT_CODES):
                found.append(f"{rel}:{node.lineno}: {node.value!r}")
    pattern = re.compile(r"""["']({})["']""".format("|".join(sorted(codes))))
    for path in _templates():
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if pattern.search(line):
                found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()[:80]}")
    return found


def test_purchase_option_codes_are_written_only_in_their_table():
    codes = set(PURCHASE_OPTION_CODES) | {p.code for p in PAYMENT_OPTIONS if p.code}
    assert _literal_copies(codes, PURCHASE_TABLE) == []


def test_provider_codes_are_written_only_in_their_table():
    assert _literal_copies(set(PROVIDER_CODES), PROVIDER_TABLE) == []


@pytest.mark.parametrize("provider", PROVIDERS, ids=lambda p: p.code)
def test_every_provider_reads_as_its_table_label(provider):
    assert label(provider.code) == provider.label
