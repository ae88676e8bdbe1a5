from datetime import date

import pytest
from django.test import Client

from pricing.models import Accelerator, InstanceType, Price


def _get(client: Client, path: str, **params: object) -> dict:
    response = client.get(path, params)
    assert response.status_code == 200, response.content
    return response.json()


def _error_fields(response: object) -> list[str]:
    assert response.status_code == 422  # type: ignore[attr-defined]
    return [e["loc"][-1] for e in response.json()["detail"]]  # type: ignore[attr-defined]


# --- GPUs -------------------------------------------------------------------------------------


def test_gpu_list_is_paginated_with_unit_bearing_fields(client: Client, catalog: date) -> None:
    body = _get(client, "/api/gpus")
    assert body["count"] == Accelerator.objects.count()
    h100 = next(g for g in body["items"] if g["slug"] == "h100-sxm5-80gb")
    assert h100["memory_gb"] == 80
    assert h100["bf16_tflops_dense"] == 989.5
    assert h100["memory_bandwidth_gb_per_s"] == 3350
    assert h100["interconnect"] == "NVLink 4"
    assert h100["interconnect_bandwidth_gb_per_s"] == 900
    assert h100["tdp_watts"] == 700


@pytest.mark.parametrize(
    ("params", "check"),
    [
        ({"vendor": "AMD"}, lambda g: g["vendor"] == "AMD"),
        ({"min_memory_gb": 100}, lambda g: g["memory_gb"] >= 100),
        ({"precision": "fp8"}, lambda g: g["fp8_tflops_dense"] is not None),
        ({"precision": "int8"}, lambda g: g["int8_tops_dense"] is not None),
    ],
)
def test_gpu_list_filters(client: Client, catalog: date, params: dict, check: object) -> None:
    items = _get(client, "/api/gpus", **params)["items"]
    assert 0 < len(items) < Accelerator.objects.count()  # the filter leaves some out
    assert all(check(g) for g in items)  # type: ignore[operator]


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"precision": "fp4"}, "precision"),
        ({"min_memory_gb": "lots"}, "min_memory_gb"),
        ({"min_memory_gb": -1}, "min_memory_gb"),
        ({"vendor": "Cerebras"}, "vendor"),
        ({"page": 0}, "page"),
        ({"page": 181331749991081148416}, "page"),
    ],
)
def test_gpu_list_rejects_bad_filters_naming_the_field(
    client: Client, catalog: date, params: dict, field: str
) -> None:
    assert field in _error_fields(client.get("/api/gpus", params))


def test_gpu_detail_with_cheapest_offer_per_purchase_option(client: Client, catalog: date) -> None:
    body = _get(client, "/api/gpus/h100-sxm5-80gb")
    assert body["name"] == "H100 SXM5-80GB"
    offers = body["cheapest_offers"]
    options = [o["purchase_option"] for o in offers]
    assert "on_demand" in options
    assert len(options) == len(set(options))
    assert all(o["gpu"] == "h100-sxm5-80gb" and o["is_current"] for o in offers)


def test_gpu_detail_404(client: Client, catalog: date) -> None:
    assert client.get("/api/gpus/tpu-v5").status_code == 404


# --- instance types ---------------------------------------------------------------------------


def test_instance_types_filter_by_gpu_provider_and_min_gpus(client: Client, catalog: date) -> None:
    body = _get(client, "/api/instance-types", gpu="a100-sxm4-40gb", provider="aws", min_gpus=8)
    assert body["count"] >= 1
    p4d = next(i for i in body["items"] if i["name"] == "p4d.24xlarge")
    assert p4d["gpu_count"] == 8
    assert p4d["memory_gib"] == 1152
    assert p4d["network_gbit_per_s"] == 400
    assert p4d["intra_node_bandwidth_gb_per_s"] == 600
    assert p4d["intra_node_interconnect"] == "nvswitch"
    assert p4d["page_url"] == "/instances/aws/p4d.24xlarge/"


def test_instance_types_page_size(client: Client, catalog: date) -> None:
    body = _get(client, "/api/instance-types", page_size=10, page=2)
    assert len(body["items"]) == 10
    assert body["count"] == InstanceType.objects.count()
    first = _get(client, "/api/instance-types", page_size=10)["items"]
    assert first[0]["name"] != body["items"][0]["name"]


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"gpu": "tpu-v5"}, "gpu"),
        ({"provider": "oracle"}, "provider"),
        ({"min_gpus": 0}, "min_gpus"),
    ],
)
def test_instance_types_reject_bad_filters(
    client: Client, catalog: date, params: dict, field: str
) -> None:
    assert field in _error_fields(client.get("/api/instance-types", params))


