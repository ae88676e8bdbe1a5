"""Shared fixtures. Speed-ups only: the settings module is the production one.

Integration fixtures: a real Redis (TEST_REDIS_URL) and a Celery worker subprocess.
"""

import contextlib
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit, urlunsplit

import pytest
from django.conf import settings as django_settings
from django.core.management import call_command
from django.core.management.color import no_style

from tests import background, suite_order, xdist_groups

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.hookimpl(wrapper=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]
                                  ) -> Iterator[None]:
    """Under pytest-xdist (`--dist loadgroup`) the tests awaiting one background job run in
    one process, so that each slow job is computed once: marked before xdist names the groups,
    and named after it where it could not (tests/xdist_groups.py). Then, after pytest-django's
    database order, the integration tests' waits are spread among CPU work
    (tests/suite_order.py)."""
    for item in items:
        group = background.group_of(item.nodeid)
        if group is not None:
            item.add_marker(pytest.mark.xdist_group(group))
    result = yield
    xdist_groups.apply_group_suffixes(config, items)
    suite_order.order_for_workers(items)
    return result


def pytest_collection_finish(session: pytest.Session) -> None:
    if not session.config.option.collectonly:
        background.start(session.items)


def pytest_unconfigure(config: pytest.Config) -> None:
    background.stop()


@pytest.fixture(autouse=True)
def _fast_hashing(settings: Any) -> None:
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(autouse=True)
def _plain_static_storage(settings: Any) -> None:
    """Serve and render static files without collectstatic.

    Manifest storage needs staticfiles.json, and whitenoise warns (an error here) when
    STATIC_ROOT does not exist yet.
    """
    Path(settings.STATIC_ROOT).mkdir(parents=True, exist_ok=True)
    settings.STORAGES = {
        **settings.STORAGES,
        "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
    }


@pytest.fixture(scope="session")
def loaded_catalog(
    django_db_setup: None, django_db_blocker: pytest.FixtureRequest
) -> Iterator[None]:
    """The shipped catalog and prices, loaded once per session (load_catalog)."""
    with django_db_blocker.unblock():  # type: ignore[attr-defined]
        load_catalog()
    yield


@dataclass(frozen=True)
class _TableCopy:
    model: type[Any]
    insert_sql: str
    rows: list[tuple[Any, ...]]  # values as the database takes them


# The rows `load_catalog` wrote into an empty database, table by table.
_CATALOG_COPY: list[_TableCopy] = []


def _row_counts() -> dict[type[Any], int]:
    from django.apps import apps

    return {model: model._base_manager.count()
            for model in apps.get_models(include_auto_created=True)}


def _table_copy(model: type[Any]) -> _TableCopy:
    from django.db import connection

    fields = model._meta.concrete_fields
    columns = ", ".join(connection.ops.quote_name(field.column) for field in fields)
    insert_sql = (f"INSERT INTO {connection.ops.quote_name(model._meta.db_table)} ({columns}) "
                  f"VALUES ({', '.join(['%s'] * len(fields))})")
    rows = [tuple(field.get_db_prep_save(getattr(obj, field.attname), connection)
                  for field in fields)
            for obj in model._base_manager.order_by("pk")]
    return _TableCopy(model, insert_sql, rows)


def load_catalog() -> None:
    """What `manage.py load_catalog` does to the test database, fast after its first run.

    load_catalog is deterministic (the shipped files only), and a transactional test's flush
    empties every table: the rows its first run wrote into an empty database are kept and
    inserted again, with the same ids, into the next empty one (a fraction of a second instead
    of its 5-15 s parse and upsert). A database that already holds some of them gets the real
    command, which leaves it as a first run would.
    """
    from django.db import connection, transaction

    if _CATALOG_COPY and not any(copy.model._base_manager.exists() for copy in _CATALOG_COPY):
        models = [copy.model for copy in _CATALOG_COPY]
        with transaction.atomic(), connection.cursor() as cursor:
            for copy in _CATALOG_COPY:
                cursor.executemany(copy.insert_sql, copy.rows)
            for sql in connection.ops.sequence_reset_sql(no_style(), models):  # PostgreSQL
                cursor.execute(sql)
        return
    before = _row_counts()
    call_command("load_catalog", verbosity=0)
    after = _row_counts()
    written = [model for model, count in after.items() if count != before[model]]
    if not _CATALOG_COPY and written and not any(before[model] for model in written):
        _CATALOG_COPY.extend(_table_copy(model) for model in written)


@pytest.fixture
def fixtures_dir() -> Path:
    return FIXTURES


@pytest.fixture
def eager_celery() -> Iterator[None]:
    """Run tasks in-process (unit tests only; the integration tests use a real worker)."""
    from planner.celery import app

    old = (app.conf.task_always_eager, app.conf.task_eager_propagates)
    app.conf.update(task_always_eager=True, task_eager_propagates=True)
    yield
    app.conf.update(task_always_eager=old[0], task_eager_propagates=old[1])


ROOT = Path(__file__).resolve().parents[1]


REDIS_DATABASES = 16  # Redis's default `databases`


