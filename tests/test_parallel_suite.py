"""The suite runs in parallel (pytest-xdist): each worker gets its own Redis database, and the
tests awaiting one slow background job run in one worker."""

import pytest

from tests import background
from tests.conftest import worker_redis_url


@pytest.mark.parametrize(("url", "worker", "expected"), [
    ("redis://127.0.0.1:6379/7", None, "redis://127.0.0.1:6379/7"),
    ("redis://127.0.0.1:6379/7", "gw0", "redis://127.0.0.1:6379/7"),
    ("redis://127.0.0.1:6379/7", "gw1", "redis://127.0.0.1:6379/8"),
    ("redis://127.0.0.1:6379/15", "gw1", "redis://127.0.0.1:6379/14"),
    ("redis://:secret@redis:6380/3", "gw2", "redis://:secret@redis:6380/5"),
    ("redis://127.0.0.1:6379", "gw1", "redis://127.0.0.1:6379/1"),
])
def test_each_worker_has_its_own_redis_database(url: str, worker: str | None,
                                                expected: str) -> None:
    assert worker_redis_url(url, worker) == expected


def test_workers_never_share_a_database() -> None:
    for base in range(16):
        url = f"redis://127.0.0.1:6379/{base}"
        dbs = {worker_redis_url(url, f"gw{i}") for i in range(8)}
        assert len(dbs) == 8


def test_the_tests_awaiting_a_background_job_share_one_group() -> None:
    awaiting = [prefix + ("x" if prefix.endswith("::") else "")
                for prefix in background.JOBS.values()]
    assert {background.group_of(nodeid) for nodeid in awaiting} == {background.GROUP}
    assert background.group_of("tests/test_docs.py::test_the_manual_builds_with_no_warning") is None
