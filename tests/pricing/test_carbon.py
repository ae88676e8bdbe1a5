"""The grid-carbon loader: idempotent, sourced and dated, one current factor per region, and
no factor where the data has none."""

from datetime import date
from io import StringIO
from pathlib import Path

import pandas as pd
import pytest
from django.core.management import call_command

from pricing.carbon.parse import carbon_tables, read_carbon
from pricing.carbon.selectors import carbon_factors, providers_with_carbon_data
from pricing.catalog_sources import DATA_DIR
from pricing.models import DatacenterPue, GridIntensity

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("loaded_catalog")]
CSV = DATA_DIR / "carbon" / "region_carbon.csv"


def _factor(provider: str, region: str, accounting: str = "location") -> dict:
    table = carbon_factors(accounting=accounting).set_index(["provider", "region"])
    return table.loc[(provider, region)].to_dict()


def test_second_load_changes_nothing() -> None:
    rows = list(GridIntensity.objects.order_by("pk").values())
    pues = list(DatacenterPue.objects.order_by("pk").values())
    out = StringIO()
    call_command("load_catalog", stdout=out)
    line = next(s for s in out.getvalue().splitlines() if s.startswith("grid carbon"))
    assert line.startswith("grid carbon intensities and PUEs: 0 created, 0 updated, 430 unchanged")
    assert list(GridIntensity.objects.order_by("pk").values()) == rows
    assert list(DatacenterPue.objects.order_by("pk").values()) == pues


def test_every_row_of_the_file_is_stored_with_its_year_source_and_date() -> None:
    assert GridIntensity.objects.count() + DatacenterPue.objects.count() == 430
    row = GridIntensity.objects.get(provider__slug="gcp", region_code="us-central1",
                                    metric="grid_carbon_intensity", year="2024")
    assert row.source.startswith("Google Cloud region carbon data")
    assert row.as_of == date(2025, 12, 3) and row.licence.startswith("Apache-2.0")
    assert row.source_commit == "49f3f26bfd682305e8d9b572fea1f811900421a9"


def test_latest_google_year_is_current_for_gcp_and_ccf_for_aws() -> None:
    frame = pd.read_csv(CSV)
    google_2024 = frame[(frame["region_code"] == "us-central1") & (frame["year"] == "2024")]
    gcp = _factor("gcp", "us-central1")
    assert gcp["g_co2e_per_kwh"] == pytest.approx(float(google_2024["value"].iloc[0]))
    assert (gcp["year"], gcp["source"], gcp["pue"]) == ("2024", "Google region-carbon-info", 1.11)
    aws = _factor("aws", "us-east-1")
    assert (aws["g_co2e_per_kwh"], aws["pue"], aws["pue_region"]) == (379.069, 1.135, "")
    assert aws["source"] == "Cloud Carbon Footprint" and aws["year"].startswith("2020")


def test_azure_names_match_the_price_catalog_and_market_basis_is_gcp_only() -> None:
    assert _factor("azure", "eastus")["g_co2e_per_kwh"] == pytest.approx(379.069)
    market = carbon_factors(accounting="market")
    assert set(market["provider"]) == {"gcp"}
    assert _factor("gcp", "us-central1", "market")["g_co2e_per_kwh"] == pytest.approx(215.2374)


def test_gpu_clouds_and_fallback_averages_get_no_factor() -> None:
    factors = carbon_factors(accounting="location")
    assert providers_with_carbon_data() == {"aws", "azure", "gcp"}
    assert not set(factors["provider"]) & {"lambda", "vast"}
    assert "unknown" not in set(factors["region"])
    assert not factors.duplicated(["provider", "region"]).any()


def test_bad_rows_are_refused_with_their_line(tmp_path: Path) -> None:
    frame = pd.read_csv(CSV, dtype=str, keep_default_na=False)
    bad = frame.copy()
    bad.loc[3, "value"] = "lots"
    with pytest.raises(ValueError, match="line 5: value must be a number"):
        carbon_tables(bad)
    other = frame.copy()
    other.loc[0, "provider"] = "Lambda"
    with pytest.raises(ValueError, match="line 2: unknown provider"):
        carbon_tables(other)
    path = tmp_path / "carbon.csv"
    frame.drop(columns=["source_commit"]).to_csv(path, index=False)
    with pytest.raises(ValueError, match="missing columns"):
        read_carbon(path)
