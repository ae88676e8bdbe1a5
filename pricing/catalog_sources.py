"""The price snapshots shipped in pricing/data/prices and how load_catalog reads each one.

Dates and licences are those recorded in pricing/data/prices/SOURCES.md.
"""

from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

from planner.core.providers import AWS, AZURE, GCP, LAMBDA, VAST

# The shipped catalog: gpus.csv (GPU specs, see gpus.SOURCES.md) and prices/ (snapshots).
DATA_DIR = Path(__file__).resolve().parent / "data"
GPUS_CSV = DATA_DIR / "gpus.csv"


@dataclass(frozen=True)
class SnapshotSource:
    slug: str
    file: str
    fmt: str
    provider: str
    snapshot_date: date
    name: str
    url: str
    licence: str
    notes: str = ""
    # Accelerator slugs dropped from this file because SOURCES.md lists them as defective.
    excluded_accelerators: frozenset[str] = field(default_factory=frozenset)


_UNCLEAR = "No licence recorded upstream; public price facts"
_ANYCLOUD = "https://github.com/anycloud-sh/catalog (commit 62ff0a98)"

SNAPSHOTS = (
    SnapshotSource(
        "skypilot-aws-v7",
        "skypilot_aws_gpu_vms.csv",
        "skypilot",
        AWS,
        date(2025, 6, 1),
        "SkyPilot catalog v7, AWS vms.csv",
        "https://github.com/skypilot-org/skypilot-catalog (commit 001367d2, catalogs/v7/aws)",
        _UNCLEAR,
        "Undated upstream; content dates it between Dec 2024 and early Jun 2025 (upper bound "
        "used). P4/P5 on-demand prices predate AWS's June 2025 cut.",
    ),
    SnapshotSource(
        "vantage-aws-2026-01",
        "aws_gpu_ondemand_reserved1y_vantage.csv",
        "vantage",
        AWS,
        date(2026, 1, 21),
        "ec2instances.info (Vantage) GPU extract via tsaol/aws-gpu",
        "https://github.com/tsaol/aws-gpu (commit 77fcd9fe, data/all_gpu_instances.js)",
        _UNCLEAR,
        "Reserved = 1-year Standard RI, no upfront, Linux.",
    ),
    SnapshotSource(
        "anycloud-gcp-2026-05",
        "anycloud_gcp_gpu_vms.csv",
        "skypilot",
        GCP,
        date(2026, 5, 20),
        "anycloud catalog, GCP vms.csv",
        _ANYCLOUD,
        _UNCLEAR,
        "VM price = host row + accelerator row of the same zone. H100/H200/B200 accelerator "
        "rows are not loaded: SOURCES.md flags them as wrong (a3-highgpu-8g totals $43/h "
        "against $88/h in Cyclenerd's table).",
        frozenset({"h100-sxm5-80gb", "h200-sxm-141gb", "b200-hgx-180gb"}),
    ),
    SnapshotSource(
        "anycloud-azure-2026-05",
        "anycloud_azure_gpu_vms.csv",
        "skypilot",
        AZURE,
        date(2026, 5, 20),
        "anycloud catalog, Azure vms.csv",
        _ANYCLOUD,
        _UNCLEAR,
    ),
    SnapshotSource(
        "anycloud-lambda-2026-05",
        "anycloud_lambda_vms.csv",
        "skypilot",
        LAMBDA,
        date(2026, 5, 20),
        "anycloud catalog, Lambda vms.csv",
        _ANYCLOUD,
        _UNCLEAR,
        "Lambda lists one price for every region; a listed region may have no capacity.",
    ),
    SnapshotSource(
        "anycloud-vast-2026-05",
        "anycloud_vast_vms.csv",
        "skypilot",
        VAST,
        date(2026, 5, 20),
        "anycloud catalog, Vast.ai vms.csv",
        _ANYCLOUD,
        _UNCLEAR,
        "Marketplace offers at fetch time; regions are free text.",
    ),
    SnapshotSource(
        "cyclenerd-gcp-2026-07",
        "gcp_gpu_machine_types_cud_cyclenerd.csv",
        "cyclenerd",
        GCP,
        date(2026, 7, 30),
        "Cyclenerd google-cloud-pricing-cost-calculator pricing.yml",
        "https://github.com/Cyclenerd/google-cloud-pricing-cost-calculator (commit fd66b26f)",
        "Apache-2.0",
        "Committed = 1-/3-year resource-based CUD monthly price / 730 h. Loaded only in regions "
        "where the machine type is offered (per the anycloud GCP zone list).",
    ),
    # Price tables: they price instance types the snapshots above put in the catalog.
    SnapshotSource(
        "vantage-aws-commitments-2025-11",
        "aws_gpu_commitments_vantage.csv",
        "price-table",
        AWS,
        date(2025, 11, 30),
        "ec2instances.info (Vantage) reserved-instance prices via tsaol/aws-gpu",
        "https://github.com/tsaol/aws-gpu (commit 2d0108c7, data/gpu_instances_raw.json)",
        _UNCLEAR,
        "AWS reserved instances 1y/3y, standard and convertible, no/partial/all upfront, Linux, "
        "29 regions. Effective rate = hourly fee + upfront / (8,760 h x years); partial-upfront "
        "rows give the effective rate only. No p3, p5e, p5en or p6 reservations exist upstream.",
    ),
    SnapshotSource(
        "azure-pricing-radar-sp-2026-08",
        "azure_gpu_commitments_azurepricingradar.csv",
        "price-table",
        AZURE,
        date(2026, 8, 22),
        "Azure Retail Prices API via andy-diericks/azure-pricing-radar (1-year savings plan)",
        "https://github.com/andy-diericks/azure-pricing-radar (commit cf741f25)",
        "MIT",
        "Azure 1-year savings plan, billed hourly, four European regions; no reservations and "
        "no 3-year plan upstream; ND H100/H200/MI300X v5 have no savings-plan price.",
    ),
    SnapshotSource(
        "azure-pricing-radar-spot-2026-08",
        "azure_gpu_spot_azurepricingradar.csv",
        "price-table",
        AZURE,
        date(2026, 8, 22),
        "Azure Retail Prices API via andy-diericks/azure-pricing-radar (spot)",
        "https://github.com/andy-diericks/azure-pricing-radar (commit cf741f25)",
        "MIT",
        "Azure spot prices as published, four European regions (low-priority rows are an "
        "Azure Batch rate and are not loaded). Newer than the anycloud Azure spot column.",
    ),
)

DISCOUNT_LEVELS_FILE = "commitment_discount_levels.csv"
DISCOUNT_LEVELS_SOURCE = SnapshotSource(
    "discount-levels",
    DISCOUNT_LEVELS_FILE,
    "levels",
    "",
    date(2026, 7, 30),
    "Published commitment discount levels (us-east-1 RI, us-central1 CUD)",
    "pricing/data/prices/commitment_discount_levels.csv",
    "As its inputs",
    "Derived prices: on-demand price of the same region x (1 - discount of the same instance "
    "type in the reference region).",
)
