"""plan_serving and validate_serving as a user runs them."""

import json
import re
from io import StringIO
from pathlib import Path

import pandas as pd
import pytest
from django.core.management import CommandError, call_command

ROOT = Path(__file__).resolve().parents[3]
RUNS = ROOT / "simulator" / "data" / "inference_runs.csv"
EXAMPLE = ["--model", "llama3.1-70b", "--rate", "20", "--input-tokens", "2000",
           "--output-tokens", "300", "--ttft-p99-ms", "2000", "--tpot-p99-ms", "60"]


@pytest.mark.django_db
@pytest.mark.usefixtures("loaded_catalog")
def test_plan_serving_ranks_options_across_providers_with_bands_as_json() -> None:
    out = StringIO()
    call_command("plan_serving", *EXAMPLE, "--json", "--top", "50", stdout=out)
    plan = json.loads(out.getvalue())
    options = plan["options"]
    assert len({o["provider"] for o in options}) >= 2
    costs = [o["usd_per_month"] for o in options]
    assert costs == sorted(costs)
    first = options[0]
    assert first["replicas"] >= 1 and first["ttft_p99_ms"] <= 2000 and first["tpot_p99_ms"] <= 60
    # Conformal bands may sit off-centre (the model under-predicts TTFT out of source).
    assert 0 < first["ttft_p99_ms_p10"] < first["ttft_p99_ms_p90"]
    assert 0 < first["tpot_p99_ms_p10"] < first["tpot_p99_ms_p90"]
    assert set(first["usd_per_million_tokens"]) == {"input", "output", "all"}
    assert first["price_as_of"] and first["price_source"]
    assert plan["cards"]["cheapest"] == first


@pytest.mark.django_db
@pytest.mark.usefixtures("loaded_catalog")
def test_plan_serving_text_shows_each_options_band_price_provenance_and_calibration() -> None:
    out = StringIO()
    call_command("plan_serving", *EXAMPLE, "--top", "3", stdout=out)
    lines = out.getvalue().splitlines()
    assert "Out of source" in lines[1] and "band held" in lines[1]
    options = lines[2:5]
    assert lines[5].startswith("What to buy for ")  # then the purchase mix's lines
    for line in options:
        assert re.search(r"TTFT P99 [\d,]+ ms \(P10-P90 [\d,]+-[\d,]+\)", line)
        assert re.search(r"TPOT P99 [\d.]+ ms \(P10-P90 [\d.]+-[\d.]+\)", line)
        assert re.search(r"price .+, as of \d{4}-\d\d-\d\d, (listed|derived)$", line)


@pytest.mark.django_db
def test_plan_serving_refuses_bad_input_naming_the_option() -> None:
    with pytest.raises(CommandError, match="--rate"):
        call_command("plan_serving", *EXAMPLE[:2], "--rate", "lots", "--input-tokens", "10",
                     "--output-tokens", "10")


def test_validate_serving_writes_predictions_and_lists_rows_it_cannot_answer(
        tmp_path: Path) -> None:
    rows = pd.read_csv(RUNS)
    sample = rows[rows["row_id"].isin(["D002", "D050", "D084", "D098", "D115"])]
    path = tmp_path / "runs.csv"
    sample.to_csv(path, index=False)
    out_path = tmp_path / "pred.csv"
    out = StringIO()
    call_command("validate_serving", str(path), "--out", str(out_path), stdout=out)
    predictions = pd.read_csv(out_path)
    assert list(predictions.columns) == ["row_id", "metric", "value", "predicted",
                                         "predicted_p10", "predicted_p90"]
    assert set(predictions["row_id"]) == {"D002", "D050", "D084", "D098"}
    # D098's throughput has no output length to answer it: listed, not predicted
    assert list(predictions.loc[predictions["row_id"] == "D098", "metric"]) == ["ttft_ms"]
    assert set(predictions["metric"]) == {"throughput_tokens_per_s", "ttft_ms", "tpot_ms"}
    assert (predictions["predicted"] > 0).all()
    text = out.getvalue()
    assert "D115: prefill/decode disaggregation" in text
    assert "D098 throughput_tokens_per_s: output length not stated" in text
    assert "rule_median_ape" in text
    assert "give in-sample figures: --cv source for out-of-source ones" in text


def test_validate_serving_names_a_file_without_the_columns(tmp_path: Path) -> None:
    path = tmp_path / "bad.csv"
    path.write_text("row_id,gpu\nX1,H100\n")
    with pytest.raises(CommandError, match="bad.csv: missing columns"):
        call_command("validate_serving", str(path))
