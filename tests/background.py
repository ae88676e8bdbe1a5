"""Slow pure computations run in a second process from the start of the session, on the core
the suite leaves idle, so that their tests only collect the result at the end.

A job is a Django-free function without arguments, named "module:function". `start(items)`
starts, in one spawned process and in turn, the jobs that a collected test awaits (JOBS);
`result(job)` waits for one (or runs it here, once, when it was not started).

Under pytest-xdist every test process collects every test but runs only some, and the workers
already keep the cores busy: no background process is started there, and the tests that await
a job run in one worker (the `xdist_group` named by `group_of`, one per job), which runs it
once; xdist sends the largest groups first, so a job starts with the run, not at its end. The
child turns warnings into errors as pytest's filterwarnings does here, so a job that warns still
fails the test that awaits it, and its exceptions come back with their traceback.
"""

from __future__ import annotations

import importlib
import multiprocessing
import os
import traceback
import warnings
from collections.abc import Sequence
from multiprocessing.connection import Connection
from typing import Any

import pytest

# job -> the node id prefix of the tests that await it (a test file, or one test)
JOBS: dict[str, str] = {
    "tests.simulator.core.fits:shipped_refit":
        "tests/simulator/core/test_calibration.py::test_refit_reproduces_shipped_calibration",
    "tests.simulator.core.fits:family_cross_validation":
        "tests/simulator/core/test_crossval.py::",
}


def group_of(nodeid: str) -> str | None:
    """The xdist group of a test that awaits a job, one per job ("background-<function>"), so
    that two jobs can run in two workers at once; None for the other tests."""
    for job, prefix in JOBS.items():
        if nodeid.startswith(prefix):
            return "background-" + job.partition(":")[2]
    return None


def _call(job: str) -> Any:
    module, _, name = job.partition(":")
    return getattr(importlib.import_module(module), name)()


_computed_here: dict[str, Any] = {}


def _child(jobs: Sequence[str], conn: Connection) -> None:
    warnings.simplefilter("error")
    for job in jobs:
        try:
            conn.send((job, True, _call(job)))
        except BaseException as exc:  # noqa: BLE001 - every failure goes back to the test
            conn.send((job, False, "".join(traceback.format_exception(exc))))
    conn.close()


class _Worker:
    def __init__(self, jobs: Sequence[str]) -> None:
        context = multiprocessing.get_context("spawn")
        self._conn, child_end = context.Pipe(duplex=False)
        self.process = context.Process(target=_child, args=(list(jobs), child_end), daemon=True)
        self.process.start()
        child_end.close()
        self.pending = set(jobs)
        self._done: dict[str, tuple[bool, Any]] = {}

    def result(self, job: str) -> Any:
        while job not in self._done:
            try:
                name, ok, value = self._conn.recv()
            except EOFError:
                self.process.join(timeout=5)
                pytest.fail(f"the background process died before {job} "
                            f"(exit code {self.process.exitcode})")
            self._done[name] = (ok, value)
        ok, value = self._done[job]
        if not ok:
            pytest.fail(f"{job} failed in the background process:\n{value}")
        return value


_worker: _Worker | None = None


def start(items: Sequence[pytest.Item]) -> None:
    global _worker
    jobs = [job for job, prefix in JOBS.items()
            if any(item.nodeid.startswith(prefix) for item in items)]
    if jobs and _worker is None and not os.environ.get("PYTEST_XDIST_WORKER"):
        _worker = _Worker(jobs)


def result(job: str) -> Any:
    if _worker is not None and job in _worker.pending:
        return _worker.result(job)
    if job not in _computed_here:
        _computed_here[job] = _call(job)
    return _computed_here[job]


def stop() -> None:
    if _worker is not None and _worker.process.is_alive():
        _worker.process.terminate()
        _worker.process.join(timeout=10)
