import json
import re
from datetime import date

import pytest
from django.test import Client
from django.urls import reverse

from pricing.models import Accelerator, InstanceType, Price, PriceSource, Provider, Region


def _html(response: object) -> str:
    return response.content.decode()  # type: ignore[attr-defined]


def _row(html: str, row_id: str) -> str:
    """The <tr id=row_id> element's HTML."""
    start = html.index(f'id="{row_id}"')
    return html[start:html.index("</tr>", start)]


def _figure(html: str, element_id: str) -> dict:
    pattern = rf'<script id="{element_id}" type="application/json">(.*?)</script>'
    match = re.search(pattern, html, re.S)
    assert match, f"no json_script {element_id}"
    return json.loads(match.group(1))


# --- catalog ----------------------------------------------------------------------------------


def test_catalog_lists_every_gpu_with_specs(client: Client, catalog: date) -> None:
    response = client.get(reverse("pricing:catalog"))
    assert response.status_code == 200
    assert "pricing/catalog.html" in [t.name for t in response.templates]
    assert len(response.context["rows"]) == Accelerator.objects.count() == 30
    html = _html(response)
    assert "80 GB" in _row(html, "gpu-a100-sxm4-80gb")
    h100 = _row(html, "gpu-h100-sxm5-80gb")
    assert "989.5" in h100
    assert "3,350 GB/s" in h100
    assert "700 W" in h100
    assert "NVLink 4" in h100


def test_catalog_shows_the_a10g_published_specs_and_why_its_tensor_cells_are_blank(
    client: Client, catalog: date
) -> None:
    html = _html(client.get(reverse("pricing:catalog")))
    a10g = _row(html, "gpu-a10g-pcie-24gb")
    for shown in ("24 GB", "GDDR6", "600 GB/s", "31.52", "Gen 4", "300 W"):
        assert shown in a10g
    assert "Tensor-core rates (TF32, FP16, BF16, INT8) not published" in a10g
    assert "FP32 31.52 TFLOPS is the CUDA-core rate" in a10g
    assert a10g.count('title="not published by the vendor, or not verified">—') == 5
    assert "no FP16 peak published" in a10g
    # a GPU with published tensor rates gets no such note
    assert "not published;" not in _row(html, "gpu-a10-pcie-24gb")
    side_by_side = _html(client.get(reverse("pricing:compare"),
                                    {"gpu": ["a10g-pcie-24gb", "a10-pcie-24gb"]}))
    assert side_by_side.count("Tensor-core rates (TF32, FP16, BF16, INT8) not published") == 1
    assert "600 GB/s" in side_by_side and "31.52 TFLOPS" in side_by_side


def test_catalog_shows_cheapest_on_demand_with_provider_source_and_as_of(
    client: Client, catalog: date
) -> None:
    response = client.get(reverse("pricing:catalog"))
    row = next(r for r in response.context["rows"] if r.gpu.slug == "h100-sxm5-80gb")
    offer = row.cheapest
    assert offer.purchase_option == "on_demand" and offer.is_current
    cell = _row(_html(response), "gpu-h100-sxm5-80gb")
    assert "/GPU-hour" in cell
    assert offer.region.code in cell
    assert offer.instance_type.name in cell
    assert offer.source.name in cell
    assert offer.as_of.isoformat() in cell
    # listed, derived or estimated, as every price on the prices page says
    assert f'<span class="tag {offer.basis}"' in cell


def test_catalog_watts_have_thousands_separators(client: Client, catalog: date) -> None:
    html = _html(client.get(reverse("pricing:catalog")))
    assert "1,000 W" in _row(html, "gpu-b200-hgx-180gb")


@pytest.mark.parametrize(
    ("query", "check"),
    [
        ({"vendor": "AMD"}, lambda gpu: gpu.vendor == "AMD"),
        ({"min_memory_gb": "100"}, lambda gpu: gpu.memory_gb >= 100),
        ({"precision": "fp8"}, lambda gpu: gpu.fp8_tflops_dense is not None),
    ],
)
def test_catalog_filters_filter(client: Client, catalog: date, query: dict, check: object) -> None:
    response = client.get(reverse("pricing:catalog"), query)
    rows = response.context["rows"]
    assert response.status_code == 200
    assert 0 < len(rows) < Accelerator.objects.count()
    assert all(check(r.gpu) for r in rows)  # type: ignore[operator]


