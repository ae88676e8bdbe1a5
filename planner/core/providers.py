"""THE provider table: every cloud the planner prices, with what a plan assumes of it, once.

Django-free. The catalog's Provider rows (load_catalog), labels (planner.core.formatting),
the plan's storage, egress and spot defaults (plans.core.assumptions), offer limits
(pricing.selectors, the plan service), the importers' provider codes and the price refresh
derive from PROVIDERS; `tests/test_vocabulary.py` fails when a provider code is written out
anywhere else. A provider missing here still plans, with the fallbacks below.

Units are in the names: USD per GB-month, USD per GB. Storage and egress are list prices,
first tier, US regions, as of 2026-01 (Lambda's re-checked on docs.lambda.ai billing, the
others as given in the what-if planner issue; ≈ = approximate).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from planner.core.cloud import SPOT_BAND_MONTHLY_FRACTION, band_hazard

# The largest cluster a plan or a simulation considers (nodes): the hyperscalers' assumed
# ceiling before a capacity reservation is needed.
MAX_CLUSTER_NODES = 512
# What a provider's priced option is: a VM type clusters are assembled from (EFA/InfiniBand
# families), or one host listed by its owner on a marketplace (never a cluster).
OFFER_KINDS = ("cloud_instance", "marketplace_machine")
# The catalog's grouping of providers (pricing.models.Provider.Kind).
PROVIDER_KINDS = ("hyperscaler", "gpu_cloud", "marketplace")
# Spot (or interruptible) nodes of one multi-GPU type beyond which a single allocation is
# unlikely to be granted at once; 1-2 GPU instances are plentiful, so four times as many.
SMALL_INSTANCE_SPOT_FACTOR = 4


@dataclass(frozen=True)
class PriceRefresh:
    """A provider's public price service (refresh_prices): the importer format it is read
    with, its name as a price source, and the regions fetched by default ("" = all in one)."""

    fmt: str
    service: str
    regions: tuple[str, ...]


@dataclass(frozen=True)
class ProviderSpec:
    """One provider.

    `label` is its short name in tables ("AWS"), `name` the catalog's ("Amazon Web
    Services"). `max_nodes`: most nodes one job can get (planning assumptions, not published
    quotas: the hyperscalers grant GPU quota per request). `spot_node_limit`: spot nodes of a
    4-8 GPU type one allocation can get (editable per plan). `spot_band`: the AWS Spot Advisor
    "frequency of interruption" band assumed (`spot_band_by_gpu` per GPU model prefix).
    """

    code: str
    label: str
    name: str
    kind: str
    offer_kind: str
    max_nodes: int
    spot_node_limit: int
    spot_band: str
    storage_usd_per_gb_month: float
    egress_usd_per_gb: float
    spot_band_by_gpu: dict[str, str] = field(default_factory=dict)
    refresh: PriceRefresh | None = None
    # The provider's first US region: equal prices elsewhere rank after it (PLAN_PREFERRED_
    # REGIONS overrides the list).
    home_region: str = ""
    # What the storage and egress rates are, as pages show them beside the rates: the
    # products priced, "listed" (the provider's published first tier) or "estimated" (≈).
    rates_source: str = ""
    rates_basis: str = "listed"

    @property
    def rates_note(self) -> str:
        """"listed: S3 Standard us-east-1 ..., as of 2026-01" (the storage and egress rates)."""
        return f"{self.rates_basis}: {self.rates_source}, as of {RATES_AS_OF}"

    def __post_init__(self) -> None:
        if self.kind not in PROVIDER_KINDS or self.offer_kind not in OFFER_KINDS:
            raise ValueError(f"{self.code}: unknown kind {self.kind!r} or {self.offer_kind!r}")
        bands = [self.spot_band, *self.spot_band_by_gpu.values()]
        if not all(band in SPOT_BAND_MONTHLY_FRACTION for band in bands):
            raise ValueError(f"{self.code}: unknown spot band in {bands}")
        if not 1 <= self.max_nodes <= MAX_CLUSTER_NODES:
            raise ValueError(f"{self.code}: max_nodes must be 1 to {MAX_CLUSTER_NODES}")


# The month the storage and egress rates below were read (module docstring).
RATES_AS_OF = "2026-01"
AWS, GCP, AZURE, LAMBDA, VAST = "aws", "gcp", "azure", "lambda", "vast"
_TOP = ">20%"
PROVIDERS: tuple[ProviderSpec, ...] = (
    # S3 Standard us-east-1 first 50 TB; EC2/S3 transfer out, first 10 TB/month. Spot Advisor
    # puts most GPU types in the upper bands, the newest often above 20 %.
    ProviderSpec(AWS, "AWS", "Amazon Web Services", "hyperscaler", "cloud_instance",
                 MAX_CLUSTER_NODES, 4, "15-20%", 0.023, 0.09,
                 spot_band_by_gpu={"H100": _TOP, "H200": _TOP, "B200": _TOP},
                 refresh=PriceRefresh("aws-price-list",
                                      "AWS Price List bulk API (AmazonEC2 offer file)",
                                      ("us-east-1",)), home_region="us-east-1",
                 rates_source="S3 Standard us-east-1, first 50 TB; data transfer out, first "
                              "10 TB a month"),
    # Cloud Storage Standard us-central1; premium tier egress, first 1 TB. GCP publishes no
    # bands and GPU Spot VMs are reclaimed often: the top band.
    ProviderSpec(GCP, "Google Cloud", "Google Cloud", "hyperscaler", "cloud_instance",
                 MAX_CLUSTER_NODES, 4, _TOP, 0.020, 0.12,
                 refresh=PriceRefresh("gcp-billing-catalog",
                                      "Google Cloud Billing Catalog API (Compute Engine SKUs)",
                                      ("",)), home_region="us-central1",
                 rates_source="Cloud Storage Standard us-central1; premium-tier egress, first "
                              "1 TB"),
    # Blob Hot LRS East US first 50 TB (≈); internet egress, first 10 TB. Azure shows the
    # same bands as eviction rates.
    ProviderSpec(AZURE, "Azure", "Microsoft Azure", "hyperscaler", "cloud_instance",
                 MAX_CLUSTER_NODES, 4, "15-20%", 0.0184, 0.087,
                 refresh=PriceRefresh("azure-retail", "Azure Retail Prices API",
                                      ("westeurope", "eastus")), home_region="eastus",
                 rates_source="Blob Storage Hot LRS East US, first 50 TB (≈); internet "
                              "egress, first 10 TB", rates_basis="estimated"),
    # Persistent filesystem per GiB-month, no ingress/egress charges. On-demand instances are
    # sold one by one (clusters are a separate, reserved product); no spot (top band if seen).
    ProviderSpec(LAMBDA, "Lambda", "Lambda", "gpu_cloud", "cloud_instance", 8, 0, _TOP,
                 0.20, 0.0, home_region="us-east-1",
                 rates_source="persistent filesystem per GiB-month; no egress charge"),
    # Marketplace hosts set their own disk and bandwidth rates: a typical listing (≈), egress
    # 0 by default. Interruptible instances are outbid: the top band.
    ProviderSpec(VAST, "Vast.ai", "Vast.ai", "marketplace", "marketplace_machine", 1, 1, _TOP,
                 0.10, 0.0, home_region="us",
                 rates_source="a typical host's disk rate (hosts set their own); egress 0 by "
                              "default", rates_basis="estimated"),
)
PROVIDERS_BY_CODE: dict[str, ProviderSpec] = {p.code: p for p in PROVIDERS}
PROVIDER_CODES: tuple[str, ...] = tuple(PROVIDERS_BY_CODE)
PROVIDER_LABELS: dict[str, str] = {p.code: p.label for p in PROVIDERS}
HOME_REGIONS: tuple[str, ...] = tuple(
    dict.fromkeys(p.home_region for p in PROVIDERS if p.home_region))
REFRESHABLE: dict[str, PriceRefresh] = {p.code: p.refresh for p in PROVIDERS if p.refresh}

EDITED_RATES = "your values (edited in the what-if form)"


def rates_source(provider: str, **rates: float | None) -> str:
    """Where a plan's storage or egress rates of `provider` come from (keyword names as
    ProviderSpec's: storage_usd_per_gb_month, egress_usd_per_gb): the provider's rates_note
    when they are its defaults, EDITED_RATES when the plan changed one, "" for an unknown
    provider."""
    spec = PROVIDERS_BY_CODE.get(provider)
    if spec is None:
        return ""
    if any(value != getattr(spec, name) for name, value in rates.items()):
        return EDITED_RATES
    return spec.rates_note


DEFAULT_STORAGE_USD_PER_GB_MONTH: dict[str, float] = {
    p.code: p.storage_usd_per_gb_month for p in PROVIDERS}
DEFAULT_EGRESS_USD_PER_GB: dict[str, float] = {p.code: p.egress_usd_per_gb for p in PROVIDERS}
DEFAULT_PROVIDER_SPOT_BANDS: dict[str, str] = {p.code: p.spot_band for p in PROVIDERS}
DEFAULT_SPOT_HAZARD_PER_INSTANCE_HOUR: dict[str, float] = {
    p.code: band_hazard(p.spot_band) for p in PROVIDERS}
# provider -> GPU name (exact, or the model prefix of "<model> <variant>") -> hazard.
DEFAULT_SPOT_HAZARD_BY_GPU: dict[str, dict[str, float]] = {
    p.code: {gpu: band_hazard(band) for gpu, band in p.spot_band_by_gpu.items()}
    for p in PROVIDERS if p.spot_band_by_gpu}


def offer_facts(provider: str, gpus_per_node: int, spot_node_limit: int | None = None
                ) -> tuple[str, float, float]:
    """(offer kind, most nodes one job can get, spot nodes beyond which capacity is unlikely).

    An unknown provider is a cloud instance of up to MAX_CLUSTER_NODES nodes, 4 spot nodes.
    """
    spec = PROVIDERS_BY_CODE.get(provider)
    kind = spec.offer_kind if spec else OFFER_KINDS[0]
    max_nodes = float(spec.max_nodes if spec else MAX_CLUSTER_NODES)
    if spot_node_limit is None:
        spot_node_limit = spec.spot_node_limit if spec else 4
        if gpus_per_node <= 2:
            spot_node_limit *= SMALL_INSTANCE_SPOT_FACTOR
    return kind, max_nodes, float(max(spot_node_limit, 0))
