"""A PostgreSQL restart under traffic gives no 5xx: gunicorn (2 workers, persistent
connections) serves signed-in pages and the API while the cluster restarts in fast mode
(every session cut). Stale connections are checked before reuse (CONN_HEALTH_CHECKS), a new
connection waits for the server (planner.postgres), and a read cut mid-way runs again
(planner.dbretry).

Runs in `make test-postgres` (.ci/postgres sets TEST_POSTGRES_RESTART); skipped elsewhere."""

import http.client
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test import Client

from tests.conftest import ROOT, load_catalog, worker_database_url

RESTART = os.environ.get("TEST_POSTGRES_RESTART", "")
pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(not RESTART, reason="needs the throwaway cluster of .ci/postgres "
                                           "(TEST_POSTGRES_RESTART)"),
]
PAGES = ("/plans/", "/history/", "/simulations/", "/reports/", "/api/reports", "/gpus/",
         "/api/gpus")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _get(port: int, path: str, cookie: str) -> int:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        conn.request("GET", path, headers={"Cookie": cookie})
        return conn.getresponse().status
    finally:
        conn.close()


def _gunicorn(port: int, log: Path) -> subprocess.Popen[bytes]:
    env = dict(os.environ, DATABASE_URL=worker_database_url(), DEBUG="0",
               SECRET_KEY="test-only-secret", ALLOWED_HOSTS="127.0.0.1",
               STATIC_MANIFEST="0")
    with log.open("ab") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "planner.wsgi", "-w", "2", "-b",
             f"127.0.0.1:{port}", "--timeout", "120"],
            cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)


def _wait_up(server: subprocess.Popen[bytes], port: int, log: Path) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if server.poll() is not None:
            pytest.fail(f"gunicorn exited:\n{log.read_text(errors='replace')}")
        try:
            _get(port, "/gpus/", "")
            return
        except OSError:
            time.sleep(0.2)
    pytest.fail("gunicorn did not answer within 60 s")


def _traffic(port: int, cookie: str, stop: threading.Event, out: list[tuple[float, str, Any]]
             ) -> None:
    i = 0
    while not stop.is_set():
        path = PAGES[i % len(PAGES)]
        i += 1
        try:
            out.append((time.monotonic(), path, _get(port, path, cookie)))
        except OSError as exc:
            out.append((time.monotonic(), path, repr(exc)))


def _start_time() -> Any:
    connection.close()  # the test's own session was cut too
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_postmaster_start_time()")
        return cursor.fetchone()[0]


def test_a_postgresql_restart_under_traffic_gives_no_5xx(tmp_path: Path) -> None:
    load_catalog()
    client = Client()
    client.force_login(User.objects.create_user("ada", password="pw-ada-123"))
    cookie = f"sessionid={client.cookies['sessionid'].value}"
    port, log = _free_port(), tmp_path / "gunicorn.log"
    server = _gunicorn(port, log)
    results: list[tuple[float, str, Any]] = []
    stop = threading.Event()
    threads = [threading.Thread(target=_traffic, args=(port, cookie, stop, results))
               for _ in range(4)]
    try:
        _wait_up(server, port, log)
        before = _start_time()
        for thread in threads:
            thread.start()
        time.sleep(3)  # every gunicorn worker holds a persistent connection now
        restarted_at = time.monotonic()
        subprocess.run(RESTART, shell=True, check=True, timeout=60,  # noqa: S602 - our command
                       capture_output=True)
        time.sleep(4)
    finally:
        stop.set()
        for thread in threads:
            thread.join(timeout=90)
        server.terminate()
        server.wait(timeout=30)
    assert _start_time() > before  # the cluster did restart
    after = [status for at, _, status in results if at > restarted_at]
    failures = [(path, status) for _, path, status in results if status != 200]
    print(f"{len(results)} requests, {len(after)} after the restart began; "  # noqa: T201
          f"not 200: {failures}")
    assert not failures, (failures, log.read_text(errors="replace")[-3000:])
    assert after.count(200) > 20
