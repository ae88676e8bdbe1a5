"""Catalog, compare, price explorer and instance pages: forms in, one selector call, render."""

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from typing import Any

import plotly.graph_objects as go
from django.conf import settings
from django.core.cache import cache
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone
from django.utils.functional import SimpleLazyObject
from django.utils.html import json_script
from django.utils.safestring import SafeString
from django.views.decorators.http import require_POST
from plotly.utils import PlotlyJSONEncoder

from pricing import charts, explorer, exports, offers, selectors
from pricing.forms import CatalogFilterForm, CompareForm, PriceFilterForm
from pricing.models import InstanceType

CATALOG_CACHE_SECONDS = 600


def _today() -> date:
    return timezone.now().date()


def _figure_script(figure: go.Figure, element_id: str) -> SafeString:
    """The figure as a <script type="application/json"> tag, encoded by Plotly's encoder."""
    return json_script(figure.to_plotly_json(), element_id, encoder=PlotlyJSONEncoder)


def _page_key(request: HttpRequest) -> str:
    """The key of a catalog page's cached content: its path and query, the day, the staleness
    limit and the catalog version (a changed price shows at once)."""
    state = (f"{request.path}:{_today()}:{settings.PRICE_STALE_DAYS}:"
             f"{selectors.catalog_version()}:{sorted(request.GET.lists())}")
    return hashlib.sha256(state.encode()).hexdigest()


def _lazy(build: Callable[[], Any]) -> SimpleLazyObject:
    """A context value built only if the page's cached content is missing."""
    return SimpleLazyObject(build)


