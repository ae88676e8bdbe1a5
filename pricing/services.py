"""Writes to the catalog and price tables. Parsing lives in importers/, naming in canonical.py."""

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal
from pathlib import Path
from typing import Any

import pandas as pd
from django.db import DataError, IntegrityError, transaction
from django.utils import timezone
from django.utils.text import slugify

from planner.core.providers import GCP, PROVIDERS_BY_CODE
from planner.core.purchase_options import ON_DEMAND, PAY_AS_YOU_GO
from pricing.canonical import node_fabric
from pricing.catalog_sources import DISCOUNT_LEVELS_SOURCE, SNAPSHOTS, SnapshotSource
from pricing.importers.catalog_check import CATALOG_COLUMNS, catalog_errors
from pricing.importers.common import ParsedPrices, PriceFileError, PriceFileErrors
from pricing.importers.levels import derive_prices, read_levels
from pricing.importers.registry import parse_file
from pricing.importers.sanity import check_prices
from pricing.models import (
    Accelerator,
    InstanceType,
    Price,
    PriceSource,
    Provider,
    Region,
)

_GPU_FIELDS = {
    "architecture": "architecture",
    "year": "year",
    "memory_gb": "memory_gb",
    "memory_type": "memory_type",
    "memory_bandwidth_gbps": "memory_bandwidth_gbps",
    "fp32_tflops": "fp32_tflops",
    "tf32_tflops_dense": "tf32_tflops_dense",
    "fp16_tflops_dense": "fp16_tflops_dense",
    "bf16_tflops_dense": "bf16_tflops_dense",
    "fp8_tflops_dense": "fp8_tflops_dense",
    "int8_tops_dense": "int8_tops_dense",
    "tensor_cores": "tensor_cores",
    "nvlink_gen": "interconnect",
    "nvlink_bandwidth_gbps": "interconnect_bandwidth_gbps",
    "pcie_gen": "pcie_gen",
    "tdp_watts": "tdp_watts",
    "source_url": "source_url",
    "notes": "notes",
}
_INT_FIELDS = {"year", "tensor_cores", "pcie_gen", "tdp_watts"}
_TEXT_FIELDS = {"architecture", "memory_type", "interconnect", "source_url", "notes"}


@dataclass
class ImportSummary:
    """Counts of one import; `skipped` maps a reason to a row count."""

    created: int = 0
    updated: int = 0
    unchanged: int = 0
    skipped: dict[str, int] = field(default_factory=dict)

    def add_skipped(self, reasons: dict[str, int] | Any) -> None:
        for reason, count in dict(reasons).items():
            self.skipped[reason] = self.skipped.get(reason, 0) + count


def _gpu_value(model_field: str, value: Any) -> Any:
    if model_field in _TEXT_FIELDS:
        return "" if value is None or (isinstance(value, float) and math.isnan(value)) else value
    if value is None or (isinstance(value, float) and math.isnan(value)) or value == "":
        return None
    return int(value) if model_field in _INT_FIELDS else float(value)


def accelerators_load(*, path: Path) -> ImportSummary:
    """Upsert every row of gpus.csv by slug; a second run changes nothing."""
    frame = pd.read_csv(path, dtype={"nvlink_gen": str, "notes": str, "source_url": str})
    summary = ImportSummary()
    for row in frame.to_dict("records"):
        slug = slugify(f"{row['model']} {row['variant']}")
        values = {target: _gpu_value(target, row[col]) for col, target in _GPU_FIELDS.items()}
        values.update(vendor=row["vendor"], model=row["model"], variant=row["variant"])
        _upsert(Accelerator, {"slug": slug}, values, summary)
    return summary


def _upsert(model: Any, key: dict[str, Any], values: dict[str, Any], summary: ImportSummary) -> Any:
    obj = model.objects.filter(**key).first()
    if obj is None:
        summary.created += 1
        return model.objects.create(**key, **values)
    changed = [name for name, value in values.items() if getattr(obj, name) != value]
    if not changed:
        summary.unchanged += 1
        return obj
    for name in changed:
        setattr(obj, name, values[name])
    obj.save(update_fields=changed)
    summary.updated += 1
    return obj