def test_catalog_rejects_a_bad_filter_with_a_message(client: Client, catalog: date) -> None:
    response = client.get(reverse("pricing:catalog"), {"min_memory_gb": "lots"})
    assert response.status_code == 400
    assert "Min memory (GB): Enter a number." in _html(response)
    assert len(response.context["rows"]) == Accelerator.objects.count()  # ignored, not a 500


def test_catalog_sorts_server_side(client: Client, catalog: date) -> None:
    response = client.get(reverse("pricing:catalog"), {"sort": "-memory_gb"})
    memories = [r.gpu.memory_gb for r in response.context["rows"]]
    assert memories == sorted(memories, reverse=True)
    assert response.context["rows"][0].gpu.slug == "instinct-mi355x-oam-288gb"  # 288 GB
    assert "?sort=memory_gb" in _html(response)  # clicking again flips the order


def test_catalog_rejects_unknown_sort(client: Client, catalog: date) -> None:
    response = client.get(reverse("pricing:catalog"), {"sort": "price; drop table"})
    assert response.status_code == 400


def test_catalog_charts_are_serialized_for_plotly(client: Client, catalog: date) -> None:
    html = _html(client.get(reverse("pricing:catalog"), {"precision": "fp8"}))
    scatter = _figure(html, "chart-scatter")
    assert scatter["data"][0]["type"] == "scatter"
    assert "H100 SXM5-80GB" in scatter["data"][0]["text"]
    assert "FP8 (TFLOPS, log scale)" in scatter["layout"]["yaxis"]["title"]["text"]
    per_dollar = _figure(html, "chart-per-dollar")
    assert per_dollar["data"][0]["type"] == "bar"
    assert "$/GPU-hour" in per_dollar["layout"]["xaxis"]["title"]["text"]


def test_catalog_loads_only_local_scripts(client: Client, catalog: date) -> None:
    html = _html(client.get(reverse("pricing:catalog")))
    assert "/static/vendor/plotly-7.1.0.min.js" in html
    assert "/static/js/catalog.js" in html
    assert not re.search(r'(src|href)="(https?:)?//', html)


# --- compare ----------------------------------------------------------------------------------


@pytest.mark.parametrize("count", [2, 4])
def test_compare_shows_two_to_four_gpus(client: Client, catalog: date, count: int) -> None:
    slugs = ["h100-sxm5-80gb", "a100-sxm4-80gb", "l4-pcie-24gb", "instinct-mi300x-oam-192gb"]
    slugs = slugs[:count]
    response = client.get(reverse("pricing:compare"), {"gpu": slugs})
    assert response.status_code == 200
    assert [r.gpu.slug for r in response.context["rows"]] == slugs
    html = _html(response)
    assert "989.5 TFLOPS" in html
    chart = _figure(html, "chart-compare")
    assert len(chart["data"]) == count


def test_compare_says_as_the_catalog_does_each_cheapest_price_basis_and_size(
    client: Client, catalog: date
) -> None:
    response = client.get(reverse("pricing:compare"), {"gpu": ["b200-hgx-180gb", "h100-sxm5-80gb"]})
    html = _html(response)
    assert "1,000 W" in html
    for row in response.context["rows"]:
        offer = row.cheapest
        assert f'<span class="tag {offer.basis}"' in html
        gpus = f"({offer.instance_type.gpu_count} GPUs)"
        assert f"{offer.instance_type.name}</a>\n          {gpus}" in html


@pytest.mark.parametrize(
    "slugs",
    [
        ["h100-sxm5-80gb"],
        ["h100-sxm5-80gb", "a100-sxm4-80gb", "l4-pcie-24gb", "t4-pcie-16gb", "a10-pcie-24gb"],
        ["h100-sxm5-80gb", "h100-sxm5-80gb"],
    ],
)
def test_compare_rejects_fewer_than_two_or_more_than_four(
    client: Client, catalog: date, slugs: list[str]
) -> None:
    response = client.get(reverse("pricing:compare"), {"gpu": slugs})
    assert response.status_code == 400
    assert "Pick 2 to 4 different GPUs to compare" in _html(response)


def test_compare_rejects_unknown_gpu(client: Client, catalog: date) -> None:
    response = client.get(reverse("pricing:compare"), {"gpu": ["h100-sxm5-80gb", "tpu-v5"]})
    assert response.status_code == 400
    assert "tpu-v5" in _html(response)


# --- price explorer ---------------------------------------------------------------------------


