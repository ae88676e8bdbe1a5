"""The serving plan service: current offers and carbon factors from the catalog, the shipped
serving calibration, the Django-free ranking (planner.serving.core.plan), and stored plans."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from typing import Any

from django.conf import settings
from django.db import transaction

from planner.core.purchase_options import NO_UPFRONT
from planner.core.serialize import json_safe
from planner.fair_shares import creation_check
from planner.purchase_mix.quota import UploadTooLargeError
from planner.serving.core.fields import FieldError, ServingInput, parse_serving_input
from planner.serving.core.parallelism import Layout
from planner.serving.core.plan import (
    ServingOffer,
    ServingOption,
    ServingPlan,
    ServingRequest,
    cards,
    option_curve,
    plan_serving,
)
from planner.serving.core.request_log import parse_request_log
from planner.serving.core.traffic import DailyTraffic
from planner.serving.models import ServingPlan as StoredServingPlan
from planner.serving.purchase import mix_document
from pricing.carbon.selectors import carbon_factors
from pricing.models import price_basis
from pricing.selectors import current_prices
from simulator.core.hardware import GpuSpec
from simulator.hardware_adapter import ASSUMED_NETWORK_GBITS_PER_S
from simulator.services import catalog_gpu_specs
from simulator.serving import serving_accuracy, serving_calibration

_FIELDS = ("instance_type__provider__slug", "instance_type__name", "region__code",
           "purchase_option", "instance_type__accelerator__model",
           "instance_type__accelerator__variant", "instance_type__gpu_count", "usd_per_hour",
           "as_of", "source__name", "is_derived", "is_estimated", "instance_type__network_gbps")
STORED_OPTIONS = 40
CURVES = 3


def calibration_note() -> str:
    """What the predictions rest on and how far they held out of source (shipped figures)."""
    accuracy = serving_accuracy()
    if not accuracy:
        return "No serving calibration is shipped: latencies use the model's priors."
    parts = [f"{metric.replace('_', ' ')} median error {row['median_ape']:.0f} %, "
             f"P10-P90 band held {row['band_coverage']:.0f} %" for metric, row in
             accuracy.items()]
    return ("Predictions come from the serving model fitted on published measurements "
            "(MLPerf Inference v4.1, TensorRT-LLM tables, vLLM on MI300X). Out of source: "
            + "; ".join(parts) + ". See docs/serving.md.")


def serving_offers(*, purchase_options: Sequence[str],
                   providers: Sequence[str] | None = None) -> list[ServingOffer]:
    """The cheapest current region of every instance type and purchase option (listed or
    derived, no-upfront commitments), with that region's grid intensity and PUE, and the
    instance's scale-out network (the assumed figure when the provider publishes none, as
    training plans assume it: simulator.hardware_adapter)."""
    prices = current_prices(purchase_options=purchase_options, providers=providers).filter(
        payment_option__in=["", NO_UPFRONT], offering_class__in=["", "standard"],
        usd_per_hour__gt=0, instance_type__gpu_count__gt=0).order_by("usd_per_hour")
    factors = carbon_factors(accounting="location")
    grid = {(p, r): (float(g), float(pue)) for p, r, g, pue in zip(
        factors["provider"], factors["region"], factors["g_co2e_per_kwh"], factors["pue"],
        strict=True)}
    offers: dict[tuple[str, str, str], ServingOffer] = {}
    for (provider, instance, region, option, model, variant, gpus, usd, as_of, source,
         is_derived, is_estimated, network) in prices.values_list(*_FIELDS):
        key = (provider, instance, option)
        if key in offers:
            continue
        g, pue = grid.get((provider, region), (math.nan, math.nan))
        basis = price_basis(is_derived=is_derived, is_estimated=is_estimated)
        offers[key] = ServingOffer(provider, instance, region, option, f"{model} {variant}",
                                   int(gpus), float(usd), as_of.isoformat(), str(source),
                                   basis, g, pue,
                                   float(network or ASSUMED_NETWORK_GBITS_PER_S))
    return list(offers.values())


def serving_plan_build(*, request: ServingRequest, purchase_options: Sequence[str],
                       providers: Sequence[str] | None = None,
                       gpus: dict[str, GpuSpec] | None = None) -> ServingPlan:
    """Rank every configuration of the catalog's offers for `request` (`gpus`: the catalog's
    specs when the caller has read them already)."""
    cal, bands = serving_calibration()
    offers = serving_offers(purchase_options=purchase_options, providers=providers)
    return plan_serving(request, offers, catalog_gpu_specs() if gpus is None else gpus, cal,
                        bands)


def option_json(option: ServingOption) -> dict[str, Any]:
    """One option as JSON: usd_per_million_tokens holds input, output and all tokens; NaN
    (no carbon factor, no network between instances) and infinities become null."""
    data = asdict(option)
    data["gpus_per_replica"] = option.gpus_per_replica
    data["usd_per_million_tokens"] = {
        "input": data.pop("usd_per_million_input_tokens"),
        "output": data.pop("usd_per_million_output_tokens"),
        "all": data["usd_per_million_tokens"]}
    data["ttft_p99_ms_p10"], data["ttft_p99_ms_p90"] = data.pop("ttft_p99_ms_band")
    data["tpot_p99_ms_p10"], data["tpot_p99_ms_p90"] = data.pop("tpot_p99_ms_band")
    return dict(json_safe(data))


def serving_document(checked: ServingInput, plan: ServingPlan, *, top: int = STORED_OPTIONS,
                     with_curves: bool = True,
                     gpus: dict[str, GpuSpec] | None = None) -> dict[str, Any]:
    """The plan document every interface shows: input, cards, options (cheapest first), the
    load curves of the cheapest distinct configurations (on `gpus`, the specs the plan used),
    and what it rests on."""
    picked = {k: option_json(v) if v else None for k, v in cards(plan).items()}
    curves = []
    if with_curves:
        cal, _ = serving_calibration()
        gpus = catalog_gpu_specs() if gpus is None else gpus
        seen: set[tuple[str, Layout]] = set()
        for option in plan.options:
            if (option.gpu, option.layout) in seen or len(seen) == CURVES:
                continue
            seen.add((option.gpu, option.layout))
            curves.append({"label": f"{option.gpu} {option.layout.label}",
                           "points": json_safe(option_curve(checked.request, option, gpus, cal))})
    return {"input": checked.data, "n_offers": plan.n_offers, "n_options": len(plan.options),
            "cards": picked, "options": [option_json(o) for o in plan.options[:top]],
            "curves": curves, "unfit": list(plan.unfit), "note": calibration_note(),
            "traffic": traffic_json(checked.traffic), "mix": mix_document(checked, plan)}


def traffic_json(traffic: DailyTraffic) -> dict[str, Any]:
    """The traffic the plan was sized for: 24 hourly rates, peak and trough, and what a request
    log showed (rows, span, days of history, prompt and output lengths: mean and P99)."""
    data = {k: v for k, v in asdict(traffic).items() if k != "history_rate_per_s"}
    data.update(peak_rate_per_s=traffic.peak_rate_per_s,
                trough_rate_per_s=traffic.trough_rate_per_s,
                history_days=traffic.history_days)
    return dict(json_safe(data))


def request_log_read(upload: Any, *, size_bytes: int) -> DailyTraffic:
    """An uploaded request log's traffic (planner.serving.core.request_log), read with the
    job-history upload's limit (settings.UPLOAD_MAX_BYTES) and streaming reader. FieldError
    naming `request_log` (and the line and column of a bad row); UploadTooLargeError above the
    limit. Nothing is stored: the plan keeps what was derived."""
    if size_bytes > settings.UPLOAD_MAX_BYTES:
        raise UploadTooLargeError(
            f"request_log: the file is {size_bytes / 1024**2:,.1f} MB; the upload limit is "
            f"{settings.UPLOAD_MAX_BYTES / 1024**2:,.0f} MB.")
    try:
        return parse_request_log(upload, max_bytes=settings.UPLOAD_MAX_BYTES)
    except ValueError as exc:
        raise FieldError("request_log", str(exc)) from None


def serving_plan_compute(*, raw: Mapping[str, Any],
                         request_log: DailyTraffic | None = None) -> dict[str, Any]:
    """Check and plan without storing (the what-if): the plan document."""
    checked = parse_serving_input(raw, request_log=request_log)
    gpus = catalog_gpu_specs()
    plan = serving_plan_build(request=checked.request,
                              purchase_options=checked.purchase_options, gpus=gpus)
    return serving_document(checked, plan, gpus=gpus)


def serving_plan_create(*, owner_id: int, raw: Mapping[str, Any], name: str = "",
                        log_file: Any = None) -> StoredServingPlan:
    """Check `raw` (FieldError naming the field), count it against the user's share
    (planner.fair_shares: 429 past SERVING_PLANS_PER_MINUTE, 403 at USER_MAX_SERVING_PLANS), plan
    it, and store it whole. `log_file`: an uploaded request log (a binary file with `size`),
    read by request_log_read; the plan keeps what it derived, not the file."""
    request_log = (request_log_read(log_file, size_bytes=int(log_file.size))
                   if log_file is not None else None)
    checked = parse_serving_input(raw, request_log=request_log)
    creation_check(owner_id=owner_id, kind="serving")
    gpus = catalog_gpu_specs()  # one read of the accelerator catalog for ranking and curves
    plan = serving_plan_build(request=checked.request,
                              purchase_options=checked.purchase_options, gpus=gpus)
    document = serving_document(checked, plan, gpus=gpus)
    label = name or (f"{checked.request.model.name} at {checked.request.rate_per_s:g} req/s")
    with transaction.atomic():
        return StoredServingPlan.objects.create(owner_id=owner_id, name=label[:200],
                                                inputs=checked.data, result=document)


def serving_plans(*, owner_id: int) -> list[StoredServingPlan]:
    """The user's serving plans, newest first."""
    return list(StoredServingPlan.objects.filter(owner_id=owner_id).order_by("-created_at",
                                                                            "-id"))


def cheapest(plan: StoredServingPlan) -> dict[str, Any] | None:
    """The plan's cheapest option meeting its targets (None when none does)."""
    best = (plan.result or {}).get("cards", {}).get("cheapest")
    return best if isinstance(best, dict) else None


def serving_plan_delete(*, owner_id: int, plan_id: int) -> StoredServingPlan | None:
    """Delete the owner's serving plan; None when it is not theirs."""
    plan = StoredServingPlan.objects.filter(owner_id=owner_id, pk=plan_id).first()
    if plan is not None:
        plan.delete()
    return plan
