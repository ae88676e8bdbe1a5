"""Catalog, compare, price explorer and instance pages: forms in, one selector call, render."""

import csv
import hashlib
from dataclasses import dataclass
from datetime import date
from typing import Any

import plotly.graph_objects as go
from django.conf import settings
from django.core.cache import cache
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.template.loader import render_to_string
from django.utils import timezone
from django.utils.html import json_script
from django.utils.safestring import SafeString
from plotly.utils import PlotlyJSONEncoder

from planner.core.spreadsheet import inert
from pricing import charts, selectors
from pricing.forms import CatalogFilterForm, CompareForm, PriceFilterForm

PRICES_PER_PAGE = 100
CATALOG_CACHE_SECONDS = 600


def _today() -> date:
    return timezone.now().date()


def _figure_script(figure: go.Figure, element_id: str) -> SafeString:
    """The figure as a <script type="application/json"> tag, encoded by Plotly's encoder."""
    return json_script(figure.to_plotly_json(), element_id, encoder=PlotlyJSONEncoder)


def catalog(request: HttpRequest) -> HttpResponse:
    form = CatalogFilterForm(request.GET)
    filters = form.filters()
    context = {
        "form": form,
        "sort": filters["sort"],
        "precisions": list(selectors.PRECISION_FIELDS),
        "active_precision": filters["precision"] or selectors.DEFAULT_PRECISION,
        "stale_days": settings.PRICE_STALE_DAYS,
        **_catalog_content(filters),
    }
    return render(request, "pricing/catalog.html", context, status=200 if form.is_valid() else 400)


def _catalog_content(filters: dict[str, Any]) -> dict[str, Any]:
    """The catalog's rows and charts, cached per filters, day and catalog version (building
    the rows and encoding the charts is most of the page's time)."""
    today = _today()
    state = f"{today}:{selectors.catalog_version()}:{sorted(filters.items())}"
    key = f"catalog:{hashlib.sha256(state.encode()).hexdigest()}"
    content: dict[str, Any] | None = cache.get(key)
    if content is None:
        rows = selectors.catalog_rows(today=today, **filters)
        points = selectors.gpu_points(rows)
        content = {
            "rows": rows,
            "peak_title": charts.peak_title(points),
            "scatter_json": _figure_script(charts.price_performance_scatter(points),
                                           "chart-scatter"),
            "per_dollar_json": _figure_script(charts.tflops_per_dollar_bar(points),
                                              "chart-per-dollar"),
        }
        cache.set(key, content, CATALOG_CACHE_SECONDS)
    return content


def compare(request: HttpRequest) -> HttpResponse:
    form = CompareForm(request.GET)
    if not form.is_valid():
        return render(request, "pricing/compare.html", {"form": form}, status=400)
    rows = selectors.catalog_rows_for(today=_today(), slugs=form.cleaned_data["gpu"])
    figure = charts.compare_peaks_bar(selectors.gpu_peaks(rows))
    context = {
        "form": form,
        "rows": rows,
        "precisions": list(selectors.PRECISION_FIELDS),
        "stale_days": settings.PRICE_STALE_DAYS,
        "chart_json": _figure_script(figure, "chart-compare"),
    }
    return render(request, "pricing/compare.html", context)


def prices(request: HttpRequest) -> HttpResponse:
    today = _today()
    if request.GET.get("format") == "csv":
        return _prices_csv(PriceFilterForm(request.GET), today)
    content = _prices_content(request, today)
    context = {"content": content.html, "stale_days": settings.PRICE_STALE_DAYS}
    return render(request, "pricing/prices.html", context, status=content.status)


@dataclass(frozen=True)
class RenderedContent:
    html: str  # a SafeString (render_to_string's), also once unpickled from the cache
    status: int


def _prices_content(request: HttpRequest, today: date) -> RenderedContent:
    """The explorer's filters, table and sources, rendered and cached per query (filters and
    page), day, staleness limit and catalog version (rendering 100 rows was most of its time)."""
    stale_days = settings.PRICE_STALE_DAYS
    state = (f"{today}:{stale_days}:{selectors.catalog_version()}:"
             f"{sorted(request.GET.lists())}")
    key = f"prices:{hashlib.sha256(state.encode()).hexdigest()}"
    content: RenderedContent | None = cache.get(key)
    if content is None:
        form = PriceFilterForm(request.GET)
        paginator = Paginator(selectors.price_list(today=today, **form.filters()),
                              PRICES_PER_PAGE)
        page = paginator.get_page(request.GET.get("page"))
        sources = selectors.source_rows(today=today)
        context = {
            "form": form,
            "page": page,
            "rows": selectors.price_rows(page.object_list),
            "sources": sources,
            "stale_sources": [s for s in sources if s.is_stale],
            "stale_days": stale_days,
            "today": today,
            "regions_json": json_script(form.regions_by_provider, "regions-by-provider"),
        }
        html = render_to_string("pricing/_prices.html", context, request=request)
        content = RenderedContent(html, 200 if form.is_valid() else 400)
        cache.set(key, content, CATALOG_CACHE_SECONDS)
    return content


def instance(request: HttpRequest, provider: str, name: str) -> HttpResponse:
    detail = selectors.instance_detail(provider=provider, name=name, today=_today())
    figure = charts.instance_prices_bar(selectors.current_region_prices(detail.rows))
    context = {
        "instance": detail.instance,
        "rows": detail.rows,
        "stale_days": settings.PRICE_STALE_DAYS,
        "chart_json": _figure_script(figure, "chart-instance"),
    }
    return render(request, "pricing/instance.html", context)


PRICE_CSV_HEADER = (
    "Provider", "Region", "Zone", "Instance type", "GPU", "GPUs (count)", "Purchase option",
    "Payment option", "Price (USD/instance-hour)", "Price (USD/GPU-hour)", "Upfront (USD)",
    "Discount vs on-demand (%)", "Basis", "As of", "Age (days)", "Is current", "Source",
)


def _prices_csv(form: PriceFilterForm, today: date) -> HttpResponse:
    """Every price the filters select (all pages), as CSV; text cells inert for spreadsheets."""
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="prices-{today.isoformat()}.csv"'
    response.write("\ufeff")
    writer = csv.writer(response, lineterminator="\r\n")
    writer.writerow(PRICE_CSV_HEADER)
    for row in selectors.price_rows(list(selectors.price_list(today=today, **form.filters()))):
        p, it = row.price, row.price.instance_type
        cells = (it.provider.name, p.region.code, p.zone, it.name, it.accelerator.name,
                 it.gpu_count, p.purchase_option, p.payment_option, float(p.usd_per_hour),
                 p.usd_per_gpu_hour, None if p.upfront_usd is None else float(p.upfront_usd),
                 None if row.discount_pct is None else round(row.discount_pct, 2), p.basis,
                 p.as_of.isoformat(), p.age_days(today), p.is_current, p.source.name)
        writer.writerow(["" if inert(c) is None else inert(c) for c in cells])
    return response