def price_source_upsert(*, snapshot: SnapshotSource) -> PriceSource:
    values = {
        "name": snapshot.name,
        "url": snapshot.url,
        "licence": snapshot.licence,
        "snapshot_date": snapshot.snapshot_date,
        "notes": snapshot.notes,
    }
    return _upsert(PriceSource, {"slug": snapshot.slug}, values, ImportSummary())


def provider_get_or_create(*, slug: str) -> Provider:
    """The provider row of `slug`, created with its name and kind from the provider table."""
    spec = PROVIDERS_BY_CODE.get(slug)
    name, kind = (spec.name, spec.kind) if spec else (slug, Provider.Kind.GPU_CLOUD)
    provider, _ = Provider.objects.get_or_create(slug=slug, defaults={"name": name, "kind": kind})
    return provider


def _providers(slugs: Iterable[str]) -> dict[str, Provider]:
    return {slug: provider_get_or_create(slug=slug) for slug in set(slugs)}


def _regions(frame: pd.DataFrame, providers: dict[str, Provider]) -> dict[tuple[str, str], Region]:
    pairs = frame[["provider", "region"]].drop_duplicates().itertuples(index=False)
    result = {}
    for provider, code in pairs:
        result[(provider, code)], _ = Region.objects.get_or_create(
            provider=providers[provider], code=code
        )
    return result


def _new_instance(
    row: dict[str, Any], provider: Provider, gpus: dict[str, Accelerator]
) -> InstanceType:
    gpu = gpus[row["accelerator"]]
    fabric = node_fabric(
        row["instance_type"],
        gpu.slug,
        row["gpu_count"],
        gpu.interconnect_bandwidth_gbps,
        gpu.pcie_gen,
    )
    return InstanceType.objects.create(
        provider=provider,
        name=row["instance_type"],
        accelerator=gpu,
        provider_accelerator_name=row["provider_accelerator_name"],
        gpu_count=row["gpu_count"],
        vcpus=None if math.isnan(row["vcpus"]) else int(row["vcpus"]),
        memory_gib=None if math.isnan(row["memory_gib"]) else row["memory_gib"],
        intra_node_interconnect=fabric.interconnect,
        intra_node_bandwidth_gbps=fabric.bandwidth_gbps,
        network_gbps=fabric.network_gbps,
        host_machine_type=row["host_machine_type"],
    )


def _instances(
    frame: pd.DataFrame, providers: dict[str, Provider], summary: ImportSummary
) -> dict[tuple[str, str], InstanceType]:
    """Existing instance types by (provider, name); new ones created from the first row seen."""
    gpus = {a.slug: a for a in Accelerator.objects.all()}
    existing = {
        (i.provider.slug, i.name): i
        for i in InstanceType.objects.filter(provider__slug__in=list(providers)).select_related(
            "provider"
        )
    }
    firsts = frame.drop_duplicates(["provider", "instance_type"]).to_dict("records")
    for row in firsts:
        key = (row["provider"], row["instance_type"])
        if key in existing:
            continue
        if row["accelerator"] is None or row["accelerator"] not in gpus:
            summary.add_skipped({f"instance type not in catalog: {row['instance_type']}": 1})
            continue
        existing[key] = _new_instance(row, providers[row["provider"]], gpus)
    return existing


def _price_key(row: dict[str, Any], source_id: int) -> tuple:
    return (row["instance_id"], row["region_id"], row["purchase_option"],
            row["payment_option"], row["offering_class"], source_id, row["as_of"])


def _stored_key(price: Price) -> tuple:
    return (price.instance_type_id, price.region_id, price.purchase_option, price.payment_option,
            price.offering_class, price.source_id, price.as_of)


