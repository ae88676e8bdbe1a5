"""Reads of the catalog and price tables for pages, charts and the API. Writes live in services."""

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

from django.conf import settings
from django.db import connection
from django.db.models import (
    BooleanField,
    Count,
    ExpressionWrapper,
    FloatField,
    Max,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
    Sum,
)
from django.db.models.functions import Cast
from django.shortcuts import get_object_or_404

from planner.core.cloud import is_stale_price
from planner.core.formatting import number
from planner.core.providers import offer_facts
from planner.core.purchase_options import PAYMENT_OPTION_WORDS
from pricing.discounts import DISCOUNTED_OPTIONS as DISCOUNTED_OPTIONS  # re-exported
from pricing.discounts import NEARBY_DAYS as NEARBY_DAYS  # re-exported: explorer, tests
from pricing.discounts import PriceRow as PriceRow
from pricing.discounts import price_rows as price_rows
from pricing.models import (
    Accelerator,
    CatalogStamp,
    InstanceType,
    Price,
    PriceSource,
    Provider,
    PurchaseOption,
    Region,
)

# Precision key -> Accelerator field holding its dense peak (TOPS for int8, TFLOPS otherwise).
PRECISION_FIELDS = {
    "fp32": "fp32_tflops",
    "tf32": "tf32_tflops_dense",
    "fp16": "fp16_tflops_dense",
    "bf16": "bf16_tflops_dense",
    "fp8": "fp8_tflops_dense",
    "int8": "int8_tops_dense",
}
DEFAULT_PRECISION = "bf16"
FALLBACK_PRECISION = "fp16"


def precision_unit(precision: str) -> str:
    return "TOPS" if precision == "int8" else "TFLOPS"


STALE_BEFORE_KEPT: dict[str, Any] = {}  # stale_before's; catalog_cache_clear empties it


def stale_before() -> dict[str, str]:
    """THE staleness rule, per provider slug: prices dated before this day (ISO) are stale.
    A price is stale when it is more than PRICE_STALE_DAYS older than the newest price of the
    same provider in the catalog: a newer snapshot of that provider did not confirm it (the
    SkyPilot AWS file of mid-2025 beside the January 2026 AWS prices). Judged against the
    catalog's own dates, not today's, so "stale" marks a catalog's exceptions; its age is
    said beside it (planner.core.cloud.stale_rule_text). Cached per catalog version."""
    key = f"{catalog_version()}:{settings.PRICE_STALE_DAYS}"
    if STALE_BEFORE_KEPT.get("key") != key:
        newest = Price.objects.values("instance_type__provider__slug").annotate(
            newest=Max("as_of")).values_list("instance_type__provider__slug", "newest")
        days = timedelta(days=settings.PRICE_STALE_DAYS)
        STALE_BEFORE_KEPT.update(key=key, found={slug: (day - days).isoformat()
                                                 for slug, day in newest})
    found: dict[str, str] = dict(STALE_BEFORE_KEPT["found"])
    return found


def is_stale(as_of: date, provider: str) -> bool:
    """A price of `provider` dated `as_of` is stale (the rule of stale_before)."""
    return is_stale_price(as_of, provider, stale_before())


def stale_q(prefix: str = "") -> Q:
    """The stale rule as a filter on prices (`prefix`: the path to a Price, "prices__")."""
    rule = Q(pk__in=[])
    for slug, cutoff in stale_before().items():
        rule |= Q(**{f"{prefix}instance_type__provider__slug": slug,
                     f"{prefix}as_of__lt": date.fromisoformat(cutoff)})
    return rule


# --- prices -----------------------------------------------------------------------------------


def current_prices(
    *,
    purchase_options: Iterable[str] | None = None,
    providers: Iterable[str] | None = None,
    regions: Iterable[str] | None = None,
    instance_type_ids: Iterable[int] | None = None,
) -> QuerySet[Price]:
    """The one way to read current prices: the newest listed or derived price of each
    instance type, region and purchase option, with its relations; None = no filter."""
    rows = Price.objects.filter(is_current=True).select_related(
        "instance_type__provider", "instance_type__accelerator", "region", "source"
    )
    if purchase_options is not None:
        rows = rows.filter(purchase_option__in=list(purchase_options))
    if providers is not None:
        rows = rows.filter(instance_type__provider__slug__in=list(providers))
    if regions is not None:
        rows = rows.filter(region__code__in=list(regions))
    if instance_type_ids is not None:
        rows = rows.filter(instance_type_id__in=list(instance_type_ids))
    return rows


