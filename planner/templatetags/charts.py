"""{% chart script %}: a Plotly figure (the json_script a view made) as a <figure> with its
finding as the caption and label, and its data as a table (planner/core/chart_text.py)."""

import json
import re
from functools import lru_cache

from django import template
from django.template.loader import render_to_string
from django.utils.html import json_script
from django.utils.safestring import SafeString

from planner.core import chart_text

register = template.Library()
SCRIPT = re.compile(r'<script id="(?P<id>[^"]+)" type="application/json">(?P<json>.*)</script>',
                    re.S)


@register.simple_tag
def chart(script: str, chart_id: str = "", css: str = "", suffix: str = "-chart") -> SafeString:
    """The chart div that static/js/figures.js draws into, its caption, its data table and
    its script. `chart_id` names the drawn div (default: the script id + `suffix`)."""
    return _chart(str(script), chart_id, css, suffix)


# The same figure script always gives the same HTML; pages show cached figures (a history's
# are up to a megabyte, whose parsing, finding and table took most of the page's time), so
# each process keeps the last ones it rendered.
@lru_cache(maxsize=32)
def _chart(script: str, chart_id: str, css: str, suffix: str) -> SafeString:
    match = SCRIPT.fullmatch(script.strip())
    if match is None:
        raise template.TemplateSyntaxError("chart needs a json_script of a Plotly figure")
    figure = json.loads(match["json"])
    element_id = match["id"]
    return render_to_string("charts/_chart.html", {
        "element_id": element_id, "chart_id": chart_id or f"{element_id}{suffix}", "css": css,
        "title": chart_text.chart_title(figure), "finding": chart_text.chart_finding(figure),
        "caption": chart_text.chart_caption(figure),
        "data": chart_text.chart_data(figure),
        # written again from the parsed figure: escaped by json_script, nothing marked safe
        "script": json_script(figure, element_id),
    })
