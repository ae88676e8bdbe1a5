"""The simulation form's hardware: GPU first, then only that GPU's instance types, each with a
readable label and its price's source and date; the old form posts (an instance type without a
GPU) still work."""

import re
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.utils import timezone

from pricing.instance_choices import gpu_choices, instance_choices
from pricing.models import InstanceType, Price
from simulator.models import SimulationRun
from tests.clients import signed_in

pytestmark = pytest.mark.django_db


@pytest.fixture
def user(loaded_catalog: None) -> User:
    return User.objects.create_user("ana", password="pw-ana-123")


def _options(html: str) -> list[tuple[str, str]]:
    select = re.search(r'<select name="instance_type".*?</select>', html, re.S)
    assert select is not None
    return re.findall(r'<option value="([^"]*)"[^>]*>([^<]*)</option>', select[0])


def _groups(html: str) -> list[str]:
    select = re.search(r'<select name="instance_type".*?</select>', html, re.S)
    assert select is not None
    return re.findall(r'<optgroup label="([^"]*)">', select[0])


def test_every_instance_type_has_a_readable_label_with_its_cheapest_on_demand_price(
    loaded_catalog: None
) -> None:
    choices = {(c.provider, c.name): c for c in instance_choices(today=timezone.localdate())}
    assert len(choices) == InstanceType.objects.count()
    p4de = choices[("aws", "p4de.24xlarge")]
    cheapest = Price.objects.filter(
        instance_type__name="p4de.24xlarge", is_current=True, purchase_option="on_demand"
    ).order_by("usd_per_hour").first()
    assert cheapest is not None
    assert p4de.usd_per_hour == pytest.approx(float(cheapest.usd_per_hour))
    assert p4de.label == f"AWS p4de.24xlarge · 8 × A100 SXM4-80GB · ${p4de.usd_per_hour:.2f}/h"
    assert "aws:" not in p4de.label
    assert f"in {cheapest.region.code}: {cheapest.basis}, {cheapest.source.name}, as of " \
           f"{cheapest.as_of.isoformat()}" in p4de.note
    h100 = next(g for g in gpu_choices(list(choices.values())) if g.slug == "h100-sxm5-80gb")
    n_h100 = InstanceType.objects.filter(accelerator__slug="h100-sxm5-80gb").count()
    assert h100.label.startswith(f"H100 SXM5-80GB · {n_h100} instance types, from $")
    # "from" is the cheapest cloud instance, as the GPU catalog's; marketplace machines apart
    a100 = next(g for g in gpu_choices(list(choices.values())) if g.slug == "a100-sxm4-80gb")
    cloud = min(c.usd_per_hour / c.gpu_count for c in choices.values()
                if c.gpu == "a100-sxm4-80gb" and c.usd_per_hour and c.provider != "vast")
    market = min(c.usd_per_hour / c.gpu_count for c in choices.values()
                 if c.gpu == "a100-sxm4-80gb" and c.usd_per_hour and c.provider == "vast")
    assert market < cloud
    from planner.core.formatting import usd_per

    assert a100.label.endswith(f", from {usd_per(cloud, 'GPU-hour')} (marketplace machines "
                               f"from {usd_per(market, 'GPU-hour')})")


def test_the_form_asks_for_a_gpu_first_and_lists_no_instance_codes(user: User) -> None:
    html = signed_in(user).get("/simulations/new").content.decode()
    assert _options(html) == [("", "choose a GPU first")]
    assert 'name="show_instances"' in html  # the way without JavaScript
    gpus = re.search(r'<select name="gpu".*?</select>', html, re.S)
    assert gpus is not None and "A100 SXM4-80GB · " in gpus[0]
    assert "aws:p4de" not in html


