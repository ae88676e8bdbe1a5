"""The second hour's simulation form and charts in a real browser (390 and 1366 px): the
form offers only the chosen GPU's instance types with readable labels (with and without
JavaScript), the time axis ticks round numbers, the throughput chart gives each GPU model its
own colour and its whole name, and on every chart page no legend or toolbar covers a title,
an axis title or tick labels, and nothing runs past the figure. Screenshots go to
var/screenshots/.
"""

import re
from typing import Any

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import Page

from pricing.models import InstanceType
from simulator.models import SimulationRun
from tests.browser.conftest import SCREENSHOTS, SharedChromium, screenshot
from tests.browser.journeys import axe_findings, chart_problems, is_round_scale, sign_in_as_ada

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PHONE, LAPTOP = 390, 1366
THROUGHPUT_JS = """() => {
  const div = [...document.querySelectorAll('[data-figure][data-drawn="true"]')].find(d =>
    d.closest('figure').querySelector('.finding').textContent.startsWith('Highest throughput'));
  const plot = div.querySelector('.nsewdrag').getBoundingClientRect();
  const traces = [...div.querySelectorAll('.scatterlayer .trace')].map(trace => {
    const points = [...trace.querySelectorAll('.points path')];
    const inside = points.every(p => {
      const r = p.getBoundingClientRect();
      return r.left >= plot.left - 0.5 && r.right <= plot.right + 0.5 &&
             r.top >= plot.top - 0.5 && r.bottom <= plot.bottom + 0.5;
    });
    return {fill: points.length ? getComputedStyle(points[0]).fill : '',
            shape: points.length ? points[0].getAttribute('d').slice(0, 12) : '',
            n: points.length, inside};
  });
  const box = div.getBoundingClientRect();
  const legend = [...div.querySelectorAll('.legend .traces')].map(t => {
    const r = t.querySelector('.legendtext').getBoundingClientRect();
    return {text: t.querySelector('.legendtext').textContent, inside: r.right <= box.right + 1
            && r.bottom <= box.bottom + 1 && r.left >= box.left - 1};
  });
  return {id: div.id, names: div.data.map(t => t.name), traces, legend,
          scrolls: [...div.querySelectorAll('.legend .scrollbar')].some(
            bar => +bar.getAttribute('width') > 0)};
}"""


def _open_example(page: Page, base: str) -> None:
    """Signed in as Ada, on her copy of the worked example's plan."""
    sign_in_as_ada(page, base)
    page.goto(f"{base}/plans/example")
    page.wait_for_url(re.compile(r"/plans/\d+$"))


def _instance_options(page: Page) -> list[dict[str, str]]:
    return page.eval_on_selector("#id_instance_type", """s => [...s.options].map(o => ({
        value: o.value, text: o.textContent,
        group: o.parentNode.tagName === 'OPTGROUP' ? o.parentNode.label : ''}))""")


def _drawn(page: Page) -> None:
    page.wait_for_load_state("load")
    count = page.locator("[data-figure]").count()
    page.wait_for_function(
        f"document.querySelectorAll('[data-figure][data-drawn=\"true\"]').length >= {count}")


@pytest.mark.parametrize("width", [PHONE, LAPTOP])
def test_the_simulation_form_offers_the_chosen_gpus_instances_and_its_time_ticks_are_round(
    page_factory: Any, live_server: Any, ada: User, eager_celery: None, width: int
) -> None:
    page, base = page_factory(width), live_server.url
    sign_in_as_ada(page, base)
    page.goto(f"{base}/simulations/new")
    assert [o["text"] for o in _instance_options(page)] == ["choose a GPU first"]
    assert page.locator("#show-instances").count() == 0  # JavaScript scopes the list itself
    page.select_option("#id_gpu", "a100-sxm4-80gb")
    options = _instance_options(page)[1:]
    expected = set(InstanceType.objects.filter(accelerator__slug="a100-sxm4-80gb")
                   .values_list("id", flat=True))
    assert {int(o["value"]) for o in options} == expected
    for option in options:  # "AWS p4de.24xlarge · 8 × A100 SXM4-80GB · $27.45/h"
        assert re.fullmatch(r"(AWS|Azure|Google Cloud|Lambda|Vast\.ai) \S+ · \d+ × "
                            r"A100 SXM4-80GB · \$[\d,.]+/h", option["text"]), option
        assert option["text"].startswith(option["group"] + " ")
    assert not any(":" in o["text"] for o in options)  # no "aws:p4de..." codes
    p4de = next(o for o in options if "p4de.24xlarge" in o["text"])
    page.select_option("#id_instance_type", p4de["value"])
    note = page.inner_text("#instance-note")
    assert re.search(r"Cheapest on-demand price \$[\d,.]+/h \(\$[\d.]+/GPU-hour\) in [\w-]+: "
                     r"(listed|derived|estimated), .+, as of \d{4}-\d\d-\d\d", note), note
    page.select_option("#id_preset", "llama2-7b")
    page.fill("#id_tokens", "1e12")
    page.fill("#id_nodes", "4")
    assert not axe_findings(page), axe_findings(page)
    page.locator("#field-instance_type").scroll_into_view_if_needed()
    screenshot(page, f"simulation-form-gpu-first-{width}")
    page.click("#simulation-form .form-actions button[type=submit]")
    page.wait_for_url(re.compile(r"/simulations/\d+$"))
    run = SimulationRun.objects.get(owner=ada)
    assert run.request["instance_type_id"] == int(p4de["value"])

    page.reload()  # the run finished in the request (eager tasks)
    _drawn(page)
    chart = page.locator('[data-figure="figure-2"]')
    title = chart.evaluate("d => d.layout.yaxis2.title.text")
    assert title == "Time to train (days)"
    ticks = chart.locator(".y2tick text").all_text_contents()
    assert is_round_scale(ticks), ticks  # 0, 200, 400, 600: never 39.9 / 79.8
    assert not chart_problems(page), chart_problems(page)
    assert not axe_findings(page), axe_findings(page)
    chart.scroll_into_view_if_needed()
    screenshot(page, f"simulation-time-ticks-{width}")


