"""Template filters over the one formatter (planner.core.formatting): {% load numbers %}."""

from django import template

from planner.core import formatting
from planner.core.peaks import PEAK_LABELS
from planner.core.purchase_options import ON_DEMAND, OPTIONS_BY_CODE

register = template.Library()

register.filter("usd", formatting.usd)
register.filter("usd_per", formatting.usd_per)
register.filter("count", formatting.count)
register.filter("large_count", formatting.large_count)
register.filter("rate", formatting.rate)
register.filter("percent", formatting.percent)
register.filter("percent_points", formatting.percent_points)
register.filter("duration", formatting.duration)
register.filter("label", formatting.label)
register.filter("number", formatting.number)
register.filter("layout_label", formatting.layout_label)
register.filter("serving_layout", formatting.serving_layout_label)
register.filter("serving_gpus_per_replica", formatting.serving_gpus_per_replica)
register.filter("zero_as_run", formatting.zero_as_run)


@register.filter
def goodput_line(option: dict) -> str:  # type: ignore[type-arg]
    """{{ option|goodput_line }}: the option's goodput loss, modelled failures apart from the
    production overhead (formatting.goodput_parts)."""
    return formatting.goodput_parts(option)


@register.filter
def overhead_text(option: dict) -> str:  # type: ignore[type-arg]
    """{{ option|overhead_text }}: '+50.0 % GPU-hours, $75,619', the goodput line's figures."""
    return formatting.overhead_text(option.get("overhead_gpu_hours_pct"),
                                    option.get("overhead_usd"))


@register.filter
def is_commitment(purchase_option: str) -> bool:
    """{% if p.purchase_option|is_commitment %}: bought ahead for a term (has a payment option)."""
    option = OPTIONS_BY_CODE.get(purchase_option)
    return option is not None and option.is_commitment


@register.filter
def is_on_demand(purchase_option: str) -> bool:
    """{% if p.purchase_option|is_on_demand %}: the list price discounts are measured from."""
    return purchase_option == ON_DEMAND


@register.filter
def band_to(low_hours: float | None, high_hours: float | None) -> str:
    """{{ p10|band_to:p90 }}: a duration range in one unit ('108.1–152.5 days')."""
    return formatting.duration_band(low_hours, high_hours)


@register.filter
def in_minutes(seconds: float | None) -> float | None:
    """{{ restart_seconds|in_minutes }}: seconds as minutes, the unit the plan form asks in."""
    return None if seconds is None else float(seconds) / 60


@register.filter
def per_million(value: float | None) -> float | None:
    """{{ rate|per_million }}: a per-unit rate per million units (failures per GPU-hour to
    failures per million GPU-hours)."""
    return None if value is None else float(value) * 1e6


@register.simple_tag
def peak_label(kind: str) -> str:
    """'peak hourly-average demand' or 'peak concurrent GPUs' (planner.core.peaks)."""
    return PEAK_LABELS[kind][0]


@register.simple_tag
def peak_help(kind: str) -> str:
    """What that peak counts, for a tooltip (planner.core.peaks)."""
    return PEAK_LABELS[kind][1]
