"""Files under VAR_DIR written whole or not at all, and a full disk answered with 507.

`AtomicFileSystemStorage` (the default storage: uploads, derived tables, reports, kept
uploads) writes each file to a hidden temporary file beside it and links it into place only
once it is complete: a write that fails (ENOSPC, a killed worker) leaves no partial or 0-byte
file under the final name, and the temporary file is removed. Before writing it refuses with
`DiskFullError` when the disk would keep less than DISK_MIN_FREE_BYTES free, so the last
gigabyte stays for the database and the logs. `DiskFullMiddleware` turns either (and any
ENOSPC or EDQUOT) into 507 Insufficient Storage: JSON under /api/, a page elsewhere.
"""

from __future__ import annotations

import errno
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.files.storage import FileSystemStorage
from django.db import DatabaseError
from django.http import HttpRequest, HttpResponse
from django.template.defaultfilters import filesizeformat

from planner.refusals import ExceptionMiddleware, refusal_response

FULL_ERRNOS = (errno.ENOSPC, errno.EDQUOT)
FULL_MESSAGE = ("The server's storage is full: nothing was saved. Try again later; the "
                "operator has been told by /healthz.")


class DiskFullError(OSError):
    """Writing would leave less than DISK_MIN_FREE_BYTES free (or the disk is full)."""

    def __init__(self, message: str) -> None:
        super().__init__(errno.ENOSPC, message)


def disk_free_bytes(path: Path | str | None = None) -> int:
    """Free bytes on the filesystem holding `path` (default VAR_DIR; a folder not made yet
    counts as its nearest existing parent), for unprivileged users."""
    where = Path(path or settings.VAR_DIR)
    while not where.exists() and where != where.parent:
        where = where.parent
    return int(shutil.disk_usage(where).free)


def disk_room_check(path: Path | str, size_bytes: int = 0) -> None:
    """DiskFullError when writing `size_bytes` under `path` would leave less than
    DISK_MIN_FREE_BYTES free."""
    free, keep = disk_free_bytes(path), int(settings.DISK_MIN_FREE_BYTES)
    if free - size_bytes < keep:
        raise DiskFullError(
            f"{FULL_MESSAGE} ({filesizeformat(free)} free; {filesizeformat(keep)} is kept "
            "free)")


# How SQLite ("database or disk is full") and PostgreSQL ("could not extend file ...: No
# space left on device") say it: a database error, not an OSError.
DATABASE_FULL_WORDS = ("database or disk is full", "no space left on device")


def is_disk_full(exc: BaseException) -> bool:
    if isinstance(exc, OSError):
        return exc.errno in FULL_ERRNOS
    return isinstance(exc, DatabaseError) and any(
        words in str(exc).lower() for words in DATABASE_FULL_WORDS)


class AtomicFileSystemStorage(FileSystemStorage):
    def _save(self, name: str, content: Any) -> str:
        full_path = self.path(name)
        directory = os.path.dirname(full_path)
        os.makedirs(directory, exist_ok=True)
        disk_room_check(directory, int(getattr(content, "size", 0) or 0))
        fd, partial = tempfile.mkstemp(dir=directory, prefix=".partial-")
        try:
            with os.fdopen(fd, "wb") as out:
                if hasattr(content, "seek"):
                    content.seek(0)
                for chunk in content.chunks():
                    out.write(chunk if isinstance(chunk, bytes) else chunk.encode())
            while True:
                try:
                    os.link(partial, full_path)  # never over an existing file
                    break
                except FileExistsError:
                    name = self.get_available_name(name)
                    full_path = self.path(name)
        finally:
            Path(partial).unlink(missing_ok=True)
        if self.file_permissions_mode is not None:
            os.chmod(full_path, self.file_permissions_mode)
        return os.path.relpath(full_path, self.location).replace("\\", "/")


class DiskFullMiddleware(ExceptionMiddleware):
    """507 for a write that found the disk full, from any view or API operation."""

    def process_exception(self, request: HttpRequest, exception: Exception
                          ) -> HttpResponse | None:
        if not is_disk_full(exception):
            return None
        message = str(exception.strerror) if isinstance(exception, DiskFullError) else FULL_MESSAGE
        return refusal_response(request, message, 507)
