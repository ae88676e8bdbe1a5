"""Hostile JSON bodies for every API body (POST /api/simulations, POST /api/plans), nested
workload, goal and layout objects included: each answer is a 4xx naming the field, or a run
that is stored and then finishes (never a 5xx, never a run accepted and then failed).

Two layers: a fixed corpus (every field of the declared schemas x every kind of hostile
value the audit used: Infinity, NaN, lists, objects, 400-digit integers, NUL, over-long
strings, zero, negative and absurd sizes), and a hypothesis property over random mutations of
valid bodies. Both run on SQLite and, through .ci/postgres, on PostgreSQL (NUL and over-long
strings are where the two differ)."""

import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from hypothesis import given
from hypothesis import strategies as st

from planner.core.layout_knobs import KNOB_NAMES
from planner.plans.core.fields import SCENARIO_FIELDS
from planner.plans.models import PlanScenario
from pricing.models import InstanceType
from simulator.models import SimulationRun
from simulator.requests import GOAL_BOUNDS, GOODPUT_INPUTS, WORKLOAD_BOUNDS
from tests.clients import signed_in
from tests.hostile import HOSTILE_SETTINGS

pytestmark = pytest.mark.django_db

HOSTILE_VALUES: tuple[Any, ...] = (
    float("inf"), float("-inf"), float("nan"), [1], [], {"a": 1}, {}, 10**400, -(10**400),
    "\x00", "a\x00b", "x" * 100_000, 0, -1, -1e300, 1e-320, 1e30, "", True, "8", None,
)
SIMULATION_PATHS: tuple[tuple[str, ...], ...] = (
    ("kind",), ("nodes",), ("instance_type_id",), ("workload",), ("goal",), ("layout",),
    ("zzz",), ("workload", "zzz"), ("goal", "zzz"), ("layout", "zzz"),
    ("workload", "preset"), ("workload", "name"),
    *(("workload", name) for name in WORKLOAD_BOUNDS),
    *(("goal", name) for name in GOAL_BOUNDS if name not in GOODPUT_INPUTS),
    ("goodput", "zzz"), *(("goodput", name) for name in GOODPUT_INPUTS),
    *(("layout", name) for name in KNOB_NAMES),
)
PLAN_PATHS: tuple[tuple[str, ...], ...] = (
    ("zzz",), ("layout",), ("layout", "zzz"),
    *((field.name,) for field in SCENARIO_FIELDS),
    *(("layout", field.name) for field in SCENARIO_FIELDS if field.is_layout),
)


@pytest.fixture
def ana(loaded_catalog: None) -> User:
    return User.objects.create_user("ana", password="pw-ana-123")


def _simulation(instance_id: int) -> dict[str, Any]:
    return {"kind": "single", "workload": {"preset": "llama2-7b"}, "goal": {"tokens": 1e11},
            "instance_type_id": instance_id, "nodes": 1, "layout": {}}


# A plan that sweeps one GPU on up to 2 nodes: accepted hostile bodies run in a second or two.
PLAN = {"workload": "llama2-7b", "tokens": 1e11, "providers": ["aws"],
        "purchase_options": ["on_demand"], "gpus": ["a100-sxm4-80gb"], "max_nodes": 2}


def _with(body: dict[str, Any], path: tuple[str, ...], value: Any) -> dict[str, Any]:
    copy = json.loads(json.dumps(body))
    node = copy
    for key in path[:-1]:
        if not isinstance(node.get(key), dict):
            node[key] = {}
        node = node[key]
    node[path[-1]] = value
    return copy


def _post(client: Client, url: str, body: dict[str, Any]) -> Any:
    # allow_nan: Infinity and NaN as the literals a hostile client sends
    return client.post(url, json.dumps(body, allow_nan=True), content_type="application/json")


class Tally:
    """What the corpus got: answers by status, and accepted runs that failed."""

    def __init__(self) -> None:
        self.statuses: dict[int, int] = {}
        self.failed_runs: list[str] = []
        self.server_errors: list[str] = []

    def add(self, what: str, status: int) -> None:
        self.statuses[status] = self.statuses.get(status, 0) + 1
        if status >= 500:
            self.server_errors.append(f"{what}: {status}")


