"""A chosen upload kept for its owner after a refused submit (a browser cannot refill a file
input), so the next submit can reuse it.

Files live under staging/<owner id>/<random token> in the default storage, are read only by
their owner (the token is kept in the owner's session and the path holds the owner's id),
are deleted once used or replaced, and are swept after STAGING_TTL_SECONDS.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass
from datetime import timedelta
from typing import IO, Any

from django.core.files.base import File
from django.core.files.storage import default_storage
from django.utils import timezone

STAGING_DIR = "staging"
STAGING_TTL_SECONDS = 3600
_TOKEN = re.compile(r"^[0-9a-f]{32}$")


@dataclass(frozen=True)
class StagedUpload:
    """What the session keeps: the token of the stored copy, the file's name and size."""

    token: str
    name: str
    size_bytes: int

    def to_session(self) -> dict[str, Any]:
        return {"token": self.token, "name": self.name, "size_bytes": self.size_bytes}

    @classmethod
    def from_session(cls, value: Any) -> StagedUpload | None:
        if not isinstance(value, dict) or not _TOKEN.match(str(value.get("token", ""))):
            return None
        return cls(str(value["token"]), str(value.get("name", ""))[:255],
                   int(value.get("size_bytes", 0)))


def _path(owner_id: int, token: str) -> str:
    if not _TOKEN.match(token):
        raise ValueError("not a staging token")
    return f"{STAGING_DIR}/{int(owner_id)}/{token}"


def staging_save(*, owner_id: int, upload: IO[bytes], name: str, size_bytes: int) -> StagedUpload:
    """Keep a copy of the upload for its owner (and sweep expired copies of everyone's)."""
    staging_sweep()
    token = uuid.uuid4().hex
    upload.seek(0)
    default_storage.save(_path(owner_id, token), File(upload))
    upload.seek(0)
    return StagedUpload(token, name[:255], size_bytes)


def staging_open(*, owner_id: int, staged: StagedUpload) -> IO[bytes] | None:
    """The owner's staged file opened for reading, or None when it expired or is gone."""
    path = _path(owner_id, staged.token)
    if not default_storage.exists(path):
        return None
    handle: IO[bytes] = default_storage.open(path, "rb")
    return handle


def staging_delete(*, owner_id: int, staged: StagedUpload | None) -> None:
    if staged is not None:
        default_storage.delete(_path(owner_id, staged.token))


def staging_delete_owner(*, owner_id: int | None) -> None:
    """Delete every file kept for this owner (their account is gone)."""
    folder = f"{STAGING_DIR}/{owner_id}"
    if owner_id is None or not default_storage.exists(folder):
        return
    for name in default_storage.listdir(folder)[1]:
        default_storage.delete(f"{folder}/{name}")


def staging_sweep(*, max_age_seconds: int = STAGING_TTL_SECONDS) -> int:
    """Delete staged files older than `max_age_seconds`; returns how many were deleted."""
    if not default_storage.exists(STAGING_DIR):
        return 0
    cutoff = timezone.now() - timedelta(seconds=max_age_seconds)
    deleted = 0
    for owner in default_storage.listdir(STAGING_DIR)[0]:
        folder = f"{STAGING_DIR}/{owner}"
        for name in default_storage.listdir(folder)[1]:
            path = f"{folder}/{name}"
            if default_storage.get_modified_time(path) < cutoff:
                default_storage.delete(path)
                deleted += 1
    return deleted
