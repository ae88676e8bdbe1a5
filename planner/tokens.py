"""API tokens: per-user, revocable bearer credentials for scripts (beside the session and basic
auth). Only a SHA-256 of each token is stored; the token itself is shown once, at creation.

A token is 256 random bits, so a fast hash is enough: guessing one is out of reach, and a
leaked database row cannot be turned back into a usable token.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import models
from django.utils import timezone

# A public marker that tells tokens apart from passwords (not a secret).
TOKEN_PREFIX = "gpt_"  # nosec B105
NAME_MAX_LENGTH = 100
# last_used_at is written at most this often per token (every request would be a write).
LAST_USED_RESOLUTION = timedelta(minutes=1)


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


class ApiToken(models.Model):
    """One API token of one user: its name, hash, when it was made, last used and revoked."""

    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens"
    )
    name = models.CharField(max_length=NAME_MAX_LENGTH)
    digest = models.CharField(max_length=64, unique=True, help_text="SHA-256 of the token")
    prefix = models.CharField(max_length=12, help_text="The token's first characters, to tell "
                                                       "tokens apart (not a secret)")
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…) of {self.owner_id}"

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None


@dataclass(frozen=True)
class CreatedToken:
    row: ApiToken
    token: str  # shown once; never stored


def token_create(*, owner_id: int, name: str) -> CreatedToken:
    """Make a token for a user; ValueError names the field when the name is unusable."""
    name = name.strip()
    if not name:
        raise ValueError("name: give the token a name (what will use it).")
    if len(name) > NAME_MAX_LENGTH:
        raise ValueError(f"name: at most {NAME_MAX_LENGTH} characters ({len(name)} given).")
    if "\x00" in name:  # PostgreSQL stores no NUL in text (a 500, not a message)
        raise ValueError("name: must not contain a NUL character.")
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    row = ApiToken.objects.create(owner_id=owner_id, name=name, digest=_digest(token),
                                  prefix=token[:len(TOKEN_PREFIX) + 4])
    return CreatedToken(row=row, token=token)


def token_revoke(*, owner_id: int, token_id: int) -> bool:
    """Revoke one of the user's tokens; False when it is not theirs or already revoked."""
    return bool(ApiToken.objects.filter(pk=token_id, owner_id=owner_id, revoked_at=None)
                .update(revoked_at=timezone.now()))


def token_user(token: str) -> Any | None:
    """The active user owning an active token, or None (unknown, revoked, inactive user)."""
    if not token.startswith(TOKEN_PREFIX) or len(token) > 200:
        return None
    row = (ApiToken.objects.select_related("owner")
           .filter(digest=_digest(token), revoked_at=None).first())
    if row is None or not row.owner.is_active:
        return None
    now = timezone.now()
    if row.last_used_at is None or now - row.last_used_at >= LAST_USED_RESOLUTION:
        ApiToken.objects.filter(pk=row.pk).update(last_used_at=now)
    return row.owner


def token_list(*, owner_id: int) -> list[ApiToken]:
    return list(ApiToken.objects.filter(owner_id=owner_id))