def _money(value: Any, places: int) -> Decimal | None:
    """A Decimal rounded to `places`, or None for a missing (NaN) value."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    return Decimal(str(round(float(value), places)))


# Columns a re-import may change on an existing price row.
_PRICE_VALUES = ("usd_per_hour", "upfront_usd", "recurring_usd_per_hour", "zone",
                 "zone_low_usd_per_hour", "zone_high_usd_per_hour", "is_derived",
                 "derivation_basis", "is_estimated")


def _price_values(row: dict[str, Any]) -> dict[str, Any]:
    return {
        "usd_per_hour": _money(row["usd_per_hour"], 6),
        "upfront_usd": _money(row["upfront_usd"], 2),
        "recurring_usd_per_hour": _money(row["recurring_usd_per_hour"], 6),
        "zone": row["zone"],
        "zone_low_usd_per_hour": _money(row["zone_low_usd_per_hour"], 6),
        "zone_high_usd_per_hour": _money(row["zone_high_usd_per_hour"], 6),
        "is_derived": bool(row["is_derived"]),
        "derivation_basis": row["derivation_basis"],
        "is_estimated": bool(row["is_estimated"]),
    }


def _write_prices(
    rows: list[dict[str, Any]], source: PriceSource, summary: ImportSummary
) -> set[tuple[int, int, str]]:
    existing = {_stored_key(p): p for p in Price.objects.filter(source=source)}
    new, changed = [], []
    for row in rows:
        key = _price_key(row, source.id)
        values = _price_values(row)
        price = existing.get(key)
        if price is None:
            new.append(Price(
                instance_type_id=key[0], region_id=key[1], purchase_option=key[2],
                payment_option=key[3], offering_class=key[4], source=source, as_of=key[6],
                **values,
            ))
        elif any(getattr(price, name) != value for name, value in values.items()):
            for name, value in values.items():
                setattr(price, name, value)
            changed.append(price)
        else:
            summary.unchanged += 1
    Price.objects.bulk_create(new, batch_size=1000)
    Price.objects.bulk_update(changed, list(_PRICE_VALUES), batch_size=1000)
    summary.created += len(new)
    summary.updated += len(changed)
    return {(r["instance_id"], r["region_id"], r["purchase_option"]) for r in rows}


def prices_refresh_current(*, keys: set[tuple[int, int, str]] | None = None) -> int:
    """Mark the current price of each (instance type, region, option, payment option, offering
    class); others become history.

    A listed price beats a derived one: where any payment option of an (instance type, region,
    option) is listed, its derived prices are history. Among the same kind the newest as-of
    date wins. Returns how many rows changed flag.
    """
    prices = Price.objects.only(
        "id", "instance_type_id", "region_id", "purchase_option", "payment_option",
        "offering_class", "as_of", "is_derived", "is_current", "source_id",
    )
    if keys is not None:
        instance_ids = {k[0] for k in keys}
        prices = prices.filter(instance_type_id__in=instance_ids)
    rows = list(prices)
    listed = {(p.instance_type_id, p.region_id, p.purchase_option)
              for p in rows if not p.is_derived}
    best: dict[tuple[int, int, str, str, str], Price] = {}
    for price in rows:
        if price.is_derived and (
                price.instance_type_id, price.region_id, price.purchase_option) in listed:
            continue
        key = (price.instance_type_id, price.region_id, price.purchase_option,
               price.payment_option, price.offering_class)
        rank = (price.as_of, price.source_id)
        held = best.get(key)
        if held is None or rank > (held.as_of, held.source_id):
            best[key] = price
    current_ids = {p.id for p in best.values()}
    flips = [p for p in rows if p.is_current != (p.id in current_ids)]
    for price in flips:
        price.is_current = price.id in current_ids
    Price.objects.bulk_update(flips, ["is_current"], batch_size=1000)
    return len(flips)


def _resolved_rows(
    frame: pd.DataFrame,
    instances: dict[tuple[str, str], InstanceType],
    regions: dict[tuple[str, str], Region],
    summary: ImportSummary,
) -> list[dict[str, Any]]:
    rows = []
    for row in frame.to_dict("records"):
        instance = instances.get((row["provider"], row["instance_type"]))
        if instance is None:
            continue
        if row["accelerator"] and instance.accelerator.slug != row["accelerator"]:
            summary.add_skipped({f"accelerator conflicts with catalog: {row['instance_type']}": 1})
            continue
        row.update(instance_id=instance.id, region_id=regions[(row["provider"], row["region"])].id)
        rows.append(row)
    return rows


def _without_free_pay_as_you_go(frame: pd.DataFrame, summary: ImportSummary) -> pd.DataFrame:
    """An on-demand or spot price of 0 is not an offer (an empty cell written as 0, or a free
    tier): such rows are counted, not stored. A commitment may be 0 per hour when it is paid
    all upfront."""
    if frame.empty:
        return frame
    free = frame["purchase_option"].isin(PAY_AS_YOU_GO) & (frame["usd_per_hour"] <= 0)
    if free.any():
        summary.add_skipped({"zero on-demand or spot price": int(free.sum())})
    return frame[~free].reset_index(drop=True)


def _with_gpu_counts(parsed: ParsedPrices) -> ParsedPrices:
    """GPU counts the file leaves to the catalog (0), filled from it: the price checks are per
    GPU-hour."""
    frame = parsed.frame
    if frame.empty or not (frame["gpu_count"] == 0).any():
        return parsed
    known = {(provider, name): gpus for provider, name, gpus in InstanceType.objects.filter(
        provider__slug__in=list(frame["provider"].unique()),
        name__in=list(frame.loc[frame["gpu_count"] == 0, "instance_type"].unique()),
    ).values_list("provider__slug", "name", "gpu_count")}
    filled = [int(gpus) or known.get((provider, name), 0) for provider, name, gpus in zip(
        frame["provider"], frame["instance_type"], frame["gpu_count"], strict=True)]
    return ParsedPrices(frame.assign(gpu_count=filled), parsed.skipped)


def prices_import(
    *, parsed: ParsedPrices, snapshot: SnapshotSource, dry_run: bool = False
) -> ImportSummary:
    """Check (importers/sanity.py: raises PriceFileErrors) and save a parsed price file in one
    transaction; re-importing the same file changes nothing.

    With `dry_run` the same work is done and rolled back, so the counts are exact.
    """
    summary = ImportSummary()
    summary.add_skipped(parsed.skipped)
    free_dropped = ParsedPrices(_without_free_pay_as_you_go(parsed.frame, summary), {})
    counted = _with_gpu_counts(free_dropped)
    errors = catalog_errors(counted.frame, _current_prices(), file=snapshot.file)
    try:
        checked = check_prices(counted, file=snapshot.file, today=timezone.now().date())
    except PriceFileErrors as refused:  # the file's own errors and the catalog's, together
        errors = refused.errors + errors
    if errors:
        raise PriceFileErrors(sorted(errors, key=lambda e: (e.line or 0, e.field)))
    summary.add_skipped(checked.skipped)
    frame = checked.frame
    try:
        _write_parsed(frame, snapshot, summary, dry_run=dry_run)
    except (IntegrityError, DataError) as exc:  # a check above missed something: no traceback
        raise PriceFileErrors([PriceFileError(
            snapshot.file, None, "(file)",
            f"the database refused the prices ({exc.__class__.__name__}: "
            f"{str(exc).splitlines()[0][:200]}); nothing was imported")]) from None
    return summary


def _write_parsed(frame: pd.DataFrame, snapshot: SnapshotSource, summary: ImportSummary, *,
                  dry_run: bool) -> None:
    with transaction.atomic():
        if not frame.empty:
            source = price_source_upsert(snapshot=snapshot)
            providers = _providers(frame["provider"].unique())
            regions = _regions(frame, providers)
            instances = _instances(frame, providers, summary)
            rows = _resolved_rows(frame, instances, regions, summary)
            keys = _write_prices(rows, source, summary)
            prices_refresh_current(keys=keys)
        if dry_run:
            transaction.set_rollback(True)


def _current_prices() -> pd.DataFrame:
    """The catalog's current priced rows (CATALOG_COLUMNS) an import is checked against."""
    values = Price.objects.filter(is_current=True, usd_per_hour__gt=0).values_list(
        "instance_type__provider__slug", "instance_type__name", "region__code",
        "purchase_option", "instance_type__accelerator__slug", "instance_type__gpu_count",
        "usd_per_hour", "as_of", "source__name")
    frame = pd.DataFrame(list(values), columns=list(CATALOG_COLUMNS))
    return frame.assign(usd_per_hour=frame["usd_per_hour"].astype(float))


