"""The plan tests' signed-in owner: Ana, with the shipped catalog loaded."""

import pytest
from django.contrib.auth.models import User
from django.test import Client

from tests.clients import signed_in


@pytest.fixture
def user(loaded_catalog: None) -> User:
    return User.objects.create_user("ana", password="pw-ana-123")


@pytest.fixture
def client_ana(user: User) -> Client:
    return signed_in(user)
