"""Each vocabulary is written once: its table. A second hand-written copy of a code drifts
(provider labels did: `vastai`/`runpod` keys no code produced), so these tests fail when a
code appears as a string literal outside its table, the migrations and the tests."""

import ast
import dataclasses
import re
from pathlib import Path

import pytest

from planner.core.formatting import label
from planner.core.layout_knobs import KNOB_NAMES, KNOBS_BY_NAME, LAYOUT_KNOBS
from planner.core.providers import MAX_CLUSTER_NODES, PROVIDER_CODES, PROVIDERS
from planner.core.purchase_options import PAYMENT_OPTIONS, PURCHASE_OPTION_CODES
from simulator.core.hardware import PRECISIONS
from simulator.core.layout import RECOMPUTE_MODES, LayoutConstraints

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
    alternatives = "|".join(sorted(codes))
    pattern = re.compile(rf"""["']({alternatives})["']""")
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


KNOB_TABLE = "planner/core/layout_knobs.py"
# Integer literals equal to MAX_CLUSTER_NODES that are not the largest cluster, with reasons.
NOT_CLUSTER_SIZES = {
    # the accuracy table's GPU-count bands ("65-512 GPUs"), not a cluster of nodes
    "simulator/core/validation.py",
    # BERT's sequence length (tokens)
    "simulator/core/workloads.py",
}


def _calls_restating(knob) -> list[str]:
    """Calls outside the knob table that name a bounded knob (by name or label) and pass both
    of its bounds as numbers: a second field table."""
    bounds = {knob.minimum, knob.maximum}
    found = []
    for path in _sources():
        rel = path.relative_to(ROOT).as_posix()
        if rel == KNOB_TABLE:
            continue
        for node in ast.walk(ast.parse(path.read_text(), rel)):
            if not isinstance(node, ast.Call):
                continue
            args = [*node.args, *(k.value for k in node.keywords)]
            texts = {a.value for a in args if isinstance(a, ast.Constant)
                     and isinstance(a.value, str)}
            numbers = {a.value for a in args if isinstance(a, ast.Constant)
                       and isinstance(a.value, int | float) and not isinstance(a.value, bool)}
            if texts & {knob.name, knob.label} and bounds <= numbers:
                found.append(f"{rel}:{node.lineno}")
    return found


@pytest.mark.parametrize("knob", [k for k in LAYOUT_KNOBS if k.maximum is not None],
                         ids=lambda k: k.name)
def test_layout_bounds_are_written_only_in_their_table(knob):
    assert _calls_restating(knob) == []


def test_the_largest_cluster_is_written_once():
    found = []
    for path in _sources():
        rel = path.relative_to(ROOT).as_posix()
        if rel in {PROVIDER_TABLE, *NOT_CLUSTER_SIZES}:
            continue
        found += [f"{rel}:{node.lineno}" for node in ast.walk(ast.parse(path.read_text(), rel))
                  if isinstance(node, ast.Constant) and node.value == MAX_CLUSTER_NODES
                  and not isinstance(node.value, bool)]
    assert found == []


def test_layout_knob_choices_are_the_simulators():
    assert set(KNOBS_BY_NAME["recompute"].choices) == set(RECOMPUTE_MODES)
    assert set(KNOBS_BY_NAME["precision"].choices) == set(PRECISIONS)
    assert set(KNOB_NAMES) == {f.name for f in dataclasses.fields(LayoutConstraints)}


@pytest.mark.django_db
@pytest.mark.parametrize("knob", [k for k in LAYOUT_KNOBS if k.is_on_forms
                                  and k.kind == "integer"], ids=lambda k: k.name)
def test_plan_and_simulation_forms_take_a_knob_within_its_bounds_only(knob):
    from planner.plans.forms import PlanForm
    from simulator.forms import SimulationForm

    forms = [SimulationForm, *([PlanForm] if knob.is_planned else [])]
    for form_class in forms:
        for value, is_allowed in ((knob.maximum, True), (knob.maximum + 1, False),
                                  (knob.minimum, True), (knob.minimum - 1, False)):
            form = form_class(data={knob.name: str(value)})
            form.is_valid()
            assert (knob.name not in form.errors) is is_allowed, (form_class, value)


@pytest.mark.django_db
def test_upload_settings_reach_the_api_the_command_and_the_forms():
    from planner.api import api
    from planner.management.commands.recommend_mix import Command
    from planner.purchase_mix.core.upload.settings import UPLOAD_SETTINGS
    from planner.purchase_mix.forms import RunForm, UploadForm

    operation = api.get_openapi_schema(path_prefix="/api")["paths"]["/api/histories"]["post"]
    content = operation["requestBody"]["content"]["multipart/form-data"]["schema"]
    api_fields = content["properties"]
    parser = Command().create_parser("manage.py", "recommend_mix")
    options = {a.dest: a for a in parser._actions}
    form_fields = {**UploadForm().fields, **RunForm().fields}
    for setting in UPLOAD_SETTINGS:
        assert api_fields[setting.name].get("default") == setting.default, setting.name
        assert options[setting.name].default == setting.default, setting.name
        if setting.is_on_forms:
            assert form_fields[setting.field_name].label == setting.label, setting.name
        if setting.choices:
            assert tuple(options[setting.name].choices) == setting.values
            assert [v for v, _ in form_fields[setting.field_name].choices] == list(
                setting.values)