def _current_on_demand() -> pd.DataFrame:
    frame = _current_prices()
    columns = ["provider", "instance_type", "accelerator", "gpu_count", "region", "usd_per_hour",
               "as_of"]
    return frame.loc[frame["purchase_option"] == ON_DEMAND, columns].reset_index(drop=True)


def _listed_keys() -> set[tuple]:
    return set(
        Price.objects.filter(is_derived=False).values_list(
            "instance_type__provider__slug",
            "instance_type__name",
            "region__code",
            "purchase_option",
        )
    )


def prices_derive_commitments(*, levels_path: Path, snapshot: SnapshotSource) -> ImportSummary:
    """Fill unlisted reserved/committed prices from published discount levels, marked derived."""
    parsed = derive_prices(read_levels(levels_path), _current_on_demand(), _listed_keys())
    return prices_import(parsed=parsed, snapshot=snapshot)


@dataclass
class CatalogReport:
    accelerators: ImportSummary
    snapshots: dict[str, ImportSummary]
    derived: ImportSummary


def _cyclenerd_offered(parsed: ParsedPrices, offered: set[tuple[str, str]]) -> ParsedPrices:
    """Keep Cyclenerd rows only where the machine type is offered (it prices every region)."""
    frame = parsed.frame
    mask = [
        (i, r) in offered for i, r in zip(frame["instance_type"], frame["region"], strict=False)
    ]
    dropped = int(len(mask) - sum(mask))
    skipped = dict(parsed.skipped)
    if dropped:
        skipped["machine type not offered in region"] = dropped
    return ParsedPrices(frame[mask].reset_index(drop=True), skipped)


