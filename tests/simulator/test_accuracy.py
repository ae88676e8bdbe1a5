"""The accuracy page: out-of-family figures of the shipped simulator, public, with a CSV."""

import csv
import io
import re

import pytest
from django.test import Client
from django.urls import reverse

from simulator import services
from simulator.accuracy import ACCURACY_COLUMNS, accuracy_report

pytestmark = pytest.mark.django_db


def test_page_quotes_out_of_family_figures_beside_the_rule_of_thumb() -> None:
    response = Client().get(reverse("simulator:accuracy"))
    body = response.content.decode()
    assert response.status_code == 200
    report = accuracy_report()
    beaten, families = report.families_beaten()
    assert families == 31  # 19 benchmark families and 12 whole-run families with a prediction
    assert f"<strong>{beaten} of {families}</strong> families" in body
    overall = report.table("overall")[0]
    assert f"{overall['median_ape']:.1f}%" in body
    assert f"{overall['baseline_p90_ape']:.1f}%" in body
    # one way to write a percentage in the table: '7.5%' beside '79.7%', not '7.5 %'
    row = body[body.index('id="class-all"'):body.index("</tr>", body.index('id="class-all"'))]
    assert " %" not in row and "40% of the GPU's dense peak" in body
    for family in report.table("family"):
        assert family["group"] in body
    assert 'data-figure="figure-accuracy"' in body and 'id="figure-accuracy"' in body


def test_every_benchmark_family_beats_the_rule_and_the_page_names_the_rest() -> None:
    report = accuracy_report()
    beaten, families = report.families_beaten()
    not_beaten = report.families_not_beaten()
    assert beaten == families - len(not_beaten)
    # Every benchmark family but one beats the rule out of family. The exception is LLaMA-65B
    # on 2,048 A100 (one row: "around 380 tokens/sec/GPU"; the layout is not published and
    # the search's fastest one gives +18.5 %, the rule's 40 % of peak -16.0 %).
    benchmark_losses = [family for family in not_beaten if "(whole runs)" not in family]
    assert benchmark_losses in ([], ["Touvron et al. 2023, LLaMA (arXiv 2302.13971)"])
    body = Client().get(reverse("simulator:accuracy")).content.decode()
    for family in not_beaten:
        assert family in body.split('id="families-not-beaten">', 1)[1].split("</span>", 1)[0]


def test_the_page_shows_whole_runs_as_their_own_class_with_the_goodput() -> None:
    body = Client().get(reverse("simulator:accuracy")).content.decode()
    assert 'id="class-whole-run"' in body and "Whole runs (published GPU-hours)" in body
    assert 'id="whole-run-goodput"' in body and "Goodput factor:" in body
    for name in ("throughput", "time", "whole-run"):
        assert f'id="class-{name}"' in body
    # How far apart the published whole runs are: the P90 no single goodput factor beats.
    report = accuracy_report()
    floor = report.whole_run_floor()
    classes = {r["group"]: r for r in report.table("metric_class")}
    assert floor is not None and floor.n_rows == classes["whole-run"]["n_predicted"]
    spread = body.split('id="whole-run-spread">', 1)[1].split("</p>", 1)[0]
    assert f"{floor.p90_ape:.1f}%" in spread and f"{floor.ratio_high:.2f}" in spread


def test_csv_download_has_every_run_and_no_formula_cells() -> None:
    response = Client().get(reverse("simulator:accuracy_csv"))
    assert response.status_code == 200 and response["Content-Type"].startswith("text/csv")
    rows = list(csv.reader(io.StringIO(response.content.decode())))
    assert rows[0] == ACCURACY_COLUMNS
    assert len(rows) - 1 == len(accuracy_report().rows) == 420
    assert not any(cell.startswith(("=", "+", "@")) for row in rows[1:] for cell in row)


def test_long_family_names_stay_apart_on_the_axis_and_whole_in_the_hover() -> None:
    from simulator.accuracy import TICK_CHARACTERS, accuracy_figure, accuracy_report

    figure = accuracy_figure(accuracy_report())
    ticks = [trace.x[0] for trace in figure.data]
    assert len(set(ticks)) == len(figure.data)  # one column per family
    assert all(len(tick) <= TICK_CHARACTERS + 5 for tick in ticks)
    long = [trace for trace in figure.data if len(trace.name) > TICK_CHARACTERS]
    assert long and all(trace.x[0].endswith(")") and "…" in trace.x[0] for trace in long)
    assert all(trace.customdata[0] == trace.name for trace in figure.data)


