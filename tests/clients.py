"""Test clients: one way to sign a user in."""

from django.contrib.auth.models import User
from django.test import Client


def signed_in(user: User) -> Client:
    """A Django test client with `user` logged in (no password check)."""
    client = Client()
    client.force_login(user)
    return client