def _without(parsed: ParsedPrices, accelerators: frozenset[str]) -> ParsedPrices:
    frame = parsed.frame
    mask = ~frame["accelerator"].isin(accelerators)
    skipped = dict(parsed.skipped)
    if (~mask).sum():
        skipped["known-defective rows (see SOURCES.md)"] = int((~mask).sum())
    return ParsedPrices(frame[mask].reset_index(drop=True), skipped)


def catalog_load(*, data_dir: Path) -> CatalogReport:
    """Load gpus.csv and every shipped price snapshot, then derive unlisted commitments."""
    accelerators = accelerators_load(path=data_dir / "gpus.csv")
    snapshots: dict[str, ImportSummary] = {}
    offered: set[tuple[str, str]] = set()
    for snap in SNAPSHOTS:
        parsed = parse_file(
            snap.fmt,
            data_dir / "prices" / snap.file,
            as_of=snap.snapshot_date,
            provider=snap.provider,
        )
        if snap.provider == GCP and snap.fmt == "skypilot":
            hosts = parsed.frame
            offered = set(zip(hosts["host_machine_type"], hosts["region"], strict=False))
        if snap.fmt == "cyclenerd":
            parsed = _cyclenerd_offered(parsed, offered)
        parsed = _without(parsed, snap.excluded_accelerators)
        snapshots[snap.slug] = prices_import(parsed=parsed, snapshot=snap)
    derived = prices_derive_commitments(
        levels_path=data_dir / "prices" / DISCOUNT_LEVELS_SOURCE.file,
        snapshot=DISCOUNT_LEVELS_SOURCE,
    )
    return CatalogReport(accelerators, snapshots, derived)


def prices_import_file(
    *, fmt: str, path: Path, as_of: date | None, provider: str | None, dry_run: bool
) -> ImportSummary:
    """Parse a user-supplied price file and save it under a source named after the file."""
    parsed = parse_file(fmt, path, as_of=as_of, provider=provider)
    frame = parsed.frame
    snapshot_date = as_of or (max(frame["as_of"]) if not frame.empty else timezone.now().date())
    snapshot = SnapshotSource(
        slug=slugify(f"import-{fmt}-{path.stem}-{snapshot_date}")[:96],
        file=path.name,
        fmt=fmt,
        provider=provider or "",
        snapshot_date=snapshot_date,
        name=f"{path.name} ({fmt} import)",
        url="",
        licence="As supplied by the importer",
    )
    return prices_import(parsed=parsed, snapshot=snapshot, dry_run=dry_run)
