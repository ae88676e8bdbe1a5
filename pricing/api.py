"""JSON API for the catalog and prices. Quantities carry their unit in the field name.

List endpoints are paginated: `?page=N` (from 1), 50 items per page, `?page_size=` up to 100;
each answer is `{"items": [...], "count": total}`. Prices are USD, excluding tax.
"""

from datetime import date
from typing import Literal

from django.db.models import QuerySet
from django.http import HttpRequest
from django.shortcuts import get_object_or_404
from django.urls import reverse
from django.utils import timezone
from ninja import Field, Query, Router, Schema
from ninja.errors import ValidationError
from ninja.pagination import PageNumberPagination, paginate

from pricing import selectors
from pricing.models import Accelerator, InstanceType, Price, Provider, PurchaseOption, Region

router = Router(tags=["catalog"])

PAGE_SIZE = 50
MAX_PAGE = 1_000_000  # beyond it the offset overflows the database's integer (a 500)


class BoundedPageNumberPagination(PageNumberPagination):
    """ninja's page-number pagination with documented bounds on both query fields."""

    class Input(Schema):
        page: int = Field(1, ge=1, le=MAX_PAGE)
        page_size: int | None = Field(None, ge=1, le=MAX_PAGE)
Precision = Literal["fp32", "tf32", "fp16", "bf16", "fp8", "int8"]


class GpuOut(Schema):
    slug: str
    name: str
    vendor: str
    model: str
    variant: str
    architecture: str
    year: int | None
    memory_gb: float
    memory_type: str
    memory_bandwidth_gb_per_s: float | None = Field(alias="memory_bandwidth_gbps")
    fp32_tflops: float | None
    tf32_tflops_dense: float | None
    fp16_tflops_dense: float | None
    bf16_tflops_dense: float | None
    fp8_tflops_dense: float | None
    int8_tops_dense: float | None
    interconnect: str = Field(description="'NVLink 4', 'Infinity Fabric (7 links)' or ''")
    interconnect_bandwidth_gb_per_s: float | None = Field(
        alias="interconnect_bandwidth_gbps", description="GB/s per GPU, bidirectional"
    )
    pcie_gen: int | None
    tdp_watts: int | None
    source_url: str

    @staticmethod
    def resolve_interconnect(obj: Accelerator) -> str:
        return selectors.interconnect_label(obj)


class SourceOut(Schema):
    slug: str
    name: str
    url: str
    licence: str
    snapshot_date: date


class PriceOut(Schema):
    provider: str
    region: str
    instance_type: str
    gpu: str
    gpu_count: int
    purchase_option: PurchaseOption
    usd_per_hour: float = Field(description="USD per instance-hour")
    usd_per_gpu_hour: float = Field(alias="usd_per_gpu_hour_value")
    as_of: date
    zone: str
    source: SourceOut
    is_current: bool = Field(description="False for history rows replaced by a newer price")
    is_derived: bool
    derivation_basis: str
    is_stale: bool = Field(
        alias="is_stale_value", description=(
            "more than PRICE_STALE_DAYS (180) days older than the newest price of the same "
            "provider in the catalog")
    )

    @staticmethod
    def resolve_provider(obj: Price) -> str:
        return obj.instance_type.provider.slug

    @staticmethod
    def resolve_region(obj: Price) -> str:
        return obj.region.code

    @staticmethod
    def resolve_instance_type(obj: Price) -> str:
        return obj.instance_type.name

    @staticmethod
    def resolve_gpu(obj: Price) -> str:
        return obj.instance_type.accelerator.slug

    @staticmethod
    def resolve_gpu_count(obj: Price) -> int:
        return obj.instance_type.gpu_count


class GpuDetailOut(GpuOut):
    cheapest_offers: list[PriceOut] = Field(
        description="The cheapest current $/GPU-hour price of each purchase option"
    )


class InstanceTypeOut(Schema):
    provider: str
    name: str
    gpu: str
    gpu_count: int
    vcpus: int | None
    memory_gib: float | None
    intra_node_interconnect: InstanceType.Interconnect
    intra_node_bandwidth_gb_per_s: float | None = Field(alias="intra_node_bandwidth_gbps")
    network_gbit_per_s: float | None = Field(alias="network_gbps")
    host_machine_type: str
    page_url: str

    @staticmethod
    def resolve_provider(obj: InstanceType) -> str:
        return obj.provider.slug

    @staticmethod
    def resolve_gpu(obj: InstanceType) -> str:
        return obj.accelerator.slug

    @staticmethod
    def resolve_page_url(obj: InstanceType) -> str:
        return reverse("pricing:instance", args=[obj.provider.slug, obj.name])


