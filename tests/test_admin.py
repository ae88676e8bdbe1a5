"""Every model of the simulator and planner apps has a working admin changelist."""

import pytest
from django.apps import apps
from django.test import Client
from django.urls import reverse

pytestmark = pytest.mark.django_db

MODELS = [m for label in ("simulator", "planner") for m in apps.get_app_config(label).get_models()]


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.__name__)
def test_admin_changelist_works(admin_client: Client, model: type) -> None:
    meta = model._meta
    url = reverse(f"admin:{meta.app_label}_{meta.model_name}_changelist")
    assert admin_client.get(url).status_code == 200