def test_prices_show_current_only_by_default_paginated_by_100(
    client: Client, catalog: date
) -> None:
    response = client.get(reverse("pricing:prices"))
    assert response.status_code == 200
    page = response.context["page"]
    assert page.paginator.per_page == 100
    assert page.paginator.count == Price.objects.filter(is_current=True).count()
    assert len(response.context["rows"]) == 100
    assert all(r.price.is_current for r in response.context["rows"])
    second = client.get(reverse("pricing:prices"), {"page": 2})
    assert second.context["page"].number == 2
    assert "page=2" in _html(response)


def test_prices_history_toggle_adds_history_rows(client: Client, catalog: date) -> None:
    query = {"gpu": "a100-sxm4-40gb", "provider": "aws", "include_history": "on"}
    response = client.get(reverse("pricing:prices"), query)
    rows = response.context["rows"]
    assert any(not r.price.is_current for r in rows)
    assert 'class="history' in _html(response)


def test_prices_filters_filter(client: Client, catalog: date) -> None:
    query = {"gpu": "h100-sxm5-80gb", "provider": "gcp", "purchase_option": "committed_1y"}
    response = client.get(reverse("pricing:prices"), query)
    rows = response.context["rows"]
    assert rows
    for row in rows:
        assert row.price.instance_type.accelerator.slug == "h100-sxm5-80gb"
        assert row.price.instance_type.provider.slug == "gcp"
        assert row.price.purchase_option == "committed_1y"


def test_prices_rejects_unknown_filter_value_without_500(client: Client, catalog: date) -> None:
    response = client.get(reverse("pricing:prices"), {"purchase_option": "forever"})
    assert response.status_code == 400
    assert "Purchase option: Select a valid choice." in _html(response)


def test_prices_show_discount_vs_on_demand(client: Client, catalog: date) -> None:
    query = {"provider": "aws", "purchase_option": "reserved_1y", "gpu": "a100-sxm4-40gb"}
    response = client.get(reverse("pricing:prices"), query)
    rows = response.context["rows"]
    assert rows and all(r.discount_pct is not None for r in rows)
    assert "% off" in _html(response)


def test_stale_warning_for_the_skypilot_aws_snapshot(client: Client, catalog: date) -> None:
    query = {"provider": "aws", "purchase_option": "spot"}
    response = client.get(reverse("pricing:prices"), query)
    html = _html(response)
    banner = html[html.index('id="stale-banner"'):html.index("</div>", html.index("stale-banner"))]
    assert "SkyPilot catalog v7, AWS vms.csv" in banner
    assert "2025-06-01" in banner
    assert "Cyclenerd" not in banner
    rows = response.context["rows"]
    assert rows and all(r.price.source.slug == "skypilot-aws-v7" for r in rows)
    table = html[html.index('id="price-table"'):html.index('id="sources"')]
    assert table.count('<span class="stale"') == len(rows)
    assert html.count('class=" is-stale"') == len(rows)


def test_no_stale_warning_for_fresh_rows(client: Client, catalog: date) -> None:
    query = {"provider": "gcp", "purchase_option": "committed_3y"}
    response = client.get(reverse("pricing:prices"), query)
    rows = response.context["rows"]
    assert rows and all(r.price.as_of >= date(2026, 7, 30) for r in rows)
    assert "is-stale" not in _html(response)


def test_no_banner_when_nothing_is_stale(client: Client, catalog: date, settings: object) -> None:
    settings.PRICE_STALE_DAYS = 10_000  # type: ignore[attr-defined]
    html = _html(client.get(reverse("pricing:prices")))
    assert "stale-banner" not in html
    assert "⚠ stale" not in html


def test_prices_list_every_source_with_date_and_licence(client: Client, catalog: date) -> None:
    response = client.get(reverse("pricing:prices"))
    html = _html(response)
    for source in PriceSource.objects.all():
        row = _row(html, f"source-{source.slug}")
        assert source.snapshot_date.isoformat() in row
        assert (source.licence or "not recorded") in row
    # counts of a thousand or more read with a separator, in the table and the stale banner
    big = next(s for s in response.context["sources"] if s.price_count >= 1000)
    shown = f"{big.price_count:,}"
    assert f'<td class="num">{shown}</td>' in _row(html, f"source-{big.source.slug}")
    stale = [s for s in response.context["sources"] if s.is_stale]
    assert [s.source.slug for s in stale] == ["skypilot-aws-v7"]
    assert f"{stale[0].price_count:,} prices</li>" in html
    assert "1 of 11 price sources are stale" in html
    assert "older than the newest price of the same provider" in _html(response).split(
        'id="stale-rule"', 1)[1].split("</p>", 1)[0]


