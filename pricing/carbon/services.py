"""Load the shipped grid-intensity and PUE table (pricing/data/carbon) into the catalog.

Upserts by natural key in one transaction, so a second run changes nothing; rows that left the
file stay as history (not current).
"""

from pathlib import Path
from typing import Any

import pandas as pd
from django.db import transaction

from pricing.carbon.parse import read_carbon
from pricing.models import DatacenterPue, GridIntensity
from pricing.services import ImportSummary, provider_get_or_create

CARBON_FILE = Path("carbon") / "region_carbon.csv"
_INTENSITY_KEY = ("region_code", "metric", "source", "year")


def _upsert(model: Any, key: dict[str, Any], values: dict[str, Any],
            summary: ImportSummary) -> None:
    obj = model.objects.filter(**key).first()
    if obj is None:
        model.objects.create(**key, **values)
        summary.created += 1
        return
    changed = [name for name, value in values.items() if getattr(obj, name) != value]
    if not changed:
        summary.unchanged += 1
        return
    for name in changed:
        setattr(obj, name, values[name])
    obj.save(update_fields=changed)
    summary.updated += 1


def _records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """Rows as dicts with NaN as None (the model's nullable fields)."""
    return [{k: (None if isinstance(v, float) and v != v else v) for k, v in row.items()}
            for row in frame.to_dict("records")]


def _load_intensities(frame: pd.DataFrame, summary: ImportSummary) -> None:
    kept: set[int] = set()
    for row in _records(frame):
        provider = provider_get_or_create(slug=row.pop("provider"))
        key = {"provider": provider, **{k: row.pop(k) for k in _INTENSITY_KEY}}
        row["data_year"] = None if row["data_year"] is None else int(row["data_year"])
        _upsert(GridIntensity, key, row, summary)
        kept.add(GridIntensity.objects.values_list("id", flat=True).get(**key))
    stale = GridIntensity.objects.exclude(id__in=kept).filter(is_current=True)
    summary.updated += stale.update(is_current=False)


def _load_pues(frame: pd.DataFrame, summary: ImportSummary) -> None:
    for row in _records(frame):
        provider = provider_get_or_create(slug=row.pop("provider"))
        _upsert(DatacenterPue, {"provider": provider, "region_code": row.pop("region_code")},
                row, summary)


def carbon_load(*, data_dir: Path) -> ImportSummary:
    """Grid intensities and PUEs from data_dir/carbon/region_carbon.csv, in one transaction."""
    tables = read_carbon(data_dir / CARBON_FILE)
    summary = ImportSummary()
    summary.add_skipped(tables.skipped)
    with transaction.atomic():
        _load_intensities(tables.intensities, summary)
        _load_pues(tables.pues, summary)
    return summary