def catalog(request: HttpRequest) -> HttpResponse:
    form = CatalogFilterForm(request.GET)
    filters = form.filters()
    content = _lazy(lambda: _catalog_content(filters))
    context = {
        "form": form,
        "sort": filters["sort"],
        "precisions": list(selectors.PRECISION_FIELDS),
        "active_precision": filters["precision"] or selectors.DEFAULT_PRECISION,
        "stale_days": settings.PRICE_STALE_DAYS,
        "page_key": _page_key(request),
        **{name: _lazy(lambda name=name: content[name])
           for name in ("rows", "per_cloud", "peak_title", "scatter_json", "per_dollar_json")},
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
            "per_cloud": offers.cheapest_per_cloud(today=today),
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
    rows = _lazy(lambda: selectors.catalog_rows_for(today=_today(),
                                                    slugs=form.cleaned_data["gpu"]))
    context = {
        "form": form,
        "rows": rows,
        "precisions": list(selectors.PRECISION_FIELDS),
        "stale_days": settings.PRICE_STALE_DAYS,
        "page_key": _page_key(request),
        "chart_json": _lazy(lambda: _figure_script(
            charts.compare_peaks_bar(selectors.gpu_peaks(rows)), "chart-compare")),
        "per_cloud": _lazy(lambda: offers.cheapest_per_cloud(today=_today())),
    }
    return render(request, "pricing/compare.html", context)


def prices(request: HttpRequest) -> HttpResponse:
    today = _today()
    export = request.GET.get("format", "")
    if export in ("csv", "xlsx"):
        return _prices_export(PriceFilterForm(request.GET), today, export)
    columns = explorer.column_choice(owner_id=request.user.pk, session=request.session)
    content = _prices_content(request, today, columns)
    context = {"head": content.head, "content": content.html, "shown": columns,
               "all_columns": explorer.COLUMNS, "query": _query_without(request, "page", "format"),
               "stale_days": settings.PRICE_STALE_DAYS}
    return render(request, "pricing/prices.html", context, status=content.status)


@require_POST
def prices_columns(request: HttpRequest) -> HttpResponse:
    """Remember the explorer columns ticked (per user; per browser session when signed out),
    then back to the same filters and sort."""
    try:
        explorer.column_choice_save(owner_id=request.user.pk, session=request.session,
                                    columns=request.POST.getlist("columns"))
    except ValueError as exc:
        return HttpResponse(str(exc), status=400, content_type="text/plain; charset=utf-8")
    query = str(request.POST.get("query", ""))
    return redirect(f"{reverse('pricing:prices')}?{query}" if query else "pricing:prices")


@dataclass(frozen=True)
class RenderedContent:
    head: str  # title, filters; html: exports, table, sources (SafeStrings, also unpickled)
    html: str
    status: int


def _prices_content(request: HttpRequest, today: date, columns: tuple[str, ...]
                    ) -> RenderedContent:
    """The explorer's filters, table and sources, rendered and cached per query (filters, sort,
    page size and page), columns, day, staleness limit and catalog version."""
    stale_days = settings.PRICE_STALE_DAYS
    state = (f"{today}:{stale_days}:{selectors.catalog_version()}:{columns}:"
             f"{sorted(request.GET.lists())}")
    key = f"prices:{hashlib.sha256(state.encode()).hexdigest()}"
    content: RenderedContent | None = cache.get(key)
    if content is None:
        form = PriceFilterForm(request.GET)
        sort = form.sort_key()
        found = explorer.explorer_prices(today=today, filters=form.filters(), sort=sort)
        page = Paginator(found, form.page_size()).get_page(request.GET.get("page"))
        sources = selectors.source_rows(today=today)
        context = {
            "form": form, "page": page, "sort": sort, "shown": columns,
            "sort_label": explorer.sort_label(sort),
            "headers": _sort_headers(request, sort, columns),
            "rows": selectors.price_rows(page.object_list),
            "sources": sources,
            "stale_sources": [s for s in sources if s.is_stale],
            "stale_days": stale_days,
            "today": today,
            "nearby_days": selectors.NEARBY_DAYS,
            "query": _query_without(request, "page", "format"),
            "regions_json": json_script(form.regions_by_provider, "regions-by-provider"),
        }
        content = RenderedContent(
            render_to_string("pricing/_prices_head.html", context, request=request),
            render_to_string("pricing/_prices.html", context, request=request),
            200 if form.is_valid() else 400)
        cache.set(key, content, CATALOG_CACHE_SECONDS)
    return content


def _query_without(request: HttpRequest, *names: str) -> str:
    query = request.GET.copy()
    for name in names:
        query.pop(name, None)
    return query.urlencode()


def _sort_headers(request: HttpRequest, sort: str, columns: tuple[str, ...]
                  ) -> list[dict[str, Any]]:
    """Each shown column's header: its sort link (the other direction when sorted by it; the
    first page) and its aria-sort state."""
    headers = []
    for column in explorer.COLUMNS:
        if column.key not in columns:
            continue
        query = request.GET.copy()
        query.pop("page", None)
        query.pop("format", None)
        query["sort"] = f"-{column.key}" if sort == column.key else column.key
        state = {column.key: "ascending", f"-{column.key}": "descending"}.get(sort, "")
        headers.append({"column": column, "href": f"?{query.urlencode()}", "aria_sort": state})
    return headers


def instance(request: HttpRequest, provider: str, name: str) -> HttpResponse:
    found = get_object_or_404(InstanceType.objects.select_related("provider", "accelerator"),
                              provider__slug=provider, name=name)
    detail = _lazy(lambda: selectors.instance_detail(provider=provider, name=name,
                                                     today=_today()))
    context = {
        "instance": found,
        "rows": _lazy(lambda: detail.rows),
        "stale_days": settings.PRICE_STALE_DAYS,
        "page_key": _page_key(request),
        "chart_json": _lazy(lambda: _figure_script(charts.instance_prices_bar(
            selectors.current_region_prices(detail.rows)), "chart-instance")),
    }
    return render(request, "pricing/instance.html", context)


def _prices_export(form: PriceFilterForm, today: date, fmt: str) -> HttpResponse:
    """Every price the filters select (all pages) in the page's sort order, as CSV or XLSX."""
    found = explorer.explorer_prices(today=today, filters=form.filters(), sort=form.sort_key())
    name = f"prices-{today.isoformat()}"
    if fmt == "csv":
        response = HttpResponse(exports.prices_csv(found.iterator(chunk_size=1000), today),
                                content_type="text/csv; charset=utf-8")
    else:
        body = exports.prices_xlsx(found.iterator(chunk_size=1000), today,
                                   title=f"GPU prices as of {today.isoformat()}")
        response = HttpResponse(body, content_type=XLSX_TYPE)
    response["Content-Disposition"] = f'attachment; filename="{name}.{fmt}"'
    return response


XLSX_TYPE = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