def worker_redis_url(url: str, worker: str | None, offset: int = 0) -> str:
    """The Redis database of one pytest-xdist worker ("gw0", "gw1"...; None without xdist):
    TEST_REDIS_URL's database for the first, the next numbers for the others (counting down
    from it when that would pass the last database), so that parallel workers never share a
    broker, a result store or a page cache; `offset` more for a second set (browser tests)."""
    index = (int(worker[2:]) if worker and worker.startswith("gw") else 0) + offset
    parts = urlsplit(url)
    base = int(parts.path.strip("/") or 0)
    db = base + index if base + index < REDIS_DATABASES else base - index
    if not 0 <= db < REDIS_DATABASES:
        raise ValueError(f"no Redis database for xdist worker {worker} from {url}")
    return urlunsplit(parts._replace(path=f"/{db}"))


def reachable_redis_url(offset: int = 0) -> str:
    """This xdist worker's Redis database (worker_redis_url of TEST_REDIS_URL, `offset` more),
    once it answers; the test skips without it (fails under REQUIRE_INTEGRATION=1)."""
    url = worker_redis_url(os.environ.get("TEST_REDIS_URL", "redis://127.0.0.1:6379/15"),
                           os.environ.get("PYTEST_XDIST_WORKER"), offset)
    try:
        import redis

        redis.Redis.from_url(url, socket_connect_timeout=1).ping()
    except Exception as exc:  # noqa: BLE001 - any failure means no usable Redis
        if os.environ.get("REQUIRE_INTEGRATION") == "1":
            pytest.fail(f"Redis at {url} is required (REQUIRE_INTEGRATION=1): {exc}")
        pytest.skip(f"no Redis at {url}: {exc}")
    return url


@pytest.fixture(scope="session")
def redis_url() -> str:
    return reachable_redis_url()


def worker_database_url() -> str:
    """The URL of the test database this process uses, for a worker or server subprocess."""
    from django.db import connection

    db = connection.settings_dict
    if connection.vendor == "sqlite":
        return f"sqlite:///{db['NAME']}"
    auth = f"{quote(db['USER'])}:{quote(db['PASSWORD'])}@" if db["USER"] else ""
    return f"postgres://{auth}{db['HOST']}:{db['PORT'] or 5432}/{db['NAME']}"


def start_worker(
    redis_url: str, log_path: Path, loglevel: str = "WARNING", node_name: str = "worker1",
    beat: bool = False, queues: str = "", **extra_env: str,
) -> subprocess.Popen[bytes]:
    """A real `celery worker` process (solo pool) on Redis and the test database; with
    beat=True it runs Celery beat inside it too (`-B`, the schedule file beside the log);
    `queues` ("short"): only those queues (default: every queue, as deployed workers).
    Started as deployed, with `--max-memory-per-child` (settings.py's default)."""
    beat_args = ["-B", f"--schedule={log_path.with_suffix('.beat-schedule')}"] if beat else []
    beat_args += [f"--queues={queues}"] if queues else []
    env = dict(
        os.environ,
        REDIS_URL=redis_url,
        SECRET_KEY="test-only-secret",
        DATABASE_URL=worker_database_url(),
        **extra_env,
    )
    with log_path.open("ab") as log:  # the child keeps its own copy of the descriptor
        return subprocess.Popen(
            [
                sys.executable, "-m", "celery", "-A", "planner", "worker", "--pool=solo",
                f"--loglevel={loglevel}", f"--hostname={node_name}@%h", "--without-gossip",
                f"--max-memory-per-child={django_settings.CELERY_WORKER_MAX_MEMORY_PER_CHILD}",
                "--without-mingle",
                "--without-heartbeat",
                *beat_args,
            ],
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


@contextlib.contextmanager
def app_on_redis(redis_url: str) -> Iterator[Any]:
    """Point the test process's Celery app at Redis (to publish tasks), then restore it."""
    from planner.celery import app

    old = {key: app.conf[key] for key in ("broker_url", "result_backend", "task_ignore_result")}
    app.conf.update(broker_url=redis_url, result_backend=redis_url, task_ignore_result=False)
    _reset_pool(app)
    try:
        yield app
    finally:
        app.conf.update(old)
        _reset_pool(app)


def stop_worker(worker: subprocess.Popen[bytes]) -> None:
    if worker.poll() is None:
        worker.terminate()
        try:
            worker.wait(timeout=20)
        except subprocess.TimeoutExpired:
            worker.kill()
            worker.wait(timeout=5)


@pytest.fixture
def celery_worker_process(redis_url: str, tmp_path: Path) -> Iterator[subprocess.Popen[bytes]]:
    """A real `celery worker` on Redis, sharing the test database file; the app points at it."""
    log = tmp_path / "worker.log"
    worker = start_worker(redis_url, log)
    with app_on_redis(redis_url) as app:
        try:
            wait_ready(app, worker, log)
            yield worker
        finally:
            stop_worker(worker)


def _reset_pool(app: Any) -> None:
    """Drop pooled broker connections so the next call uses the current broker_url."""
    app._pool = None
    app.amqp._producer_pool = None
    app._backend_cache = None
    app._local.__dict__.pop("backend", None)


def wait_ready(app: Any, worker: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if worker.poll() is not None:
            output = log.read_text()
            pytest.fail(f"celery worker exited early:\n{output}")
        if app.control.ping(timeout=0.5):
            return
    pytest.fail("celery worker did not answer a ping within 30 s")


@pytest.fixture(autouse=True)
def _empty_cache() -> None:
    """Rolled-back tests reuse row ids (and move the catalog stamp back), so cached page
    fragments and catalog reads must not outlive a test."""
    from django.core.cache import cache

    from pricing.catalog_cache import catalog_cache_clear

    cache.clear()
    catalog_cache_clear()
