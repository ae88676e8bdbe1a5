"""The prices explorer: server-side sort on every column, page sizes, filters in the URL, the
column picker remembered per user, CSV and XLSX of the filtered sorted view, and the catalog's
cheapest offer per cloud."""

import csv
import io
import re
from datetime import date

import pytest
from django.contrib.auth.models import User
from django.test import Client
from openpyxl import load_workbook

from pricing import explorer
from pricing.models import ExplorerColumns, PriceSource
from tests.clients import signed_in

pytestmark = pytest.mark.django_db
PRICES = "/prices/"


def _per_gpu(html: str) -> list[float]:
    return [float(v) for v in re.findall(r'data-usd-per-gpu-hour="([^"]+)"', html)]


def _headers(html: str) -> list[str]:
    head = html[html.index('<table id="price-table"'):html.index("</thead>")]
    return re.findall(r'data-sort-key="([a-z_]+)"', head)


def test_default_order_is_cheapest_gpu_hour_first_across_pages(
    client: Client, catalog: date
) -> None:
    first = client.get(PRICES, {"per_page": 25})
    assert first.status_code == 200
    values = _per_gpu(first.content.decode())
    assert len(values) == 25 and values == sorted(values)
    second = _per_gpu(client.get(PRICES, {"per_page": 25, "page": 2}).content.decode())
    assert len(second) == 25 and second == sorted(second) and values[-1] <= second[0]
    assert 'aria-sort="ascending"' in first.content.decode()
    assert "$/GPU-hour, lowest first" in first.content.decode()


def test_every_column_sorts_both_ways_keeping_the_filters(client: Client, catalog: date) -> None:
    for key in explorer.COLUMN_KEYS:
        for sort in (key, f"-{key}"):
            response = client.get(PRICES, {"provider": "gcp", "sort": sort, "per_page": 50})
            assert response.status_code == 200, sort
            page = response.content.decode()
            state = "descending" if sort.startswith("-") else "ascending"
            if key in explorer.DEFAULT_COLUMNS:
                assert f'aria-sort="{state}"' in page, sort
            rows = response.context["rows"]
            assert {r.price.instance_type.provider.slug for r in rows} == {"gcp"}
    descending = _per_gpu(client.get(PRICES, {"sort": "-usd_per_gpu_hour"}).content.decode())
    assert descending == sorted(descending, reverse=True)
    # Header links keep the filters and go back to page 1.
    page = client.get(PRICES, {"provider": "aws", "page": 3}).content.decode()
    assert 'href="?provider=aws&amp;sort=-usd_per_gpu_hour"' in page
    assert 'href="?provider=aws&amp;sort=as_of"' in page


def test_sorting_by_discount_and_date_orders_what_the_page_shows(
    client: Client, catalog: date
) -> None:
    rows = client.get(PRICES, {"provider": "aws", "sort": "discount_pct",
                               "per_page": 500}).context["rows"]
    shown = [r.discount_pct for r in rows]
    present = [d for d in shown if d is not None]
    assert present == sorted(present) and shown[:len(present)] == present  # blanks last
    dates = [r.price.as_of for r in client.get(PRICES, {"sort": "-as_of"}).context["rows"]]
    assert dates == sorted(dates, reverse=True)
    names = [r.price.instance_type.provider.name
             for r in client.get(PRICES, {"sort": "provider", "per_page": 500}).context["rows"]]
    assert names == sorted(names)


def test_a_bad_sort_or_page_size_is_refused_naming_it(client: Client, catalog: date) -> None:
    bad_sort = client.get(PRICES, {"sort": "price; drop table"})
    assert bad_sort.status_code == 400 and "Sort:" in bad_sort.content.decode()
    bad_size = client.get(PRICES, {"per_page": "7"})
    assert bad_size.status_code == 400 and "Rows per page:" in bad_size.content.decode()
    assert len(bad_size.context["rows"]) == explorer.DEFAULT_PAGE_SIZE


def test_column_picker_is_remembered_per_user(client: Client, catalog: date) -> None:
    ada = User.objects.create_user("ada", password="pw-ada-123")
    bob = User.objects.create_user("bob", password="pw-bob-123")
    chosen = ["gpu", "usd_per_gpu_hour", "upfront_usd"]
    response = signed_in(ada).post("/prices/columns", {"columns": chosen,
                                                     "query": "provider=aws&sort=-as_of"})
    assert response.status_code == 302
    assert response["Location"] == "/prices/?provider=aws&sort=-as_of"
    assert ExplorerColumns.objects.get(owner=ada).columns == chosen
    page = signed_in(ada).get(PRICES).content.decode()
    assert _headers(page) == chosen
    assert len(_per_gpu(page)) == explorer.DEFAULT_PAGE_SIZE
    assert _headers(signed_in(bob).get(PRICES).content.decode()) == list(
        explorer.DEFAULT_COLUMNS)
    # Signed out, the choice lasts for the browser session.
    client.post("/prices/columns", {"columns": ["provider", "as_of"]})
    assert _headers(client.get(PRICES).content.decode()) == ["provider", "as_of"]
    assert client.post("/prices/columns", {"columns": ["nope"]}).status_code == 400


