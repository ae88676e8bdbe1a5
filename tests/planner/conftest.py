"""Fixtures for the planner's Django-side tests: users and media in a temp dir.

`eager_celery` comes from tests/conftest.py.
"""

from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from tests.clients import signed_in

TRACES = Path(__file__).resolve().parents[1] / "fixtures" / "traces"
HELIOS = TRACES / "helios_earth_vcvlY_sequence_first5000.csv"
PHILLY = TRACES / "chronus_philly_MIX1_rows1-5000.csv"
HELIOS_FIELDS = {
    "fmt": "usage",
    "column_map": "timestamp=time,gpus_in_use=running_gpu_num",
    "default_gpu_type": "A100",
}
PHILLY_MAP = (
    "start=submit_time,duration=duration,gpu_count=num_gpu,interruptible=best_effort,team=user"
)
GENERIC_CSV = (
    "job_id,start,end,gpu_type,gpu_count,interruptible,team\n"
    "a,2024-01-01T00:00:00Z,2024-01-01T05:00:00Z,A100-80GB,8,false,ml\n"
    "b,2024-01-01T02:00:00Z,2024-01-02T02:00:00Z,A100-80GB,4,true,ml\n"
    "c,2024-01-02T00:00:00Z,2024-01-03T12:00:00Z,H100,8,false,vision\n"
)
BAD_CSV = (
    "job_id,start,end,gpu_type,gpu_count\n"
    "a,2024-01-01T00:00:00Z,2024-01-01T05:00:00Z,A100,8\n"
    "b,yesterday,2024-01-02T02:00:00Z,A100,4\n"
    "c,2024-01-02T00:00:00Z,2024-01-03T12:00:00Z,A100,lots\n"
)


@pytest.fixture(autouse=True)
def _media_root(settings: Any, tmp_path: Path) -> None:
    settings.MEDIA_ROOT = tmp_path / "media"


@pytest.fixture
def user(db: None) -> User:
    return User.objects.create_user("ada", password="pw-ada-123")


@pytest.fixture
def other_user(db: None) -> User:
    return User.objects.create_user("bob", password="pw-bob-123")


@pytest.fixture
def user_client(client: Client, user: User) -> Client:
    client.force_login(user)
    return client


@pytest.fixture
def other_client(other_user: User) -> Client:
    other = signed_in(other_user)
    return other


def csv_upload(text: str, name: str = "jobs.csv") -> SimpleUploadedFile:
    return SimpleUploadedFile(name, text.encode(), content_type="text/csv")


def file_upload(path: Path) -> SimpleUploadedFile:
    return SimpleUploadedFile(path.name, path.read_bytes(), content_type="text/csv")
