"""What a user's files take on disk, and the storage quota (USER_STORAGE_QUOTA_BYTES) an
upload is checked against: uploads, the tables derived from them and report files."""

from __future__ import annotations

from collections.abc import Iterable

from django.conf import settings
from django.core.files.storage import default_storage
from django.db.models import Sum
from django.template.defaultfilters import filesizeformat

from planner.purchase_mix.models import History
from planner.reports.models import Report


class UploadTooLargeError(ValueError):
    """The upload exceeds settings.UPLOAD_MAX_BYTES."""


class StorageQuotaError(UploadTooLargeError):
    """The upload would take the owner's histories over settings.USER_STORAGE_QUOTA_BYTES."""


def files_bytes(names: Iterable[str]) -> int:
    total = 0
    for name in names:
        if name:
            try:
                total += default_storage.size(name)
            except OSError:  # deleted meanwhile: takes no room
                continue
    return total


def storage_used(owner_id: int) -> int:
    """Bytes the owner's files take on disk (what the storage quota counts): each job
    history's upload and the tables derived from it (parsed jobs, hourly demand), and the
    files of their reports."""
    rows = History.objects.filter(owner_id=owner_id).values_list("upload", "parsed", "demand")
    reports = Report.objects.filter(owner_id=owner_id).aggregate(total=Sum("size_bytes"))
    return files_bytes(name for row in rows for name in row) + int(reports["total"] or 0)


def quota_check(owner_id: int, size_bytes: int) -> None:
    used, quota = storage_used(owner_id), settings.USER_STORAGE_QUOTA_BYTES
    if used + size_bytes > quota:
        raise StorageQuotaError(
            f"This file ({filesizeformat(size_bytes)} with the tables derived from it) would "
            f"take your files to {filesizeformat(used + size_bytes)}, over your "
            f"{filesizeformat(quota)} of storage ({filesizeformat(used)} used: job histories, "
            "their derived tables and reports); nothing was stored. Delete a history or report "
            "you no longer need to make room.")