def price_queryset(*, today: date) -> QuerySet[Price]:
    """Prices with their relations, `usd_per_gpu_hour_value` (float) and `is_stale_value`."""
    # Cast both sides: SQLite stores whole-dollar decimals as integers and would divide integers.
    per_gpu = Cast("usd_per_hour", FloatField()) / Cast("instance_type__gpu_count", FloatField())
    return Price.objects.select_related(
        "instance_type__provider", "instance_type__accelerator", "region", "source"
    ).annotate(
        usd_per_gpu_hour_value=ExpressionWrapper(per_gpu, output_field=FloatField()),
        is_stale_value=ExpressionWrapper(stale_q(), output_field=BooleanField()),
    )


def price_list(
    *,
    today: date,
    gpu: str = "",
    provider: str = "",
    region: str = "",
    purchase_option: str = "",
    include_history: bool = False,
) -> QuerySet[Price]:
    """Prices matching the filters (empty string = any); current prices only by default."""
    prices = price_queryset(today=today)
    if not include_history:
        prices = prices.filter(is_current=True)
    if gpu:
        prices = prices.filter(instance_type__accelerator__slug=gpu)
    if provider:
        prices = prices.filter(instance_type__provider__slug=provider)
    if region:
        prices = prices.filter(region__code=region)
    if purchase_option:
        prices = prices.filter(purchase_option=purchase_option)
    return prices.order_by(
        "instance_type__provider__slug", "instance_type__name", "region__code",
        "purchase_option", "-is_current", "-as_of",
    )


def cheapest_offers(
    *, today: date, purchase_option: str = PurchaseOption.ON_DEMAND, gpu: str = "",
    min_gpus: int | None = None,
) -> QuerySet[Price]:
    """Current prices of one purchase option, cheapest $/GPU-hour first; a price not above 0
    (refused by the importer, but planted some other way) is no offer."""
    offers = price_list(today=today, gpu=gpu, purchase_option=purchase_option).filter(
        usd_per_hour__gt=0)
    if min_gpus is not None:
        offers = offers.filter(instance_type__gpu_count__gte=min_gpus)
    return offers.order_by("usd_per_gpu_hour_value", "id")


def cheapest_by_accelerator(
    *, today: date, purchase_option: str = PurchaseOption.ON_DEMAND,
    offer_kind: str | None = None,
) -> dict[int, Price]:
    """The cheapest current $/GPU-hour price of each accelerator, keyed by accelerator id;
    `offer_kind` ("cloud_instance" or "marketplace_machine") keeps only those providers."""
    offers = cheapest_offers(today=today, purchase_option=purchase_option)
    if offer_kind is not None:
        offers = offers.filter(instance_type__provider__slug__in=providers_of_kind(offer_kind))
    cheapest_id = Subquery(
        offers.filter(instance_type__accelerator=OuterRef("pk")).values("id")[:1])
    pairs = Accelerator.objects.annotate(price_id=cheapest_id).values_list("id", "price_id")
    prices = price_queryset(today=today).in_bulk([p for _, p in pairs if p is not None])
    return {gpu_id: prices[price_id] for gpu_id, price_id in pairs if price_id is not None}


def providers_of_kind(offer_kind: str) -> list[str]:
    """Provider slugs whose offers are of `offer_kind` (planner.core.cloud says which)."""
    slugs = Provider.objects.values_list("slug", flat=True)
    return [slug for slug in slugs if offer_facts(slug, 1)[0] == offer_kind]


def cheapest_per_option(*, today: date, gpu: str) -> list[Price]:
    """For one accelerator, the cheapest current $/GPU-hour price of each purchase option."""
    offers = (cheapest_offers(today=today, purchase_option=option, gpu=gpu).first()
              for option in PurchaseOption.values)
    return [offer for offer in offers if offer is not None]


