"""A deleted history takes its files with it: the upload, the parsed jobs and the demand.

A signal, not a service, because a history is also deleted by cascade when its owner is
deleted (admin or shell), where no service of this feature runs."""

from typing import Any

from django.conf import settings
from django.db import models, transaction
from django.db.models.signals import post_delete
from django.dispatch import receiver

from planner.purchase_mix.models import History
from planner.purchase_mix.staging import staging_delete_owner


@receiver(post_delete, sender=History, dispatch_uid="history-files-cleanup")
def history_files_delete(sender: type[History], instance: History, **kwargs: Any) -> None:
    files = [getattr(instance, f.name) for f in History._meta.get_fields()
             if isinstance(f, models.FileField)]
    names = [(file.storage, file.name) for file in files if file and file.name]

    def delete() -> None:
        for storage, name in names:
            storage.delete(name)

    # Only once the deletion is committed: a rolled-back delete keeps its files.
    transaction.on_commit(delete)


@receiver(post_delete, sender=settings.AUTH_USER_MODEL, dispatch_uid="staged-uploads-cleanup")
def staged_uploads_delete(sender: Any, instance: Any, **kwargs: Any) -> None:
    """A deleted user's kept uploads go too (they would otherwise wait for the hourly sweep)."""
    owner_id = instance.pk
    transaction.on_commit(lambda: staging_delete_owner(owner_id=owner_id))