def _check(tally: Tally, what: str, response: Any, run: Callable[[int], Any]) -> None:
    tally.add(what, response.status_code)
    if response.status_code == 201:
        row = run(response.json()["id"])
        if row.status != "done":
            tally.failed_runs.append(f"{what}: {row.status} {row.error}")
    elif response.status_code in (400, 422):
        body = response.json()
        assert body.get("detail"), what  # a message (422: a list naming each field's loc)


@pytest.fixture
def eager(eager_celery: None, django_capture_on_commit_callbacks: Any) -> Iterator[Any]:
    yield django_capture_on_commit_callbacks


def _is_a_field(path: tuple[str, ...]) -> bool:
    """A declared field (not an unknown key, which the schemas ignore)."""
    return path[-1] != "zzz"


# One test per field (every hostile value in turn), so that parallel test workers share the
# corpus (about a thousand bodies).
@pytest.mark.parametrize("path", SIMULATION_PATHS, ids=".".join)
def test_the_hostile_simulation_corpus_gives_no_5xx_and_no_failed_run(
    ana: User, eager: Any, path: tuple[str, ...]
) -> None:
    client = signed_in(ana)
    instance = InstanceType.objects.get(provider__slug="aws", name="p4de.24xlarge")
    tally = Tally()
    for value in HOSTILE_VALUES:
        what = f"{'.'.join(path)}={str(value)[:20]!r}"
        with eager(execute=True):
            response = _post(client, "/api/simulations",
                             _with(_simulation(instance.id), path, value))
        _check(tally, what, response, lambda pk: SimulationRun.objects.get(pk=pk))
    assert not tally.server_errors, tally.server_errors
    assert not tally.failed_runs, tally.failed_runs
    if _is_a_field(path):  # the schema refuses hostile values, naming the field
        assert tally.statuses.get(422, 0) > 0, tally.statuses


@pytest.mark.parametrize("path", PLAN_PATHS, ids=".".join)
def test_the_hostile_plan_corpus_gives_no_5xx_and_no_failed_run(
    ana: User, eager: Any, path: tuple[str, ...]
) -> None:
    client = signed_in(ana)
    tally = Tally()
    for value in HOSTILE_VALUES:
        what = f"{'.'.join(path)}={str(value)[:20]!r}"
        with eager(execute=True):
            response = _post(client, "/api/plans", _with(PLAN, path, value))
        _check(tally, what, response, lambda pk: PlanScenario.objects.get(pk=pk))
    assert not tally.server_errors, tally.server_errors
    assert not tally.failed_runs, tally.failed_runs


def test_a_422_names_the_nested_field(ana: User) -> None:
    client = signed_in(ana)
    response = _post(client, "/api/simulations",
                     {"workload": {"preset": "llama2-7b"}, "layout": {"tp": float("inf")}})
    assert response.status_code == 422
    assert response.json()["detail"][0]["loc"][-2:] == ["layout", "tp"]
    response = _post(client, "/api/plans", {**PLAN, "layout": {"recompute": ["full"]}})
    assert response.status_code == 422
    assert response.json()["detail"][0]["loc"][-2:] == ["layout", "recompute"]


def test_compare_ignores_ids_that_are_not_ascii_digits(ana: User) -> None:
    response = signed_in(ana).get("/plans/compare?id=1&id=%C2%B2")
    assert response.status_code < 500


def _leaves(draw: st.DrawFn) -> Any:
    return draw(st.one_of(
        st.sampled_from(HOSTILE_VALUES),
        st.integers(min_value=-(2**70), max_value=2**70),
        st.floats(allow_nan=True, allow_infinity=True),
        st.text(max_size=20),
        st.booleans(),
        st.lists(st.integers(), max_size=2),
    ))


@st.composite
def _mutations(draw: st.DrawFn, paths: tuple[tuple[str, ...], ...]
               ) -> list[tuple[tuple[str, ...], Any]]:
    return [(draw(st.sampled_from(paths)), _leaves(draw))
            for _ in range(draw(st.integers(1, 3)))]


