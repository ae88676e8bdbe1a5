"""Latency of the catalog and pricing pages and of the cheapest-price query (full price table)."""

from django.test import Client
from django.utils import timezone

from benchmarks.harness import time_calls
from pricing.models import Price
from pricing.selectors import cheapest_by_accelerator, cheapest_offers

PAGES = [
    ("GET /gpus/ (GPU catalog)", "/gpus/"),
    ("GET /prices/ (pricing explorer, first page)", "/prices/"),
    ("GET /prices/?gpu=h100-sxm5-80gb&purchase_option=spot",
     "/prices/?gpu=h100-sxm5-80gb&purchase_option=spot"),
    ("GET /api/prices/cheapest?gpu=a100-sxm4-80gb", "/api/prices/cheapest?gpu=a100-sxm4-80gb"),
]


def _get(client: Client, url: str) -> None:
    response = client.get(url)
    if response.status_code != 200:
        raise SystemExit(f"{url} answered {response.status_code}")


def run() -> list[str]:
    client = Client()
    today = timezone.now().date()
    current = Price.objects.filter(is_current=True).count()
    lines = [f"price table: {Price.objects.count()} rows ({current} current)"]
    for label, url in PAGES:
        lines.append(time_calls(label, lambda url=url: _get(client, url), runs=40).line())
    queries = [
        ("cheapest on-demand $/GPU-h offers over the full price table",
         lambda: list(cheapest_offers(today=today)[:50])),
        ("cheapest current price of every accelerator (catalog query)",
         lambda: cheapest_by_accelerator(today=today)),
    ]
    for label, query in queries:
        lines.append(time_calls(label, query, runs=40).line())
    return lines