def test_derived_prices_are_marked_with_their_basis(client: Client, catalog: date) -> None:
    derived = Price.objects.filter(is_derived=True, is_current=True).select_related(
        "instance_type__provider", "instance_type__accelerator"
    ).first()
    assert derived is not None
    query = {
        "gpu": derived.instance_type.accelerator.slug,
        "provider": derived.instance_type.provider.slug,
        "purchase_option": derived.purchase_option, "per_page": 500,
    }
    html = _html(client.get(reverse("pricing:prices"), query))
    assert 'class="tag derived"' in html
    assert derived.derivation_basis.split(":")[0] in html


# --- instance detail --------------------------------------------------------------------------


def test_instance_page_for_gcp_name_with_plus(client: Client, catalog: date) -> None:
    url = reverse("pricing:instance", args=["gcp", "n1-highmem-8+1xT4"])
    assert url == "/instances/gcp/n1-highmem-8+1xT4/"
    response = client.get(url)
    assert response.status_code == 200
    html = _html(response)
    specs = html[html.index('id="instance-specs"'):html.index("</dl>")]
    assert "T4 PCIe-16GB" in specs
    assert "8 vCPUs" in specs
    assert "52 GiB" in specs
    assert "n1-highmem-8" in specs
    assert response.context["rows"]


def test_instance_page_for_p4d(client: Client, catalog: date) -> None:
    response = client.get("/instances/aws/p4d.24xlarge/")
    assert response.status_code == 200
    html = _html(response)
    specs = html[html.index('id="instance-specs"'):html.index("</dl>")]
    for text in ["8 GPUs", "96 vCPUs", "1,152 GiB", "NVLink + NVSwitch", "600 GB/s per GPU",
                 "400 Gbit/s"]:
        assert text in specs
    rows = response.context["rows"]
    assert any(not r.price.is_current for r in rows)
    assert '<tr class="history' in html
    chart = _figure(html, "chart-instance")
    assert chart["layout"]["barmode"] == "group"
    assert {t["name"] for t in chart["data"]} >= {"On-demand"}


def test_unknown_instance_is_404(client: Client, catalog: date) -> None:
    assert client.get("/instances/aws/p99.huge/").status_code == 404


def test_instance_page_with_no_prices(client: Client, catalog: date) -> None:
    provider = Provider.objects.get(slug="aws")
    gpu = Accelerator.objects.get(slug="gaudi2-oam-96gb")
    InstanceType.objects.create(
        provider=provider, name="dl1.24xlarge", accelerator=gpu, provider_accelerator_name="Gaudi",
        gpu_count=8, intra_node_interconnect=InstanceType.Interconnect.PCIE,
    )
    response = client.get("/instances/aws/dl1.24xlarge/")
    assert response.status_code == 200
    assert "No prices loaded" in _html(response)


# --- admin and docs ---------------------------------------------------------------------------


@pytest.mark.parametrize("model", [Accelerator, Provider, Region, InstanceType, PriceSource, Price])
def test_admin_changelist_and_change_page_work(
    admin_client: Client, catalog: date, model: type
) -> None:
    meta = model._meta
    changelist = reverse(f"admin:{meta.app_label}_{meta.model_name}_changelist")
    assert admin_client.get(changelist).status_code == 200
    obj = model.objects.first()
    change = reverse(f"admin:{meta.app_label}_{meta.model_name}_change", args=[obj.pk])
    assert admin_client.get(change).status_code == 200


def test_api_docs_are_served_without_a_cdn(client: Client) -> None:
    html = _html(client.get("/api/docs"))
    assert "swagger-ui-bundle.js" in html
    assert "cdn" not in html.lower()


def _region_options(html: str) -> list[str]:
    select = html[html.index('id="id_region"'):]
    select = select[:select.index("</select>")]
    return [code for code in re.findall(r'<option value="([^"]*)"', select) if code]


def test_region_filter_lists_only_the_chosen_providers_regions(
    client: Client, catalog: date
) -> None:
    gcp = set(Region.objects.filter(provider__slug="gcp", prices__isnull=False)
              .values_list("code", flat=True))
    html = _html(client.get(reverse("pricing:prices"), {"provider": "gcp"}))
    assert set(_region_options(html)) == gcp
    assert "us-east-1" not in _region_options(html)  # an AWS region
    # No provider chosen: every region, grouped under its provider's name.
    html = _html(client.get(reverse("pricing:prices")))
    assert '<optgroup label="Google Cloud">' in html
    assert json.loads(re.search(r'id="regions-by-provider"[^>]*>(.*?)</script>', html,
                                re.S).group(1))["gcp"] == sorted(gcp)


