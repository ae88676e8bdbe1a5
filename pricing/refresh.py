"""Download current prices from each provider's public price service and import them through
the existing importers (same checks, same idempotent upsert).

- AWS: the Price List bulk API (`/offers/v1.0/aws/AmazonEC2/current/<region>/index.json`, one
  offer file per region; aws-price-list importer).
- Azure: the Retail Prices API (`/api/retail/prices`, Virtual Machines of one region, followed
  page by page through `NextPageLink`; azure-retail importer).
- GCP: the Cloud Billing Catalog (`/v1/services/6F81-5844-456A/skus`, Compute Engine, paged by
  `nextPageToken`; needs an API key in GCP_BILLING_API_KEY; gcp-billing-catalog importer).
Base URLs are settings (PRICE_REFRESH_*_URL) so a mirror, or a recorded-response server in
the tests, can stand in for the providers.
"""

from __future__ import annotations

import json
import tempfile
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

from django.conf import settings
from django.utils import timezone
from django.utils.text import slugify

from planner.core.providers import AWS, AZURE, GCP, REFRESHABLE
from pricing.catalog_sources import SnapshotSource
from pricing.importers.registry import parse_file
from pricing.services import ImportSummary, prices_import

# Providers with a public price service, its format, name and default regions (the GCP
# catalog lists every region in one feed): planner.core.providers.
PROVIDERS = tuple(REFRESHABLE)
GCP_COMPUTE_SERVICE = "6F81-5844-456A"
MAX_PAGES = 200  # a bound on pagination (Azure VM prices of one region: ~30 pages)
TIMEOUT_S = 120

Fetch = Callable[[str], bytes]


class RefreshError(ValueError):
    """A provider's price service could not be read (network, HTTP status, bad document)."""


@dataclass
class RefreshReport:
    provider: str
    region: str
    source: str
    summary: ImportSummary


def http_fetch(url: str) -> bytes:
    """GET a URL (https, or http for a local mirror) and return the body."""
    if urllib.parse.urlsplit(url).scheme not in ("http", "https"):
        raise RefreshError(f"{url}: only http(s) URLs are fetched")
    request = urllib.request.Request(url, headers={"User-Agent": "gpu-planner-refresh/1"})
    try:
        # The scheme is checked above (http or https only).
        with urllib.request.urlopen(request, timeout=TIMEOUT_S) as response:  # noqa: S310  # nosec B310
            body: bytes = response.read()
            return body
    except OSError as exc:
        raise RefreshError(f"{url}: {exc}") from None


def _json(fetch: Fetch, url: str) -> dict[str, Any]:
    try:
        document = json.loads(fetch(url))
    except json.JSONDecodeError as exc:
        raise RefreshError(f"{url}: not JSON ({exc})") from None
    if not isinstance(document, dict):
        raise RefreshError(f"{url}: expected a JSON object")
    return document


def _aws_price_files(fetch: Fetch, region: str) -> Iterator[bytes]:
    base = settings.PRICE_REFRESH_AWS_URL.rstrip("/")
    yield fetch(f"{base}/offers/v1.0/aws/AmazonEC2/current/{region}/index.json")


def _azure_price_files(fetch: Fetch, region: str) -> Iterator[bytes]:
    query = urllib.parse.urlencode({
        "$filter": f"serviceName eq 'Virtual Machines' and armRegionName eq '{region}'"})
    url: str | None = f"{settings.PRICE_REFRESH_AZURE_URL.rstrip('/')}/api/retail/prices?{query}"
    items: list[Any] = []
    for _ in range(MAX_PAGES):
        if not url:
            break
        page = _json(fetch, url)
        items.extend(page.get("Items") or [])
        url = page.get("NextPageLink")
    else:
        raise RefreshError(f"azure {region}: more than {MAX_PAGES} pages")
    yield json.dumps({"BillingCurrency": "USD", "Items": items}).encode()


def _gcp_price_files(fetch: Fetch, region: str) -> Iterator[bytes]:
    """Every Compute Engine SKU page in one document: a VM's price adds core, RAM and GPU
    SKUs that may sit on different pages."""
    key = settings.GCP_BILLING_API_KEY
    if not key:
        raise RefreshError("gcp: set GCP_BILLING_API_KEY (a Cloud Billing Catalog API key)")
    base = f"{settings.PRICE_REFRESH_GCP_URL.rstrip('/')}/v1/services/{GCP_COMPUTE_SERVICE}/skus"
    token, skus = "", []
    for _ in range(MAX_PAGES):
        query = {"key": key, "currencyCode": "USD", "pageSize": "5000"}
        if token:
            query["pageToken"] = token
        page = _json(fetch, f"{base}?{urllib.parse.urlencode(query)}")
        skus.extend(page.get("skus") or [])
        token = page.get("nextPageToken") or ""
        if not token:
            yield json.dumps({"skus": skus}).encode()
            return
    raise RefreshError(f"gcp: more than {MAX_PAGES} pages")


_PRICE_FILES = {AWS: _aws_price_files, AZURE: _azure_price_files, GCP: _gcp_price_files}


def _snapshot(provider: str, region: str, day: date) -> SnapshotSource:
    where = f" {region}" if region else ""
    return SnapshotSource(
        slug=slugify(f"refresh-{provider}-{region or 'all'}-{day}")[:96],
        file="", fmt=REFRESHABLE[provider].fmt, provider=provider, snapshot_date=day,
        name=f"{REFRESHABLE[provider].service}{where}, fetched {day}",
        url={AWS: settings.PRICE_REFRESH_AWS_URL, AZURE: settings.PRICE_REFRESH_AZURE_URL,
             GCP: settings.PRICE_REFRESH_GCP_URL}[provider],
        licence="Provider's public price list",
        notes="Downloaded by refresh_prices and imported with the format's importer.",
    )


def prices_refresh(*, provider: str, region: str = "", fetch: Fetch = http_fetch,
                   today: date | None = None) -> list[RefreshReport]:
    """Fetch, parse and import one provider's prices (every default region when `region`
    is blank). Raises RefreshError (network, pages) or PriceFileErrors (bad document); a
    failure leaves the database as it was for that region."""
    if provider not in PROVIDERS:
        raise RefreshError(f"provider: {provider!r} is not one of {', '.join(PROVIDERS)}")
    day = today or timezone.now().date()
    regions = (region,) if region else REFRESHABLE[provider].regions
    reports = []
    for where in regions:
        summary = ImportSummary()
        for price_file in _PRICE_FILES[provider](fetch, where):
            with tempfile.TemporaryDirectory() as folder:
                path = Path(folder) / f"{provider}.json"
                path.write_bytes(price_file)
                parsed = parse_file(REFRESHABLE[provider].fmt, path, as_of=day, provider=provider)
            part = prices_import(parsed=parsed, snapshot=_snapshot(provider, where, day))
            summary.created += part.created
            summary.updated += part.updated
            summary.unchanged += part.unchanged
            summary.add_skipped(part.skipped)
        reports.append(RefreshReport(provider, where, REFRESHABLE[provider].service, summary))
    return reports
