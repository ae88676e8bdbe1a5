import pytest
from django.contrib.auth.models import User
from django.test import Client


@pytest.fixture
def user(loaded_catalog: None) -> User:
    return User.objects.create_user("sam", password="serving-pass-123")


@pytest.fixture
def client_sam(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client