def test_counts_add_up_and_families_without_a_prediction_are_named_not_tabled() -> None:
    """The page used to say "420 rows, 100 % predicted" beside a chart of 409 points, and
    tabled four whole-run families with 0 rows and nan %."""
    body = Client().get(reverse("simulator:accuracy")).content.decode()
    rows = accuracy_report().rows
    n_predicted = int(rows["predicted"].notna().sum())
    assert (n_predicted, len(rows)) == (409, 420)
    assert f"calibrated and checked on {n_predicted} published training runs" in body
    assert f"over {n_predicted} points" in body  # the chart's title
    whole = body.split('id="class-whole-run"', 1)[1].split("</tr>", 1)[0]
    assert '<td class="num">40</td><td class="num">29 <span' in whole
    listed_only = body.split('id="not-predicted">', 1)[1].split("</span>", 1)[0]
    assert listed_only.startswith("11 more whole runs are listed but not predicted")
    family_table = body.split('id="accuracy-family"', 1)[1].split("</table>", 1)[0]
    assert not re.search(r">\s*nan\s*%?\s*<", body)  # no cell reads nan
    for family in ("AI2 OLMo (whole runs)", "Databricks DBRX (whole runs)"):
        assert family in listed_only and family not in family_table


def test_the_page_shows_coverage_per_envelope_group_and_the_rows_it_rests_on() -> None:
    body = Client().get(reverse("simulator:accuracy")).content.decode()
    table = body.split('id="accuracy-envelope"', 1)[1].split("</table>", 1)[0]
    scales = services.shipped_calibration().domain.envelope_scales
    groups = accuracy_report().envelope_groups(scales)
    assert [g["group"] for g in groups] == ["inside", "near", "far", "unseen"]
    assert sum(g["n_predicted"] for g in groups) == 409
    for group in groups:
        row = table.split(f'id="envelope-{group["group"]}"', 1)[1].split("</tr>", 1)[0]
        assert f'<td class="num">{group["n_predicted"]}</td>' in row
        assert f"{group['coverage'] * 100:.1f}%" in row
        assert f"× {group['band_multiplier']:.2f}" in row
        # the target: every group of 8 rows or more holds 70-90 % out of family
        if group["n_predicted"] >= 8:
            assert 0.70 <= group["coverage"] <= 0.90, group
    unseen = table.split('id="envelope-unseen"', 1)[1].split("</tr>", 1)[0]
    assert "architecture not seen 22" in unseen
    assert scales[3] > scales[0]  # an unseen architecture needed a wider band


def test_the_csv_names_each_rows_envelope() -> None:
    rows = accuracy_report().rows
    outside = rows[rows["envelope"] != ""]
    assert len(outside) and outside["envelope_note"].str.startswith(
        "outside the calibration envelope").all()
    assert set(rows.loc[rows["predicted"].notna(), "envelope_group"]) == {
        "inside", "near", "far", "unseen"}


def test_the_page_shows_serving_as_its_own_class_beside_the_rule_of_thumb() -> None:
    from simulator.serving import serving_validation
    body = Client().get(reverse("simulator:accuracy")).content.decode()
    validation = serving_validation()
    section = body[body.index('id="serving"'):body.index('id="serving-by-source"')]
    assert "leave one source out" in section and "40% of its dense peak" in section
    for row in validation["by_metric"]:
        line = section[section.index(f'id="serving-{row["metric"]}"'):]
        line = line[:line.index("</tr>")]
        assert row["label"] in line
        for key in ("median_ape", "p90_ape", "band_coverage", "rule_median_ape"):
            assert f"{row[key]:.1f}%" in line
    assert (f"<strong>{validation['sources_beaten']} of {validation['sources']}</strong> sources"
            in section)
    sources = body[body.index('id="serving-by-source"'):]
    for row in validation["by_source"]:
        assert row["source"] in sources
    assert 'id="serving-mlperf"' in body
