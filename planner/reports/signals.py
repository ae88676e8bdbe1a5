"""A deleted report takes its file with it, whether the report, its owner (cascade) or both
are deleted: a signal for the same reason as planner.purchase_mix.signals."""

from typing import Any

from django.db import transaction
from django.db.models.signals import post_delete
from django.dispatch import receiver

from planner.reports.models import Report


@receiver(post_delete, sender=Report, dispatch_uid="report-file-cleanup")
def report_file_delete(sender: type[Report], instance: Report, **kwargs: Any) -> None:
    if not instance.file or not instance.file.name:
        return
    storage, name = instance.file.storage, instance.file.name
    # Only once the deletion is committed: a rolled-back delete keeps its file.
    transaction.on_commit(lambda: storage.delete(name))
