"""TP/PP/EP wherever a serving option is shown: API, page, what-if, reports, charts, command."""

import csv
import io
import json
import re
from io import StringIO
from urllib.parse import urlencode

import openpyxl
import pytest
from django.core.management import call_command
from django.test import Client

from planner.serving.charts import cost_latency_figure

pytestmark = pytest.mark.django_db
# Llama 3.1 405B in bf16 (810 GB of weights) with loose targets: no 8 x 80 GB node holds it.
BIG = {"model": "llama3.1-405b", "precision": "bf16", "rate": 2, "input_tokens": 1000,
       "output_tokens": 200, "ttft_p99_ms": 10000, "tpot_p99_ms": 200,
       "purchase_options": ["on_demand"]}


def _pipelined(options: list[dict]) -> dict:  # type: ignore[type-arg]
    return next(o for o in options if o["pp"] == 2 and o["gpu"].startswith("A100 SXM4-80GB"))


def test_the_api_page_and_reports_show_a_two_node_pipeline_the_same_way(
        client_sam: Client) -> None:
    body = client_sam.post("/api/serving", json.dumps(BIG),
                           content_type="application/json").json()
    option = _pipelined(body["options"])
    assert (option["tp"], option["ep"], option["gpus_per_replica"]) == (8, 1, 16)
    assert option["instances"] == 2 * option["replicas"]
    assert option["network_gbits_per_s"] > 0
    for o in body["options"]:
        assert o["gpus"] == o["replicas"] * o["gpus_per_replica"]

    page = client_sam.get(f"/serving/{body['id']}").content.decode()
    assert "<th>PP</th><th>EP</th><th>GPUs per replica</th>" in page
    row = (f'<td class="c-tp">8</td><td class="c-pp">2</td><td class="c-ep">1</td>'
           f'<td class="c-gpus-per-replica">16</td><td class="c-peak">{option["replicas"]}</td>'
           f'<td class="c-instances">{option["instances"]}</td>')
    assert row in page

    base = f"/serving/{body['id']}/report"
    rows = list(csv.DictReader(io.StringIO(
        client_sam.get(f"{base}.csv").content.decode("utf-8-sig"))))
    same = [r for r in rows if r["Instance"] == option["instance_type"] and r["PP"] == "2"]
    assert same and same[0]["TP"] == "8" and same[0]["EP"] == "1"
    assert same[0]["GPUs per replica"] == "16"
    book = openpyxl.load_workbook(io.BytesIO(client_sam.get(f"{base}.xlsx").content))
    headers = [c.value for c in next(book["Options"].iter_rows(max_row=1))]
    assert {"TP", "PP", "EP"} <= set(headers)
    html = client_sam.get(f"{base}.html").content.decode()
    assert re.search(r"TP\d PP\d EP\d+ x \d+ replicas on \d+ instances", html)
    cheapest = body["cards"]["cheapest"]
    assert (f"TP{cheapest['tp']} PP{cheapest['pp']} EP{cheapest['ep']}, "
            f"{cheapest['gpus_per_replica']} GPUs per replica") in html

    whatif = client_sam.get("/serving/whatif?" + urlencode(BIG, doseq=True)).content.decode()
    assert '<td class="c-pp">2</td>' in whatif
    hover = cost_latency_figure(body).data[0].text
    assert (f"{option['provider']} {option['instance_type']} TP8 PP2 EP1 "
            f"x{option['replicas']}") in hover


@pytest.mark.usefixtures("loaded_catalog")
def test_plan_serving_json_ranks_expert_parallel_options_for_deepseek() -> None:
    out = StringIO()
    call_command("plan_serving", "--model", "deepseek-v3", "--rate", "2", "--input-tokens",
                 "1000", "--output-tokens", "200", "--ttft-p99-ms", "10000", "--tpot-p99-ms",
                 "200", "--json", "--top", "60", stdout=out)
    options = json.loads(out.getvalue())["options"]
    wide = [o for o in options if o["ep"] > 1]
    assert wide
    for o in options:
        assert o["ep"] in (1, o["tp"] * o["pp"]) and o["gpus_per_replica"] == o["tp"] * o["pp"]
    text = StringIO()
    call_command("plan_serving", "--model", "deepseek-v3", "--rate", "2", "--input-tokens",
                 "1000", "--output-tokens", "200", "--ttft-p99-ms", "10000", "--tpot-p99-ms",
                 "200", "--top", "60", stdout=text)
    assert re.search(r"TP8 PP\d EP(16|32|64) x\d+ +on \d+ instances", text.getvalue())