class GpuFilters(Schema):
    vendor: str | None = Field(None, description="e.g. NVIDIA, AMD, Intel")
    min_memory_gb: float | None = Field(None, ge=0, description="GB of device memory")
    precision: Precision | None = Field(None, description="Only GPUs with a dense peak here")


class InstanceTypeFilters(Schema):
    gpu: str | None = Field(None, description="GPU slug, e.g. h100-sxm5-80gb")
    provider: str | None = Field(None, description="Provider slug: aws, gcp, azure, lambda, vast")
    min_gpus: int | None = Field(None, ge=1, description="At least this many GPUs per node")


class PriceFilters(Schema):
    gpu: str | None = Field(None, description="GPU slug, e.g. h100-sxm5-80gb")
    provider: str | None = Field(None, description="Provider slug: aws, gcp, azure, lambda, vast")
    region: str | None = Field(None, description="Region code, e.g. us-east-1")
    purchase_option: PurchaseOption | None = None
    include_history: bool = Field(False, description="Also return replaced (history) prices")


class CheapestFilters(Schema):
    gpu: str | None = Field(None, description="GPU slug, e.g. h100-sxm5-80gb")
    purchase_option: PurchaseOption = PurchaseOption.ON_DEMAND
    min_gpus: int | None = Field(None, ge=1, description="At least this many GPUs per node")


def _today() -> date:
    return timezone.now().date()


def _require(field: str, value: str | None, exists: bool) -> str:
    """The filter value, or a 422 naming the query field when it matches nothing."""
    if value and not exists:
        raise ValidationError([{
            "type": "value_error", "loc": ["query", field],
            "msg": f"{field}: no such value {value!r}",
        }])
    return value or ""


def _gpu_filter(gpu: str | None) -> str:
    return _require("gpu", gpu, Accelerator.objects.filter(slug=gpu).exists())


def _provider_filter(provider: str | None) -> str:
    return _require("provider", provider, Provider.objects.filter(slug=provider).exists())


@router.get("/gpus", response=list[GpuOut], summary="List GPUs")
@paginate(BoundedPageNumberPagination, page_size=PAGE_SIZE)
def gpu_list(request: HttpRequest, filters: Query[GpuFilters]) -> QuerySet[Accelerator]:
    """GPUs with specs; filter by vendor, minimum memory (GB) and supported precision."""
    vendor = _require("vendor", filters.vendor, filters.vendor in selectors.vendor_choices())
    return selectors.accelerator_list(
        vendor=vendor, min_memory_gb=filters.min_memory_gb, precision=filters.precision or ""
    )


@router.get("/gpus/{slug}", response=GpuDetailOut, summary="One GPU")
def gpu_detail(request: HttpRequest, slug: str) -> Accelerator:
    """One GPU with the cheapest current price of each purchase option."""
    gpu = get_object_or_404(Accelerator, slug=slug)
    gpu.cheapest_offers = selectors.cheapest_per_option(  # type: ignore[attr-defined]
        today=_today(), gpu=slug
    )
    return gpu


@router.get("/instance-types", response=list[InstanceTypeOut], summary="List instance types")
@paginate(BoundedPageNumberPagination, page_size=PAGE_SIZE)
def instance_type_list(
    request: HttpRequest, filters: Query[InstanceTypeFilters]
) -> QuerySet[InstanceType]:
    """Rentable machine shapes: GPU, count, host CPU and memory, interconnect and network."""
    return selectors.instance_type_list(
        gpu=_gpu_filter(filters.gpu), provider=_provider_filter(filters.provider),
        min_gpus=filters.min_gpus,
    )


@router.get("/prices", response=list[PriceOut], summary="List prices")
@paginate(BoundedPageNumberPagination, page_size=PAGE_SIZE)
def price_list(request: HttpRequest, filters: Query[PriceFilters]) -> QuerySet[Price]:
    """Prices in USD per hour, each with its source, as-of date and staleness."""
    region = _require("region", filters.region, Region.objects.filter(code=filters.region).exists())
    return selectors.price_list(
        today=_today(), gpu=_gpu_filter(filters.gpu), provider=_provider_filter(filters.provider),
        region=region, purchase_option=filters.purchase_option or "",
        include_history=filters.include_history,
    )


@router.get("/prices/cheapest", response=list[PriceOut], summary="Cheapest offers")
@paginate(BoundedPageNumberPagination, page_size=PAGE_SIZE)
def cheapest_price_list(request: HttpRequest, filters: Query[CheapestFilters]) -> QuerySet[Price]:
    """Current prices of one purchase option sorted by USD per GPU-hour, cheapest first."""
    return selectors.cheapest_offers(
        today=_today(), purchase_option=filters.purchase_option, gpu=_gpu_filter(filters.gpu),
        min_gpus=filters.min_gpus,
    )