def test_csv_and_xlsx_are_the_filtered_sorted_view_formula_safe(
    client: Client, catalog: date
) -> None:
    PriceSource.objects.filter(pk=PriceSource.objects.first().pk).update(name="=HYPERLINK(1)")
    query = {"provider": "gcp", "sort": "-usd_per_gpu_hour"}
    page = client.get(PRICES, query)
    assert 'format=xlsx' in page.content.decode()
    response = client.get(PRICES, query | {"format": "csv"})
    rows = list(csv.DictReader(io.StringIO(response.content.decode("utf-8-sig"))))
    assert len(rows) == page.context["page"].paginator.count
    per_gpu = [float(r["Price (USD/GPU-hour)"]) for r in rows]
    assert per_gpu == sorted(per_gpu, reverse=True)
    assert all(len(r["Price (USD/GPU-hour)"].partition(".")[2]) <= 4 for r in rows)
    assert not any(r["Source"].startswith("=") for r in rows)
    workbook = load_workbook(io.BytesIO(client.get(PRICES, query | {"format": "xlsx"}).content))
    sheet = workbook["Prices"]
    header = [c.value for c in sheet[1]]
    assert header[:2] == ["Provider", "Region"] and "Price (USD/GPU-hour)" in header
    first = {h: c.value for h, c in zip(header, sheet[2], strict=True)}
    assert isinstance(first["As of"], date) and isinstance(first["Price (USD/GPU-hour)"], float)
    assert first["Price (USD/GPU-hour)"] == max(per_gpu)
    assert sheet.max_row == len(rows) + 1 and sheet.freeze_panes == "A2"
    sources = {sheet.cell(r, header.index("Source") + 1).value for r in range(2, sheet.max_row)}
    assert not any(str(s).startswith("=") for s in sources)


def test_catalog_and_compare_show_the_cheapest_offer_per_cloud(
    client: Client, catalog: date
) -> None:
    html = client.get("/gpus/").content.decode()
    start = html.index('id="gpu-h100-sxm5-80gb"')
    row = html[start:html.index("</tr>", start)]
    clouds = re.findall(r'<span class="per-cloud-provider">([^<]+)</span>', row)
    assert len(clouds) == len(set(clouds)) >= 3
    assert {"Amazon Web Services", "Google Cloud", "Microsoft Azure"} <= set(clouds)
    prices = [float(p.replace(",", "")) for p in
              re.findall(r'per-cloud-provider">[^<]+</span> \$([\d.,]+)/GPU-h', row)]
    assert prices == sorted(prices)
    # every line says its price's basis, source and as-of date, as the cheapest offer above it
    lines = re.findall(r'<li><span class="per-cloud-provider">.*?</li>', row, re.S)
    assert lines and all(re.search(r'per-cloud-source">(listed|derived|estimated), [^<]+, '
                                   r'as of \d{4}-\d\d-\d\d</span>', line) for line in lines)
    assert "/GPU-h ·" not in row  # one spelling: $/GPU-hour
    compare = client.get("/compare/", {"gpu": ["h100-sxm5-80gb", "a100-sxm4-80gb"]})
    assert "Cheapest on-demand per cloud" in compare.content.decode()
    assert compare.content.decode().count('class="per-cloud-provider"') >= 6


def test_history_region_lists_are_scoped_to_the_chosen_provider(catalog: date) -> None:
    from planner.purchase_mix.forms import RunForm, UploadForm

    unbound = RunForm()
    groups = [c for c in unbound.fields["region"].choices if isinstance(c[1], list)]
    assert {label for label, _ in groups} >= {"AWS", "Google Cloud", "Azure"}  # grouped
    aws = RunForm({"provider": "aws"})
    codes = [code for code, _ in aws.fields["region"].choices if code]
    assert "us-east-1" in codes and "us-central1" not in codes
    assert 'data-follows="id_provider"' in str(aws["region"])
    refused = UploadForm({"provider": "aws", "region": "us-central1", "fmt": "generic"})
    assert not refused.is_valid()
    assert "not a region of the chosen provider" in str(refused.errors["region"])
    assert RunForm(initial={"provider": "gcp"}).fields["region"].choices[1][0] != "us-east-1"
