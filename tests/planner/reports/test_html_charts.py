"""The interactive HTML report's charts: a colour and marker per series, and the pages'
own figures.js inlined (phone and laptop layouts offline)."""

import re

import pytest
from django.test import Client

from planner.models import PlanScenario
from planner.reports.core.model import Chart, Series
from planner.reports.render.html import plotly_figure


def test_sixteen_gpu_models_get_sixteen_colours() -> None:
    series = tuple(Series(f"GPU {i}", (8.0, 64.0), (1e3 * (i + 1), 8e3 * (i + 1)))
                   for i in range(16))
    figure = plotly_figure(Chart("throughput", "Simulated throughput by GPU count", "line",
                                 "GPUs (count)", "Throughput (tokens/s)", series))
    styles = {(t["marker"]["color"], t["marker"]["symbol"]) for t in figure["data"]}
    assert len(styles) == 16
    assert len({t["marker"]["color"] for t in figure["data"]}) == 16
    assert all(t["line"]["color"] == t["marker"]["color"] for t in figure["data"])


@pytest.mark.django_db
def test_the_report_draws_with_the_pages_figures_script(ana_client: Client,
                                                        done_plan: PlanScenario) -> None:
    html = ana_client.get(f"/plans/{done_plan.id}/report.html").content.decode()
    script = re.search(r'<script id="figures-js">(.*?)</script>', html, re.S)
    assert script and "clearLegend" in script.group(1) and "NARROW_PX" in script.group(1)
    charts = re.findall(r'<div class="chart" id="report-chart-(\d+)" '
                        r'data-figure="report-figure-(\d+)">', html)
    assert charts and all(a == b for a, b in charts)
    assert len(charts) == html.count('<script id="report-figure-')
