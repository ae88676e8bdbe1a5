"""The suite runs in parallel (pytest-xdist): each worker gets its own Redis database, and the
tests awaiting one slow background job run in one worker."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests import background, suite_order
from tests.conftest import ROOT, worker_redis_url


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


def test_the_tests_awaiting_a_background_job_share_one_group_per_job() -> None:
    for prefix in background.JOBS.values():
        first, second = (prefix + ("x" if prefix.endswith("::") else ""),
                         prefix + ("y" if prefix.endswith("::") else "[param]"))
        assert background.group_of(first) == background.group_of(second) is not None
    groups = {background.group_of(prefix + "x") for prefix in background.JOBS.values()}
    assert len(groups) == len(background.JOBS)
    assert background.group_of("tests/test_docs.py::test_the_manual_builds_with_no_warning") is None


GROUPED_TESTS = """
import os

import pytest


@pytest.mark.xdist_group("slow-job")
@pytest.mark.parametrize("n", range(6))
def test_grouped(n):
    print(f"WORKER {os.environ['PYTEST_XDIST_WORKER']}")


@pytest.mark.parametrize("n", range(6))
def test_free(n):
    pass
"""
GROUPED_CONFTEST = """
import pytest

from tests import xdist_groups


@pytest.hookimpl(wrapper=True)
def pytest_collection_modifyitems(config, items):
    result = yield
    xdist_groups.apply_group_suffixes(config, items)
    return result
"""


def test_loadgroup_sends_a_group_to_one_worker(tmp_path: Path) -> None:
    """`--dist loadgroup` keeps an xdist_group in one process on this pytest and pytest-xdist
    (it silently stopped doing so with pytest 9.2: tests/xdist_groups.py)."""
    (tmp_path / "test_grouped.py").write_text(GROUPED_TESTS)
    (tmp_path / "conftest.py").write_text(GROUPED_CONFTEST)
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:django",
         "-n", "2", "--dist", "loadgroup", "-v", "-s",
         "test_grouped.py"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False,
        env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stdout + done.stderr
    grouped = re.findall(r"\[(gw\d)\] .*PASSED test_grouped.py::test_grouped\[\d\]@slow-job",
                         done.stdout)
    assert len(grouped) == 6, done.stdout
    assert len(set(grouped)) == 1, done.stdout


class _FakeItem:
    """What suite_order reads of a collected test: its markers and fixture names."""

    def __init__(self, name: str, *marks: pytest.MarkDecorator, fixtures: tuple[str, ...] = ()):
        self.name, self.fixturenames = name, list(fixtures)
        self._marks = {mark.mark.name: mark.mark for mark in marks}

    def get_closest_marker(self, name: str) -> pytest.Mark | None:
        return self._marks.get(name)


def test_the_integration_waits_are_spread_among_cpu_work_after_the_database_tests() -> None:
    """pytest-django's order stays (tests in a transaction before the transactional ones that
    empty the tables); the integration tests come before the browser tests, each followed by
    its share of the tests without a database; browser tests stay together."""
    transactional = pytest.mark.django_db(transaction=True)
    items = [_FakeItem("db", pytest.mark.django_db), _FakeItem("db-fixture", fixtures=("db",)),
             _FakeItem("browser", pytest.mark.browser, fixtures=("live_server",)),
             _FakeItem("browser-worker", pytest.mark.browser, pytest.mark.integration,
                       transactional),
             _FakeItem("wait1", pytest.mark.integration, transactional),
             _FakeItem("wait2", pytest.mark.integration, transactional),
             *(_FakeItem(f"free{i}") for i in range(4))]
    suite_order.order_for_workers(items)  # type: ignore[arg-type]
    assert [item.name for item in items] == [
        "db", "db-fixture", "wait1", "free0", "free1", "wait2", "free2", "free3", "browser",
        "browser-worker"]
    kinds = [suite_order.database_use(item) for item in items]  # type: ignore[arg-type]
    assert kinds.index(suite_order.TRANSACTIONAL) > max(
        i for i, kind in enumerate(kinds) if kind == suite_order.DATABASE)
