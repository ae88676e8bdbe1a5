"""The instance types a form offers, GPU first: each with a readable label (provider, name,
GPU count × GPU, the cheapest current on-demand $/h) and where that price comes from (region,
listed/derived/estimated, source, as-of date). Two queries, cached per catalog version; the
simulation form reads it."""

from dataclasses import dataclass
from datetime import date
from functools import cached_property

from django.core.cache import cache
from django.db.models import OuterRef, Subquery

from planner.core.formatting import count, label, number, usd, usd_per
from pricing.models import InstanceType, Price, Provider, PurchaseOption
from pricing.selectors import catalog_version, is_stale


@dataclass(frozen=True)
class InstanceChoice:
    """One instance type as a form lists it; the price is its cheapest current on-demand
    price in any region (None: no on-demand price)."""

    id: int
    provider: str  # provider code
    name: str
    gpu: str  # accelerator slug
    gpu_name: str
    gpu_count: int
    vcpus: int | None
    memory_gib: float | None
    usd_per_hour: float | None
    region: str
    as_of: date | None
    source: str
    basis: str  # listed, derived or estimated
    is_stale: bool
    is_marketplace: bool = False  # a marketplace's single machine, not a cloud instance type

    @property
    def provider_label(self) -> str:
        return label(self.provider)

    @property
    def price(self) -> str:
        return "no on-demand price" if self.usd_per_hour is None else usd_per(
            self.usd_per_hour, "h")

    @cached_property
    def label(self) -> str:
        """'AWS p4d.24xlarge · 8 × A100 SXM4-40GB · $21.96/h' (a select's option)."""
        return (f"{self.provider_label} {self.name} · {count(self.gpu_count)} × "
                f"{self.gpu_name} · {self.price}")

    @cached_property
    def note(self) -> str:
        """The instance in a sentence with its price's region, basis, source and date."""
        host = [f"{count(self.gpu_count)} × {self.gpu_name}"]
        if self.vcpus:
            host.append(f"{count(self.vcpus)} vCPUs")
        if self.memory_gib:
            host.append(f"{number(self.memory_gib, 1)} GiB memory")
        text = f"{self.provider_label} {self.name}: {', '.join(host)}."
        if self.usd_per_hour is None or self.as_of is None:
            return f"{text} No current on-demand price."
        per_gpu = usd_per(self.usd_per_hour / self.gpu_count, "GPU-hour")
        stale = " (stale)" if self.is_stale else ""
        return (f"{text} Cheapest on-demand price {usd(self.usd_per_hour)}/h ({per_gpu}) in "
                f"{self.region}: {self.basis}, {self.source}, as of "
                f"{self.as_of.isoformat()}{stale}.")


@dataclass(frozen=True)
class GpuChoice:
    slug: str
    name: str
    n_types: int
    from_usd_per_gpu_hour: float | None  # cloud instance types (the catalog's "cheapest")
    marketplace_from_usd_per_gpu_hour: float | None = None  # marketplace machines, apart

    @property
    def label(self) -> str:
        """'H100 SXM5-80GB · 16 instance types, from $2.49/GPU-hour (marketplace machines
        from $1.87)': cloud and marketplace prices apart, as the GPU catalog shows them."""
        kinds = f"{count(self.n_types)} instance type{'s' if self.n_types != 1 else ''}"
        parts = []
        if self.from_usd_per_gpu_hour is not None:
            parts.append(f"from {usd_per(self.from_usd_per_gpu_hour, 'GPU-hour')}")
        if self.marketplace_from_usd_per_gpu_hour is not None:
            market = usd_per(self.marketplace_from_usd_per_gpu_hour, "GPU-hour")
            parts.append(f"(marketplace machines from {market})" if parts
                         else f"marketplace machines from {market}")
        return f"{self.name} · {kinds}" + (f", {' '.join(parts)}" if parts else "")