def test_choosing_a_gpu_without_javascript_scopes_the_list_and_keeps_what_was_typed(
    user: User
) -> None:
    client = signed_in(user)
    response = client.post("/simulations/new", {
        "kind": "single", "preset": "llama2-7b", "tokens": "2e12", "nodes": "4",
        "gpu": "a100-sxm4-80gb", "show_instances": "1"})
    assert response.status_code == 200
    html = response.content.decode()
    options = _options(html)[1:]
    expected = InstanceType.objects.filter(accelerator__slug="a100-sxm4-80gb")
    assert {int(v) for v, _ in options} == set(expected.values_list("id", flat=True))
    assert all("× A100 SXM4-80GB · $" in text for _, text in options)
    assert _groups(html) == sorted(_groups(html)) and "AWS" in _groups(html)
    assert 'value="2e12"' in html and 'name="nodes" value="4"' in html
    assert 'class="field-error"' not in html  # nothing checked yet
    assert not SimulationRun.objects.exists()


def test_a_gpu_in_the_address_scopes_the_list(user: User) -> None:
    html = signed_in(user).get("/simulations/new?gpu=h100-sxm5-80gb").content.decode()
    assert all("× H100 SXM5-80GB" in text for _, text in _options(html)[1:])
    assert len(_options(html)) > 2


def test_an_instance_type_of_another_gpu_is_refused_naming_both(user: User) -> None:
    p4de = InstanceType.objects.get(provider__slug="aws", name="p4de.24xlarge")
    response = signed_in(user).post("/simulations/new", {
        "kind": "single", "preset": "llama2-7b", "nodes": "1", "gpu": "h100-sxm5-80gb",
        "instance_type": p4de.id})
    assert response.status_code == 400
    assert "p4de.24xlarge has A100 SXM4-80GB GPUs, not H100 SXM5-80GB" in \
        response.content.decode()
    assert not SimulationRun.objects.exists()


def test_the_chosen_instance_is_said_with_its_price_source_and_date(
    user: User, eager_celery: None, django_capture_on_commit_callbacks: Any
) -> None:
    p4de = InstanceType.objects.get(provider__slug="aws", name="p4de.24xlarge")
    client = signed_in(user)
    response = client.post("/simulations/new", {
        "kind": "single", "preset": "llama2-7b", "nodes": "1", "gpu": "a100-sxm4-80gb",
        "instance_type": p4de.id, "tp": "0"})  # a bad layout value: the form comes back
    assert response.status_code == 400
    html = response.content.decode()
    assert re.search(rf'<option value="{p4de.id}"[^>]*selected', html)
    assert re.search(r'id="instance-note"[^>]*>AWS p4de.24xlarge: 8 × A100 SXM4-80GB, .*'
                     r"Cheapest on-demand price \$[\d.,]+/h .* as of \d{4}-\d\d-\d\d", html)
    with django_capture_on_commit_callbacks(execute=True):
        done = client.post("/simulations/new", {
            "kind": "single", "preset": "llama2-7b", "nodes": "1", "gpu": "a100-sxm4-80gb",
            "instance_type": p4de.id})
    assert done.status_code == 302
    run = SimulationRun.objects.get()
    assert run.request["instance_type_id"] == p4de.id and "gpu" not in run.request


def test_the_form_shows_no_template_comment_and_writes_bounds_as_people_do(user: User) -> None:
    html = signed_in(user).get("/simulations/new").content.decode()
    # a multi-line {# #} is not a Django comment: it printed on every form page
    assert "{#" not in html and "The form's problems at the top" not in html
    assert "Allowed: 1 to 1e7 samples." in html and "1e07" not in html
    assert "Allowed: 1 to 1,048,576 tokens." in html


def test_precision_menus_name_precisions_as_the_catalog_does(user: User) -> None:
    for url in ("/simulations/new", "/plans/new"):
        html = signed_in(user).get(url).content.decode()
        select = re.search(r'<select name="precision".*?</select>', html, re.S)
        assert select is not None, url
        options = re.findall(r'<option value="([^"]*)"[^>]*>([^<]*)</option>', select[0])
        assert ("bf16", "BF16") in options and ("fp8", "FP8") in options, url