# --- prices -----------------------------------------------------------------------------------


def test_prices_default_to_current_with_source_and_staleness(client: Client, catalog: date) -> None:
    body = _get(client, "/api/prices")
    assert body["count"] == Price.objects.filter(is_current=True).count()
    assert len(body["items"]) == 50
    price = body["items"][0]
    assert set(price) >= {
        "usd_per_hour", "usd_per_gpu_hour", "as_of", "source", "is_derived", "derivation_basis",
        "is_stale", "provider", "region", "instance_type", "gpu", "gpu_count", "purchase_option",
    }
    assert set(price["source"]) >= {"name", "url", "licence", "snapshot_date"}
    assert price["usd_per_gpu_hour"] == pytest.approx(price["usd_per_hour"] / price["gpu_count"])


def test_prices_include_history_on_request(client: Client, catalog: date) -> None:
    body = _get(client, "/api/prices", include_history="true", gpu="a100-sxm4-40gb")
    assert any(not p["is_current"] for p in body["items"])
    current = _get(client, "/api/prices", gpu="a100-sxm4-40gb")
    assert current["count"] < body["count"]


def test_prices_filters(client: Client, catalog: date) -> None:
    params = {"gpu": "h100-sxm5-80gb", "provider": "aws", "region": "us-east-1",
              "purchase_option": "on_demand"}
    items = _get(client, "/api/prices", **params)["items"]
    assert items
    for p in items:
        found = (p["gpu"], p["provider"], p["region"], p["purchase_option"])
        assert found == tuple(params.values())


def test_prices_flag_the_stale_skypilot_snapshot(client: Client, catalog: date) -> None:
    items = _get(client, "/api/prices", provider="aws", purchase_option="spot")["items"]
    assert items
    for p in items:
        assert p["source"]["slug"] == "skypilot-aws-v7" and p["is_stale"] is True
    fresh = _get(client, "/api/prices", provider="gcp", purchase_option="committed_1y")["items"]
    assert fresh and not any(p["is_stale"] for p in fresh)


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"purchase_option": "forever"}, "purchase_option"),
        ({"region": "mars-north-1"}, "region"),
        ({"gpu": "tpu-v5"}, "gpu"),
        ({"include_history": "maybe"}, "include_history"),
    ],
)
def test_prices_reject_bad_filters(client: Client, catalog: date, params: dict, field: str) -> None:
    assert field in _error_fields(client.get("/api/prices", params))


def test_cheapest_offers_sorted_by_gpu_hour(client: Client, catalog: date) -> None:
    items = _get(client, "/api/prices/cheapest", gpu="h100-sxm5-80gb", min_gpus=8)["items"]
    assert items
    per_gpu = [p["usd_per_gpu_hour"] for p in items]
    assert per_gpu == sorted(per_gpu)
    assert all(p["gpu_count"] >= 8 and p["purchase_option"] == "on_demand" for p in items)
    assert all(p["is_current"] for p in items)


def test_cheapest_offers_for_spot(client: Client, catalog: date) -> None:
    items = _get(client, "/api/prices/cheapest", purchase_option="spot")["items"]
    assert items and {p["purchase_option"] for p in items} == {"spot"}


def test_cheapest_rejects_bad_min_gpus(client: Client, catalog: date) -> None:
    assert "min_gpus" in _error_fields(client.get("/api/prices/cheapest", {"min_gpus": "x"}))


# --- schema -----------------------------------------------------------------------------------


def test_openapi_schema_lists_the_endpoints(client: Client) -> None:
    schema = _get(client, "/api/openapi.json")
    for path in ["/api/gpus", "/api/gpus/{slug}", "/api/instance-types", "/api/prices",
                 "/api/prices/cheapest"]:
        assert path in schema["paths"], path
    params = {p["name"] for p in schema["paths"]["/api/prices"]["get"]["parameters"]}
    assert params >= {"gpu", "provider", "region", "purchase_option", "include_history", "page",
                      "page_size"}
    price = schema["components"]["schemas"]["PriceOut"]["properties"]
    assert {"usd_per_hour", "usd_per_gpu_hour", "as_of", "is_stale"} <= set(price)
