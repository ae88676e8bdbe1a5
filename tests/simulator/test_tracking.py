"""The shared task protocol: claim once, store the result, or store a readable failure."""

import pytest
from django.contrib.auth.models import User

from simulator.models import SimulationRun
from simulator.tracking import run_execute

pytestmark = pytest.mark.django_db


@pytest.fixture
def run() -> SimulationRun:
    owner = User.objects.create_user("ana", password="pw-ana-123")
    return SimulationRun.objects.create(owner=owner, request={})


def test_result_is_stored_once_and_a_second_delivery_does_nothing(run: SimulationRun) -> None:
    calls: list[int] = []

    def compute(row: SimulationRun) -> dict:
        calls.append(row.id)
        return {"answer": 42}

    run_execute(SimulationRun, run.id, compute)
    run_execute(SimulationRun, run.id, compute)
    run.refresh_from_db()
    assert calls == [run.id]
    assert (run.status, run.result, run.progress_pct) == ("done", {"answer": 42}, 100)
    assert run.started_at and run.finished_at


def test_bad_input_fails_with_its_message(run: SimulationRun) -> None:
    def compute(row: SimulationRun) -> dict:
        raise ValueError("nodes: must be between 1 and 512")

    run_execute(SimulationRun, run.id, compute)
    run.refresh_from_db()
    assert run.status == "failed" and run.error == "nodes: must be between 1 and 512"


def test_an_unexpected_error_is_stored_and_raised(run: SimulationRun) -> None:
    def compute(row: SimulationRun) -> dict:
        raise KeyError("oops")

    with pytest.raises(KeyError):
        run_execute(SimulationRun, run.id, compute)
    run.refresh_from_db()
    assert run.status == "failed" and run.error == "internal error: KeyError"
