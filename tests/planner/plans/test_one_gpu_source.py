"""GPU specs have one source, the catalog's Accelerator rows: an accelerator edited there (in
the admin) changes plans (sweeps) and single simulations alike."""

from datetime import date

import pytest
from django.contrib.auth.models import User
from django.db.models import F

from planner.plans import services as plan_services
from planner.plans.scenario import scenario_from_input
from planner.runs import Attempt
from pricing.models import Accelerator, InstanceType
from simulator import services as simulator_services

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("loaded_catalog")]
INSTANCE = "p4de.24xlarge"


def _plan_tokens_per_second(instance: InstanceType) -> float:
    raw = {"workload": "llama2-7b", "tokens": 1e11, "providers": ["aws"],
           "gpus": [instance.accelerator.slug], "purchase_options": ["on_demand"],
           "max_nodes": 1, "layout": {"precision": "bf16"}}
    document = plan_services.plan_compute(
        scenario=scenario_from_input(raw, today=date(2026, 12, 1)), owner_id=None)
    return max(o["tokens_per_second"] for o in document["options"]
               if o["instance_type"] == INSTANCE and o["nodes"] == 1)


def _simulated_tokens_per_second(instance: InstanceType, owner_id: int) -> float:
    request = {"workload": {"preset": "llama2-7b"}, "goal": {"tokens": 1e11},
               "instance_type_id": instance.id, "nodes": 1, "layout": {"precision": "bf16"}}
    run = simulator_services.simulation_create(owner_id=owner_id, kind="single",
                                               request=request)
    simulator_services.simulation_execute(run_id=run.id, attempt=Attempt("test"))
    run.refresh_from_db()
    assert run.status == "done", run.error
    return float(run.result["simulation"]["tokens_per_second"])


def test_an_accelerator_edited_in_the_catalog_changes_plans_and_simulations_alike() -> None:
    owner = User.objects.create_user("ana", password="pw-ana-123")
    instance = InstanceType.objects.select_related("accelerator").get(
        provider__slug="aws", name=INSTANCE)
    planned, simulated = (_plan_tokens_per_second(instance),
                          _simulated_tokens_per_second(instance, owner.id))
    # The admin halves the GPU's published 16-bit peaks (say, a typo fixed in its datasheet).
    Accelerator.objects.filter(pk=instance.accelerator_id).update(
        bf16_tflops_dense=F("bf16_tflops_dense") / 2, fp16_tflops_dense=F("fp16_tflops_dense") / 2)
    planned_after = _plan_tokens_per_second(instance)
    simulated_after = _simulated_tokens_per_second(instance, owner.id)
    assert planned_after < 0.8 * planned
    assert simulated_after < 0.8 * simulated
    # alike: both slowed by about the same factor (one spec, one calibration)
    assert planned_after / planned == pytest.approx(simulated_after / simulated, rel=0.15)