@dataclass(frozen=True)
class InstanceMenu:
    """Everything the simulation form lists, read once per day and catalog version
    (`version`, which is also the key of the form's cached HTML)."""

    version: str
    choices: tuple[InstanceChoice, ...]
    gpus: tuple[GpuChoice, ...]


# Raise when InstanceChoice or GpuChoice change shape: pickled menus in the cache are keyed by it.
MENU_SHAPE = 2
# The menu of the current version in this process (a new day or catalog version replaces it).
_LAST_MENU: dict[str, "InstanceMenu"] = {}


def instance_menu(*, today: date) -> InstanceMenu:
    """The instance types and their GPUs, cached per day (prices turn stale) and catalog
    version."""
    version = f"{today}:{catalog_version()}"

    def read() -> InstanceMenu:
        choices = _read_choices(today)
        return InstanceMenu(version, tuple(choices), tuple(gpu_choices(choices)))

    if version in _LAST_MENU:  # this process read it already: no unpickling 142 choices
        return _LAST_MENU[version]
    menu: InstanceMenu = cache.get_or_set(f"instance-menu:{MENU_SHAPE}:{version}", read, 3600)
    _LAST_MENU.clear()
    _LAST_MENU[version] = menu
    return menu


def instance_choices(*, today: date) -> list[InstanceChoice]:
    """Every instance type with its cheapest current on-demand price, by GPU name, provider
    label, then price (cheapest first; unpriced last)."""
    return list(instance_menu(today=today).choices)


def _read_choices(today: date) -> list[InstanceChoice]:
    cheapest = Price.objects.filter(
        is_current=True, purchase_option=PurchaseOption.ON_DEMAND, usd_per_hour__gt=0,
        instance_type=OuterRef("pk")).order_by("usd_per_hour", "id").values("id")[:1]
    types = list(InstanceType.objects.annotate(price_id=Subquery(cheapest)).values_list(
        "id", "provider__slug", "name", "accelerator__slug", "accelerator__model",
        "accelerator__variant", "gpu_count", "vcpus", "memory_gib", "provider__kind",
        "price_id"))
    prices = Price.objects.select_related("region", "source").in_bulk(
        [row[-1] for row in types if row[-1] is not None])
    choices = []
    for (type_id, provider, name, gpu, model, variant, gpus, vcpus, memory, kind,
         price_id) in types:
        price = prices.get(price_id)
        choices.append(InstanceChoice(
            id=type_id, provider=provider, name=name, gpu=gpu, gpu_name=f"{model} {variant}",
            gpu_count=gpus, vcpus=vcpus, memory_gib=memory,
            usd_per_hour=None if price is None else float(price.usd_per_hour),
            region=price.region.code if price else "", as_of=price.as_of if price else None,
            source=price.source.name if price else "", basis=price.basis if price else "",
            is_stale=bool(price and is_stale(price.as_of, provider)),
            is_marketplace=kind == Provider.Kind.MARKETPLACE))
    for choice in choices:  # worded once here, then cached with them
        _ = choice.label, choice.note
    return sorted(choices, key=lambda c: (
        c.gpu_name, c.provider_label, c.usd_per_hour is None, c.usd_per_hour or 0.0, c.name))


def gpu_choices(choices: list[InstanceChoice]) -> list[GpuChoice]:
    """The GPUs that have instance types, by name, each with its cheapest $/GPU-hour."""
    by_gpu: dict[str, list[InstanceChoice]] = {}
    for choice in choices:
        by_gpu.setdefault(choice.gpu, []).append(choice)
    gpus = []
    for slug, mine in by_gpu.items():
        rates = {market: [c.usd_per_hour / c.gpu_count for c in mine
                          if c.usd_per_hour is not None and c.is_marketplace == market]
                 for market in (False, True)}
        gpus.append(GpuChoice(slug, mine[0].gpu_name, len(mine),
                              min(rates[False]) if rates[False] else None,
                              min(rates[True]) if rates[True] else None))
    return sorted(gpus, key=lambda g: g.name)
