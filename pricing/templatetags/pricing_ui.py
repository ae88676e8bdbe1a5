"""Template helpers for the pricing pages: number formatting with units and the Plotly bundle."""

from typing import Any

from django import template
from django.conf import settings
from django.templatetags.static import static
from django.utils.html import format_html

from planner.core import formatting
from planner.core.cloud import is_stale_price, stale_rule_text
from pricing.models import Accelerator

register = template.Library()


@register.simple_tag
def plotly_js_url() -> str:
    """URL of the vendored Plotly bundle (settings.PLOTLY_JS), read at render time."""
    return static(settings.PLOTLY_JS)


@register.filter
def num(value: float | int | None, max_decimals: int = 2) -> str:
    """1979.0 -> '1,979', 989.5 -> '989.5', None -> '—'. Units are added by the template."""
    return formatting.number(value, max_decimals)


@register.filter
def usd(value: float | None) -> str:
    """'$2.10' above a dollar, '$0.354' below it, so cheap offers keep three digits."""
    return formatting.usd(value)


@register.filter
def days(hours: float | None) -> str:
    """A duration: in days from two days on, in hours below ('125.3 days', '36 h')."""
    return formatting.duration(hours)


@register.filter
def discount(value: float | None) -> str:
    """37.0 -> '37% off'; a negative discount (dearer than on-demand) -> '12% above'."""
    if value is None:
        return "—"
    return f"{value:.0f}% off" if value >= 0 else f"{-value:.0f}% above"


@register.simple_tag(takes_context=True)
def sort_header(context: template.Context, key: str, label: str) -> str:
    """A column header link to ?sort=key (or -key when already sorted by key), other GET kept."""
    current = context.get("sort", "")
    query = context["request"].GET.copy()
    query["sort"] = f"-{key}" if current == key else key
    arrow = {key: " ▲", f"-{key}": " ▼"}.get(current, "")
    css = "sorted" if arrow else ""
    return format_html('<a href="?{}" class="{}">{}{}</a>', query.urlencode(), css, label, arrow)


@register.filter
def peak(gpu: Accelerator, precision: str) -> float | None:
    """{{ gpu|peak:"bf16" }}: the dense peak at a precision key (TOPS for int8)."""
    return gpu.peak_tflops(precision)


@register.filter
def offers_for(per_cloud: dict[int, list[object]], gpu_id: int) -> list[object]:
    """{{ per_cloud|offers_for:gpu.id }}: a GPU's cheapest offer in each cloud."""
    return per_cloud.get(gpu_id, [])


@register.simple_tag
def stale_rule() -> str:
    """When a price is flagged stale, in words (planner.core.cloud.stale_rule_text)."""
    return stale_rule_text(settings.PRICE_STALE_DAYS)


@register.filter
def stale_in(row: dict[str, Any], stale_before: dict[str, str] | None) -> bool:
    """A price row (with `as_of` and `provider`) is stale by the per-provider days given."""
    return is_stale_price(row.get("as_of"), row.get("provider"), stale_before)
