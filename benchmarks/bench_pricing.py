"""Latency of the catalog and pricing pages and of the cheapest-price query (full price table)."""

from django.test import Client
from pricing.selectors import cheapest_offers

from benchmarks.harness import time_calls
from pricing.models import Price


def _get(client: Client, url: str) -> None:
    response = client.get(url)
    if response.status_code != 200:
        raise SystemExit(f"{url} answered {response.status_code}")


def run() -> list[str]:
    client = Client()
    total = Price.objects.count()
    lines = [f"price table: {total} rows ({Price.objects.filter(is_current=True).count()} current)"]
    pages = [
        ("GET / (GPU catalog)", "/"),
        ("GET /prices/ (pricing explorer, first page)", "/prices/"),
        (
            "GET /prices/?gpu=h100-sxm5-80gb&purchase_option=spot",
            "/prices/?gpu=h100-sxm5-80gb&purchase_option=spot",
        ),
        ("GET /api/prices/cheapest?gpu=a100-sxm4-80gb", "/api/prices/cheapest?gpu=a100-sxm4-80gb"),
    ]
    for label, url in pages:
        lines.append(time_calls(label, lambda url=url: _get(client, url), runs=40).line())
    query = time_calls(
        "cheapest-price query over all current prices",
        lambda: list(cheapest_offers(purchase_option="on_demand")),
        runs=40,
    )
    lines.append(query.line())
    return lines
