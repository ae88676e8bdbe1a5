"""Cloud facts both planning features use: hours, terms, spot interruption bands, storage and
egress list prices. Django-free; one place for each fact (STYLE.md §1.7).

Units are in the names: hours, USD per GB-month, USD per GB, hazard per instance-hour.
"""

from __future__ import annotations

import math

HOURS_PER_MONTH = 730.0
HOURS_PER_YEAR = 8760.0
# Term length in years per purchase option; 0 = pay as you go.
PURCHASE_TERM_YEARS: dict[str, float] = {
    "on_demand": 0.0,
    "spot": 0.0,
    "reserved_1y": 1.0,
    "reserved_3y": 3.0,
    "committed_1y": 1.0,
    "committed_3y": 3.0,
    "savings_plan_1y": 1.0,
    "savings_plan_3y": 3.0,
}
# A spot band nobody has published for a provider reads as the top one.
DEFAULT_SPOT_BAND = ">20%"


# Monthly reclaim fraction per AWS Spot Advisor "frequency of interruption" band (Azure shows
# the same bands as eviction rates); each band read at its midpoint, the open ">20%" at 25%.
SPOT_BAND_MONTHLY_FRACTION: dict[str, float] = {
    "<5%": 0.025, "5-10%": 0.075, "10-15%": 0.125, "15-20%": 0.175, ">20%": 0.25,
}


def hazard_per_instance_hour(monthly_fraction: float) -> float:
    """Poisson hazard per instance-hour for a monthly reclaim fraction p: -ln(1 - p) / 730."""
    if not 0.0 <= monthly_fraction < 1.0:
        raise ValueError("monthly interruption fraction must be in [0, 1)")
    return -math.log(1.0 - monthly_fraction) / HOURS_PER_MONTH


def band_hazard(band: str) -> float:
    """Hazard per instance-hour of a Spot Advisor band (e.g. "15-20%")."""
    return hazard_per_instance_hour(SPOT_BAND_MONTHLY_FRACTION[band])


# List prices, USD per GB-month, first tier, US regions, as of 2026-01. Figures as given in
# the what-if planner issue; Lambda's ($0.20/GiB-month, no ingress/egress charge) re-checked
# on docs.lambda.ai/public-cloud/billing, the others not re-fetched here (≈ = approximate):
DEFAULT_STORAGE_USD_PER_GB_MONTH: dict[str, float] = {
    "aws": 0.023,  # S3 Standard, us-east-1, first 50 TB (aws.amazon.com/s3/pricing)
    "gcp": 0.020,  # Cloud Storage Standard, regional us-central1 (cloud.google.com/storage)
    "azure": 0.0184,  # Blob Storage Hot LRS, East US, first 50 TB (≈; azure.microsoft.com)
    "lambda": 0.20,  # persistent filesystem, per GiB-month (docs.lambda.ai billing)
    "vast": 0.10,  # marketplace hosts set their own disk rate; a typical listing (≈)
}


# Internet egress, USD per GB, first paid tier, as of 2026-01 (same origin as above):
DEFAULT_EGRESS_USD_PER_GB: dict[str, float] = {
    "aws": 0.09,  # EC2/S3 data transfer out to internet, first 10 TB/month
    "gcp": 0.12,  # premium tier internet egress, first 1 TB
    "azure": 0.087,  # internet egress (Microsoft network routing), first 10 TB
    "lambda": 0.0,  # no ingress/egress charges (docs.lambda.ai billing)
    "vast": 0.0,  # bandwidth is priced per host on the marketplace; 0 by default (≈)
}


# Spot hazard per instance-hour. AWS Spot Advisor puts most GPU types in the upper bands and
# the newest generations often above 20 % (commitment_anchors.md §3); Azure publishes the same
# bands; GCP publishes none and GPU Spot VMs are reclaimed often, so its top band is assumed;
# Lambda sells no spot (top band if a row appears); Vast interruptible instances are outbid.
DEFAULT_PROVIDER_SPOT_BANDS: dict[str, str] = {
    "aws": "15-20%",  # 2.6e-4 /h
    "azure": "15-20%",
    "gcp": ">20%",  # 3.9e-4 /h
    "lambda": ">20%",
    "vast": ">20%",
}


DEFAULT_SPOT_HAZARD_PER_INSTANCE_HOUR: dict[str, float] = {
    provider: band_hazard(band) for provider, band in DEFAULT_PROVIDER_SPOT_BANDS.items()
}


# provider -> GPU name (exact, or the model prefix of "<model> <variant>") -> hazard.
DEFAULT_SPOT_HAZARD_BY_GPU: dict[str, dict[str, float]] = {
    "aws": {"H100": band_hazard(">20%"), "H200": band_hazard(">20%"),
            "B200": band_hazard(">20%")},
}