@dataclass(frozen=True)
class SourceRow:
    source: PriceSource
    price_count: int
    age_days: int
    is_stale: bool


def source_rows(*, today: date) -> list[SourceRow]:
    """Every price source with its price count, age on `today` and staleness: stale when its
    current prices are stale (stale_before), so a source superseded by a newer snapshot of
    the same provider is flagged and an old but newest one is not."""
    sources = PriceSource.objects.annotate(
        price_count=Count("prices"),
        n_current=Count("prices", filter=Q(prices__is_current=True)),
        n_stale=Count("prices", filter=Q(prices__is_current=True) & stale_q("prices__")))
    return [
        SourceRow(s, s.price_count, (today - s.snapshot_date).days,
                  s.n_stale > 0 and s.n_stale == s.n_current)
        for s in sources
    ]


def regions_by_provider() -> dict[str, list[str]]:
    """Region codes that have prices, per provider slug (sorted)."""
    priced = Region.objects.filter(prices__isnull=False).distinct()
    regions: dict[str, list[str]] = {}
    for slug, code in priced.values_list("provider__slug", "code").order_by("code"):
        regions.setdefault(slug, []).append(code)
    return regions


def filter_choices(
    *, provider: str = "", regions: dict[str, list[str]] | None = None
) -> dict[str, list[Any]]:
    """Choices for the price filters: GPUs, providers and region codes that have prices.

    Regions are those of `provider` when one is chosen, else grouped by provider
    ((provider name, [(code, code), ...]) pairs), so no list mixes every provider's regions.
    """
    gpus = Accelerator.objects.filter(instance_types__isnull=False).distinct()
    providers = {it.provider.slug: it.provider.name for it in
                 InstanceType.objects.select_related("provider")}
    regions = regions_by_provider() if regions is None else regions
    if provider:
        region_choices: list[Any] = [(code, code) for code in regions.get(provider, [])]
    else:
        region_choices = [(providers.get(slug, slug), [(code, code) for code in codes])
                          for slug, codes in sorted(regions.items(),
                                                    key=lambda item: providers.get(item[0], ""))]
    return {
        "gpu": [(g.slug, g.name) for g in gpus],
        "provider": sorted(providers.items(), key=lambda p: p[1]),
        "region": region_choices,
    }


# --- accelerators -----------------------------------------------------------------------------


def accelerator_list(
    *, vendor: str = "", min_memory_gb: float | None = None, precision: str = ""
) -> QuerySet[Accelerator]:
    """Accelerators by vendor, minimum memory (GB) and support for a precision."""
    gpus = Accelerator.objects.all()
    if vendor:
        gpus = gpus.filter(vendor=vendor)
    if min_memory_gb is not None:
        gpus = gpus.filter(memory_gb__gte=min_memory_gb)
    if precision:
        gpus = gpus.filter(**{f"{PRECISION_FIELDS[precision]}__isnull": False})
    return gpus


def vendor_choices() -> list[str]:
    return list(Accelerator.objects.order_by("vendor").values_list("vendor", flat=True).distinct())


def interconnect_label(gpu: Accelerator) -> str:
    """'NVLink 4' for a bare generation number, the stored text otherwise, '' for none."""
    return f"NVLink {gpu.interconnect}" if gpu.interconnect.isdigit() else gpu.interconnect


@dataclass(frozen=True)
class CatalogRow:
    """An accelerator, its peak at the chosen precision and its cheapest current offer."""

    gpu: Accelerator
    precision: str
    peak_tflops: float | None
    cheapest: Price | None
    interconnect: str
    marketplace: Price | None = None  # the cheapest marketplace machine, beside a cloud offer

    @property
    def is_marketplace(self) -> bool:
        """The cheapest offer is a marketplace machine (no cloud sells this GPU)."""
        return self.cheapest is not None and offer_facts(
            self.cheapest.instance_type.provider.slug, 1)[0] == "marketplace_machine"

    @property
    def usd_per_gpu_hour(self) -> float | None:
        return self.cheapest.usd_per_gpu_hour if self.cheapest else None

    @property
    def tflops_per_usd_per_gpu_hour(self) -> float | None:
        usd = self.usd_per_gpu_hour
        return self.peak_tflops / usd if self.peak_tflops and usd else None

    @property
    def blank_peaks_note(self) -> str:
        """Why the tensor-core cells are blank when only the CUDA-core FP32 rate is published
        (the A10G: gpus.SOURCES.md); "" otherwise."""
        if self.gpu.has_tensor_rates or self.gpu.fp32_tflops is None:
            return ""
        return ("tensor-core rates (TF32, FP16, BF16, INT8) not published; "
                f"FP32 {number(self.gpu.fp32_tflops)} TFLOPS is the CUDA-core rate")