@HOSTILE_SETTINGS
@given(mutations=_mutations(SIMULATION_PATHS))
def test_random_hostile_simulation_bodies(ana: User, eager: Any,
                                          mutations: list[tuple[tuple[str, ...], Any]]) -> None:
    instance = InstanceType.objects.get(provider__slug="aws", name="p4de.24xlarge")
    body = _simulation(instance.id)
    for path, value in mutations:
        body = _with(body, path, value)
    tally = Tally()
    with eager(execute=True):
        response = _post(signed_in(ana), "/api/simulations", body)
    _check(tally, str(mutations)[:200], response, lambda pk: SimulationRun.objects.get(pk=pk))
    assert not tally.server_errors and not tally.failed_runs, (tally.server_errors,
                                                               tally.failed_runs)


@HOSTILE_SETTINGS
@given(mutations=_mutations(PLAN_PATHS))
def test_random_hostile_plan_bodies(ana: User, eager: Any,
                                    mutations: list[tuple[tuple[str, ...], Any]]) -> None:
    body = dict(PLAN)
    for path, value in mutations:
        body = _with(body, path, value)
    tally = Tally()
    with eager(execute=True):
        response = _post(signed_in(ana), "/api/plans", body)
    _check(tally, str(mutations)[:200], response, lambda pk: PlanScenario.objects.get(pk=pk))
    assert not tally.server_errors and not tally.failed_runs, (tally.server_errors,
                                                               tally.failed_runs)


@pytest.mark.parametrize(("url", "path"), [
    ("/api/plans", ("tokens",)), ("/api/plans", ("budget_usd",)),
    ("/api/plans", ("layout", "tp")), ("/api/simulations", ("goal", "tokens")),
    ("/api/simulations", ("workload", "n_layers")),
])
def test_a_boolean_is_not_a_number(ana: User, url: str, path: tuple[str, ...]) -> None:
    # "tokens": true planned one token
    body = PLAN if url == "/api/plans" else _simulation(
        InstanceType.objects.get(provider__slug="aws", name="p4de.24xlarge").id)
    response = _post(signed_in(ana), url, _with(body, path, True))
    assert response.status_code == 422
    assert response.json()["detail"][0]["loc"][-len(path):] == list(path)
    assert not PlanScenario.objects.exists() and not SimulationRun.objects.exists()


@pytest.mark.parametrize("content_type", ["text/plain", "application/x-www-form-urlencoded",
                                          "application/octet-stream"])
def test_json_only_as_application_json(ana: User, content_type: str) -> None:
    response = signed_in(ana).post("/api/plans", json.dumps(PLAN), content_type=content_type)
    assert response.status_code == 415
    assert response.json()["detail"] == (
        "send the body as JSON with Content-Type: application/json (it came as "
        f"{content_type!r})")
    assert not PlanScenario.objects.exists()


def test_json_under_its_own_type_with_a_charset_is_read(ana: User, eager: Any) -> None:
    with eager(execute=True):
        response = signed_in(ana).post("/api/plans", json.dumps(PLAN),
                                       content_type="application/json; charset=utf-8")
    assert response.status_code == 201, response.content


@pytest.mark.parametrize(("layout", "nodes", "says"), [
    ({"tp": 16}, 1, "layout: no layout of 8 GPUs (1 x p4de.24xlarge) is consistent with tp=16 "
                    "and a global batch of 1,024 sequences"),
    ({"pp": 3, "tp": 2}, 1, "consistent with tp=2, pp=3 and"),
    ({"dp": 5}, 2, "layout: no layout of 16 GPUs (2 x p4de.24xlarge) is consistent with dp=5"),
])
def test_a_simulation_without_a_consistent_layout_is_refused_before_it_is_stored(
    ana: User, layout: dict[str, int], nodes: int, says: str
) -> None:
    # accepted (201), then failed "no layout is consistent"
    instance = InstanceType.objects.get(provider__slug="aws", name="p4de.24xlarge")
    body = {**_simulation(instance.id), "layout": layout, "nodes": nodes}
    response = _post(signed_in(ana), "/api/simulations", body)
    assert response.status_code == 400
    assert says in response.json()["detail"]
    assert not SimulationRun.objects.exists()