# What a provider's priced option is, and how many nodes one job can get from it. These are
# planning assumptions, not published quotas (the hyperscalers grant GPU quota per request):
# - cloud_instance: a VM type; clusters of it are assembled by the user (EFA/InfiniBand
#   families), up to MAX_NODES_BY_PROVIDER nodes before a capacity reservation is needed;
# - marketplace_machine: one host listed by its owner (Vast.ai); never a cluster.
OFFER_KIND_BY_PROVIDER: dict[str, str] = {
    "aws": "cloud_instance", "gcp": "cloud_instance", "azure": "cloud_instance",
    "lambda": "cloud_instance", "vast": "marketplace_machine",
}
MAX_NODES_BY_PROVIDER: dict[str, int] = {
    "aws": 512, "gcp": 512, "azure": 512,
    # Lambda sells on-demand instances one by one (clusters are a separate, reserved product).
    "lambda": 8,
    "vast": 1,
}
# Spot (or interruptible) nodes of one multi-GPU type beyond which a single allocation is
# unlikely to be granted at once; 1-2 GPU instances are plentiful, so four times as many.
# Editable per plan (spot_node_limit); options above it are marked "spot capacity unlikely".
SPOT_NODE_LIMIT_BY_PROVIDER: dict[str, int] = {
    "aws": 4, "gcp": 4, "azure": 4, "lambda": 0, "vast": 1,
}
SMALL_INSTANCE_SPOT_FACTOR = 4


def offer_facts(provider: str, gpus_per_node: int, spot_node_limit: int | None = None
                ) -> tuple[str, float, float]:
    """(offer kind, most nodes one job can get, spot nodes beyond which capacity is unlikely)."""
    kind = OFFER_KIND_BY_PROVIDER.get(provider, "cloud_instance")
    max_nodes = float(MAX_NODES_BY_PROVIDER.get(provider, 512))
    if spot_node_limit is None:
        spot_node_limit = SPOT_NODE_LIMIT_BY_PROVIDER.get(provider, 4)
        if gpus_per_node <= 2:
            spot_node_limit *= SMALL_INSTANCE_SPOT_FACTOR
    return kind, max_nodes, float(max(spot_node_limit, 0))


# Default sizes a plan assumes when the user gives none (shown and editable):
# a checkpoint keeps bf16 weights (2 B), fp32 master weights (4 B) and Adam's two fp32
# moments (8 B) per parameter; a tokenized text corpus stores 2 B per token (uint16 ids);
# an image dataset about 110 kB per sample (ImageNet-1k JPEGs: ~140 GB / 1.28 M images).
CHECKPOINT_BYTES_PER_PARAM = 14.0
DATASET_BYTES_PER_TOKEN = 2.0
DATASET_BYTES_PER_IMAGE = 110e3


def default_checkpoint_gb(params: float) -> float:
    """Checkpoint size (GB) of a model with `params` parameters trained with Adam."""
    return params * CHECKPOINT_BYTES_PER_PARAM / 1e9


def default_dataset_gb(*, tokens: float | None, samples: float | None,
                       tokens_per_sample: int, is_image: bool) -> float:
    """Dataset size (GB): tokens x 2 B, or samples x (110 kB per image | tokens x 2 B)."""
    if tokens:
        return tokens * DATASET_BYTES_PER_TOKEN / 1e9
    per_sample = (DATASET_BYTES_PER_IMAGE if is_image
                  else tokens_per_sample * DATASET_BYTES_PER_TOKEN)
    return (samples or 0.0) * per_sample / 1e9


# Plain words for purchase options and payment options (what the purchase-mix tables show).
PURCHASE_OPTION_WORDS: dict[str, str] = {
    "on_demand": "on-demand",
    "spot": "spot",
    "reserved_1y": "1-year reservation",
    "reserved_3y": "3-year reservation",
    "committed_1y": "1-year committed use",
    "committed_3y": "3-year committed use",
    "savings_plan_1y": "1-year savings plan",
    "savings_plan_3y": "3-year savings plan",
}
PAYMENT_OPTION_WORDS: dict[str, str] = {
    "": "no upfront",
    "no_upfront": "no upfront",
    "partial_upfront": "partial upfront",
    "all_upfront": "all upfront",
}


# Years of cloud service left for older GPU generations, as of 2026 (a planning assumption:
# providers retire instance families about 7-9 years after launch; K80 (p2) and P100 are
# being withdrawn, V100 (p3) is the oldest family still sold). Demand for a type is taken to
# end this many years from the end of the history; newer GPUs are not retired within 3 years.
GPU_SERVICE_YEARS_LEFT: dict[str, float] = {
    "K80": 0.25,
    "M60": 0.5,
    "P4": 0.5,
    "P40": 0.75,
    "P100": 1.0,
    "V100": 2.0,
    "T4": 3.0,
}


# Which interruptible jobs may run on spot. Spot capacity for many nodes at once is rarely
# granted together, and a job reclaimed every few hours for days mostly reruns: a job over
# SPOT_MAX_JOB_GPUS GPUs (four 8-GPU nodes) or SPOT_MAX_JOB_HOURS hours stays off spot.
SPOT_MAX_JOB_GPUS = 32
SPOT_MAX_JOB_HOURS = 168.0