def peak_for(gpu: Accelerator, precision: str) -> tuple[str, float | None]:
    """The peak at `precision`; with no precision chosen, bf16 falling back to fp16."""
    if precision:
        return precision, gpu.peak_tflops(precision)
    bf16 = gpu.peak_tflops(DEFAULT_PRECISION)
    if bf16 is not None:
        return DEFAULT_PRECISION, bf16
    return FALLBACK_PRECISION, gpu.peak_tflops(FALLBACK_PRECISION)


SORT_KEYS = {
    "name": lambda r: r.gpu.name.lower(),
    "vendor": lambda r: r.gpu.vendor.lower(),
    "memory_gb": lambda r: r.gpu.memory_gb,
    "memory_bandwidth_gbps": lambda r: r.gpu.memory_bandwidth_gbps,
    "peak_tflops": lambda r: r.peak_tflops,
    "tdp_watts": lambda r: r.gpu.tdp_watts,
    "usd_per_gpu_hour": lambda r: r.usd_per_gpu_hour,
    "tflops_per_usd": lambda r: r.tflops_per_usd_per_gpu_hour,
}


def sort_rows(rows: Iterable[CatalogRow], sort: str) -> list[CatalogRow]:
    """Sort by a SORT_KEYS key, '-' prefix for descending; missing values always go last."""
    key = SORT_KEYS[sort.lstrip("-")]
    present = [r for r in rows if key(r) is not None]
    missing = [r for r in rows if key(r) is None]
    return sorted(present, key=key, reverse=sort.startswith("-")) + missing


def catalog_rows(
    *, today: date, vendor: str = "", min_memory_gb: float | None = None, precision: str = "",
    sort: str = "vendor",
) -> list[CatalogRow]:
    """The catalog table: filtered accelerators with their cheapest current on-demand cloud
    instance (a marketplace machine only where no cloud sells the GPU) and, apart, the
    cheapest marketplace machine: single rented rigs are not what a training run can scale on."""
    cloud = cheapest_by_accelerator(today=today, offer_kind="cloud_instance")
    marketplace = cheapest_by_accelerator(today=today, offer_kind="marketplace_machine")
    rows = []
    for gpu in accelerator_list(vendor=vendor, min_memory_gb=min_memory_gb, precision=precision):
        used, peak = peak_for(gpu, precision)
        rig = marketplace.get(gpu.id)
        rows.append(CatalogRow(gpu, used, peak, cloud.get(gpu.id) or rig, interconnect_label(gpu),
                               rig if gpu.id in cloud else None))
    return sort_rows(rows, sort)


def catalog_rows_for(*, today: date, slugs: Sequence[str]) -> list[CatalogRow]:
    """Catalog rows for the given slugs, in the order given (the compare page)."""
    rows = {r.gpu.slug: r for r in catalog_rows(today=today) if r.gpu.slug in slugs}
    return [rows[slug] for slug in slugs if slug in rows]


# --- instance types ---------------------------------------------------------------------------


def instance_type_list(
    *, gpu: str = "", provider: str = "", min_gpus: int | None = None
) -> QuerySet[InstanceType]:
    instances = InstanceType.objects.select_related("provider", "accelerator")
    if gpu:
        instances = instances.filter(accelerator__slug=gpu)
    if provider:
        instances = instances.filter(provider__slug=provider)
    if min_gpus is not None:
        instances = instances.filter(gpu_count__gte=min_gpus)
    return instances.order_by("provider__slug", "name")


@dataclass(frozen=True)
class InstanceDetail:
    instance: InstanceType
    rows: list[PriceRow]