def test_without_javascript_choosing_a_gpu_asks_the_server_for_its_instance_types(
    shared_chromium: SharedChromium, vendored_plotly: str, browser_catalog: None,
    live_server: Any, ada: User
) -> None:
    context = shared_chromium.new_context(PHONE, 900, has_javascript=False)
    try:
        page, base = context.new_page(), live_server.url
        sign_in_as_ada(page, base)
        page.goto(f"{base}/simulations/new")
        page.select_option("#id_preset", "llama2-7b")
        page.fill("#id_tokens", "2e12")
        page.select_option("#id_gpu", "h100-sxm5-80gb")
        assert [o["text"] for o in _instance_options(page)] == ["choose a GPU first"]
        page.click("#show-instances")
        page.wait_for_load_state()
        options = _instance_options(page)[1:]
        assert options and all("× H100 SXM5-80GB · $" in o["text"] for o in options)
        assert page.input_value("#id_tokens") == "2e12"  # kept
        assert page.locator(".field-error").count() == 0
        screenshot(page, f"simulation-form-no-javascript-{PHONE}")
        page.context.close()
        context = shared_chromium.new_context(PHONE, 900)  # axe runs as JavaScript
        page = context.new_page()
        sign_in_as_ada(page, base)
        page.goto(f"{base}/simulations/new?gpu=h100-sxm5-80gb")  # the same scoped list
        assert not axe_findings(page), axe_findings(page)
    finally:
        context.close()


@pytest.mark.parametrize("width", [PHONE, LAPTOP])
def test_the_throughput_chart_gives_every_gpu_its_own_colour_and_whole_name(
    page_factory: Any, live_server: Any, ada: User, width: int
) -> None:
    page, base = page_factory(width), live_server.url
    _open_example(page, base)
    _drawn(page)
    found = page.evaluate(THROUGHPUT_JS)
    names, traces = found["names"], found["traces"]
    assert len(names) >= 10 and len(traces) == len(names)
    styles = [(t["fill"], t["shape"]) for t in traces]
    assert len({fill for fill, _ in styles}) == len(names), styles  # a colour each
    assert all(t["inside"] for t in traces), traces  # no marker past the plot
    assert [entry["text"] for entry in found["legend"]] == names  # whole names, none hidden
    assert all(entry["inside"] for entry in found["legend"]), found["legend"]
    assert not found["scrolls"]
    assert not chart_problems(page), chart_problems(page)
    figure = page.locator(f'#{found["id"]}').locator("xpath=..")
    figure.scroll_into_view_if_needed()
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    figure.screenshot(path=str(SCREENSHOTS / f"plan-throughput-chart-{width}.png"))


@pytest.mark.parametrize("width", [PHONE, LAPTOP])
def test_no_legend_or_toolbar_covers_titles_or_axes_on_the_chart_pages(
    page_factory: Any, live_server: Any, ada: User, width: int
) -> None:
    page, base = page_factory(width), live_server.url
    _open_example(page, base)
    pages = {"catalog": "/gpus/", "compare": "/compare/?gpu=h100-sxm5-80gb&gpu=a100-sxm4-80gb",
             "instance": "/instances/aws/p4d.24xlarge/", "accuracy": "/simulations/accuracy",
             "plan": page.url.removeprefix(base)}
    problems = []
    for name, path in pages.items():
        page.goto(f"{base}{path}")
        _drawn(page)
        if width == LAPTOP:  # the toolbar shows on hover: hover each chart's top right
            for chart in page.locator("[data-figure]").all():
                chart.scroll_into_view_if_needed()
                chart.hover(position={"x": chart.bounding_box()["width"] - 20, "y": 15})
                problems += [f"{name} {p}" for p in chart_problems(page)]
        problems += [f"{name} {p}" for p in chart_problems(page)]
        if name in ("instance", "compare"):
            page.locator("[data-figure]").first.scroll_into_view_if_needed()
            screenshot(page, f"chart-{name}-legend-{width}")
    assert not problems, "\n".join(sorted(set(problems)))