def test_a_region_of_another_provider_is_refused_with_a_message(
    client: Client, catalog: date
) -> None:
    response = client.get(reverse("pricing:prices"), {"provider": "gcp", "region": "us-east-1"})
    assert response.status_code == 400
    assert "us-east-1 is not a region of the chosen provider" in _html(response)


def test_catalog_served_from_cache_shows_a_changed_price_at_once(
    client: Client, catalog: date
) -> None:
    first = client.get(reverse("pricing:catalog"))
    offer = next(r for r in first.context["rows"] if r.gpu.slug == "h100-sxm5-80gb").cheapest
    again = client.get(reverse("pricing:catalog"))
    assert _row(_html(again), "gpu-h100-sxm5-80gb") == _row(_html(first), "gpu-h100-sxm5-80gb")
    Price.objects.filter(pk=offer.pk).update(usd_per_hour=offer.usd_per_hour / 2)
    changed = client.get(reverse("pricing:catalog"))
    row = next(r for r in changed.context["rows"] if r.gpu.slug == "h100-sxm5-80gb")
    assert row.cheapest.usd_per_hour == offer.usd_per_hour / 2


def _price_row(html: str, price: Price) -> str:
    start = html.index(f'href="/instances/{price.instance_type.provider.slug}/'
                       f'{price.instance_type.name}/"')
    return html[html.rindex("<tr", 0, start):html.index("</tr>", start)]


def _without_csrf(html: str) -> str:
    return re.sub(r'name="csrfmiddlewaretoken" value="[^"]+"', "", html)


def test_prices_served_from_cache_show_a_changed_price_at_once(
    client: Client, catalog: date
) -> None:
    query = {"gpu": "h100-sxm5-80gb", "provider": "aws", "purchase_option": "on_demand",
             "region": "us-east-1", "sort": "instance_type"}
    first = client.get(reverse("pricing:prices"), query)
    price = first.context["rows"][0].price
    assert "$98.32/h" not in _row_html(first, price)
    again = client.get(reverse("pricing:prices"), query)
    # The cached page is the page a fresh render gives (but for the column form's CSRF token).
    assert _without_csrf(_html(again)) == _without_csrf(_html(first))
    Price.objects.filter(pk=price.pk).update(usd_per_hour=98.32)
    assert "$98.32/h" in _row_html(client.get(reverse("pricing:prices"), query), price)


def test_a_new_price_shows_in_the_cached_explorer_at_once(client: Client, catalog: date) -> None:
    query = {"gpu": "h100-sxm5-80gb", "provider": "aws", "purchase_option": "on_demand"}
    count = client.get(reverse("pricing:prices"), query).context["page"].paginator.count
    price = Price.objects.filter(is_current=True, instance_type__provider__slug="aws",
                                 instance_type__accelerator__slug="h100-sxm5-80gb",
                                 purchase_option="on_demand").first()
    region = Region.objects.filter(provider__slug="aws").exclude(
        prices__instance_type=price.instance_type).first()
    Price.objects.create(instance_type=price.instance_type, region=region,
                         purchase_option="on_demand", usd_per_hour=77.77, as_of=price.as_of,
                         source=price.source)
    html = _html(client.get(reverse("pricing:prices"), query))
    assert f"{count + 1} prices" in html and "$77.77/h" in html


def test_a_cached_refused_filter_is_still_refused(client: Client, catalog: date) -> None:
    for _ in range(2):
        response = client.get(reverse("pricing:prices"), {"purchase_option": "forever"})
        assert response.status_code == 400
        assert "Purchase option: Select a valid choice." in _html(response)


def _row_html(response: object, price: Price) -> str:
    return _price_row(_html(response), price)


def test_a_spot_price_with_one_price_in_every_zone_says_so(client: Client, catalog: date) -> None:
    # it read "zones $0.068–$0.068/h"
    response = client.get(reverse("pricing:prices"), {"provider": "azure",
                                                      "purchase_option": "spot"})
    html = _html(response)
    same = [r.price for r in response.context["rows"]
            if r.price.zone_low_usd_per_hour is not None
            and r.price.zone_low_usd_per_hour == r.price.zone_high_usd_per_hour]
    assert same
    assert "every zone $" in html and not re.search(r"zones (\$[\d.,]+)–\1/h", html)