def instance_detail(*, provider: str, name: str, today: date) -> InstanceDetail:
    """One instance type (404 when unknown) with all its prices, current first within a key."""
    instance = get_object_or_404(
        InstanceType.objects.select_related("provider", "accelerator"),
        provider__slug=provider, name=name,
    )
    prices = price_queryset(today=today).filter(instance_type=instance).order_by(
        "region__code", "purchase_option", "-is_current", "-as_of"
    )
    return InstanceDetail(instance, price_rows(list(prices)))


@dataclass(frozen=True)
class RegionPrice:
    region: str
    purchase_option: str
    usd_per_hour: float


def current_region_prices(rows: Iterable[PriceRow]) -> list[RegionPrice]:
    """The current prices of an instance as plain data for its chart: one series per purchase
    option, payment option and offering class ("Reserved 3 years, all upfront, standard"), the
    cheapest per region, so no two prices share a bar (a shared bar stacks them)."""
    labels = dict(PurchaseOption.choices)
    cheapest: dict[tuple[str, str], RegionPrice] = {}
    for r in rows:
        if not r.price.is_current:
            continue
        parts = [str(labels[r.price.purchase_option])]
        if r.price.payment_option:
            parts.append(PAYMENT_OPTION_WORDS.get(r.price.payment_option, r.price.payment_option))
        if r.price.offering_class:
            parts.append(r.price.offering_class)
        item = RegionPrice(r.price.region.code, ", ".join(parts), float(r.price.usd_per_hour))
        key = (item.region, item.purchase_option)
        if key not in cheapest or item.usd_per_hour < cheapest[key].usd_per_hour:
            cheapest[key] = item
    return list(cheapest.values())


# --- chart inputs -----------------------------------------------------------------------------


@dataclass(frozen=True)
class GpuPoint:
    """One accelerator on the price/performance charts."""

    name: str
    precision: str
    peak_tflops: float
    usd_per_gpu_hour: float
    offer: str


def gpu_points(rows: Iterable[CatalogRow]) -> list[GpuPoint]:
    """Catalog rows that have both a peak and a price, as plain chart data."""
    points = []
    for row in rows:
        if row.peak_tflops is None or row.cheapest is None or not row.usd_per_gpu_hour:
            continue
        offer, instance = row.cheapest, row.cheapest.instance_type
        where = f"{instance.provider.name} {offer.region.code} {instance.name}"
        points.append(GpuPoint(row.gpu.name, row.precision, row.peak_tflops,
                               offer.usd_per_gpu_hour, where))
    return points


@dataclass(frozen=True)
class GpuPeaks:
    """Dense peaks of one accelerator by precision key (None where unsupported)."""

    name: str
    peaks: dict[str, float | None]


def gpu_peaks(rows: Iterable[CatalogRow]) -> list[GpuPeaks]:
    return [
        GpuPeaks(r.gpu.name, {key: r.gpu.peak_tflops(key) for key in PRECISION_FIELDS})
        for r in rows
    ]


def catalog_version() -> str:
    """A token that changes whenever GPUs, providers, regions, instance types or prices are
    imported or changed: the key of cached catalog pages. Database triggers keep it in the
    catalog stamp (one primary-key read); without the stamp row (a flushed test database, a
    database without triggers) it is computed from aggregates, one query per table."""
    if (stamp := catalog_stamp()) is not None:
        return stamp
    prices = Price.objects.aggregate(n=Count("id"), last=Max("id"), total=Sum("usd_per_hour"),
                                     newest=Max("as_of"))
    gpus = Accelerator.objects.aggregate(n=Count("id"), last=Max("id"))
    types = InstanceType.objects.aggregate(n=Count("id"), last=Max("id"))
    return ":".join(str(v) for part in (prices, gpus, types) for v in part.values())


def catalog_stamp() -> str | None:
    """"<token>:<version>" of the catalog stamp, changed by every catalog write (database
    triggers); None without a stamp the triggers keep."""
    stamp = CatalogStamp.objects.filter(pk=1).values_list("token", "version").first()
    if stamp is None or connection.vendor not in ("sqlite", "postgresql"):
        return None
    return f"{stamp[0]}:{stamp[1]}"
