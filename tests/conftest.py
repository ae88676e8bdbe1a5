"""Shared fixtures. Speed-ups only: the settings module is the production one."""

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command

FIXTURES = Path(__file__).parent / "fixtures"


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
        call_command("load_catalog", verbosity=0)
    yield


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
