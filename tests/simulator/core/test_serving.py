"""The serving model: decode and prefill physics, KV capacity, load, goodput, reading runs."""

import math
from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest

from simulator.core.hardware import load_gpu_specs
from simulator.core.serving.engine import (
    Replica,
    ServingCalibration,
    decode_step_seconds,
    max_batch,
    prefill_seconds,
)
from simulator.core.serving.fit import fit_serving
from simulator.core.serving.models import serving_model
from simulator.core.serving.predict import predict_case
from simulator.core.serving.queueing import Traffic, at_rate, offline_tokens_per_s
from simulator.core.serving.runs import read_runs
from simulator.core.serving.targets import Targets, goodput_rate, load_curve

ROOT = Path(__file__).resolve().parents[3]
GPUS = load_gpu_specs(str(ROOT / "pricing" / "data" / "gpus.csv"))
RUNS = pd.read_csv(ROOT / "simulator" / "data" / "inference_runs.csv")
CAL = ServingCalibration()


def _replica(model: str = "llama3.1-70b", gpu: str = "H100 SXM5-80GB", tp: int = 4,
             precision: str = "bf16") -> Replica:
    return Replica(serving_model(model), GPUS[gpu], tp, precision,
                   1.0 if precision == "fp8" else 2.0, 450.0)


def test_a_batch_of_one_decodes_at_weight_bytes_over_bandwidth() -> None:
    replica = _replica()
    step = decode_step_seconds(replica, 1, 500, CAL)
    weights = 70.55e9 * 2 / (4 * 3350e9 * CAL.memory_efficiency)
    assert weights < step < weights * 1.6  # plus overheads and collectives, not more


def test_fp8_weights_decode_faster_than_bf16() -> None:
    bf16 = decode_step_seconds(_replica(), 1, 500, CAL)
    fp8 = decode_step_seconds(_replica(precision="fp8"), 1, 500, CAL)
    assert fp8 < 0.75 * bf16


def test_decode_steps_lengthen_with_batch_and_context() -> None:
    replica = _replica()
    assert decode_step_seconds(replica, 64, 500, CAL) > decode_step_seconds(replica, 8, 500, CAL)
    assert decode_step_seconds(replica, 64, 4000, CAL) > decode_step_seconds(replica, 64, 500,
                                                                             CAL)


def test_prefill_grows_faster_than_linearly_with_prompt_length() -> None:
    replica = _replica()
    short = prefill_seconds(replica, 1000, 1000, CAL)
    long = prefill_seconds(replica, 32000, 32000, CAL)
    assert long > 32 * short


def test_70b_in_bf16_does_not_fit_one_h100_and_kv_bounds_the_batch() -> None:
    assert not _replica(tp=1).fits()
    assert max_batch(_replica(tp=1), 2000, CAL) == 0
    two = max_batch(_replica(tp=2), 2000, CAL)
    eight = max_batch(_replica(tp=8), 2000, CAL)
    assert 0 < two < eight <= CAL.batch_cap


def test_latency_rises_with_load_and_breaks_past_saturation() -> None:
    replica, traffic = _replica(), Traffic(2000, 300)
    low, high = at_rate(replica, traffic, 0.5, CAL), at_rate(replica, traffic, 3.0, CAL)
    assert low.is_stable and high.is_stable
    assert high.ttft_p99_s > low.ttft_p99_s and high.tpot_p99_s > low.tpot_p99_s
    assert low.tpot_p99_s >= low.tpot_p50_s and low.ttft_p99_s >= low.ttft_p50_s
    saturation = offline_tokens_per_s(replica, traffic, CAL) / 300
    assert not at_rate(replica, traffic, 1.2 * saturation, CAL).is_stable


def test_a_tighter_tpot_target_admits_fewer_requests() -> None:
    replica, traffic = _replica(), Traffic(2000, 300)
    loose = goodput_rate(replica, traffic, Targets(2.0, 0.100), CAL)
    tight = goodput_rate(replica, traffic, Targets(2.0, 0.040), CAL)
    assert 0 < tight < loose
    assert goodput_rate(replica, traffic, Targets(2.0, 0.001), CAL) == 0


def test_the_knee_sits_inside_the_curve_below_saturation() -> None:
    curve = load_curve(_replica(), Traffic(2000, 300), CAL)
    rates = [p.rate_per_s for p in curve.points]
    assert rates == sorted(rates)
    assert 0 < curve.knee_index < len(rates) - 1


def test_rows_are_read_with_their_stated_rules_or_refused_with_a_reason() -> None:
    readings = {r.row_id: r for r in read_runs(RUNS, GPUS)}
    d001 = readings["D001"].case
    assert d001 is not None and d001.precision == "fp8" and d001.kv_bytes == 1.0
    assert any("qformat fp8" in note for note in d001.assumptions)
    assert "disaggregation" in readings["D115"].reason
    assert readings["D116"].reason == "precision not stated in the row"
    server = readings["D002"].case
    assert server is not None and server.ttft_limit_s == 2.0 and server.tpot_limit_s == 0.2


def test_a_file_without_the_columns_is_refused_naming_them() -> None:
    with pytest.raises(ValueError, match="missing columns: .*row_id"):
        read_runs(RUNS.drop(columns=["row_id"]), GPUS)


def test_the_fit_recovers_a_compute_efficiency_from_rows_it_generated() -> None:
    truth = replace(CAL, compute_efficiency=0.35, decode_compute_efficiency=0.25)
    cases = [r.case for r in read_runs(RUNS, GPUS)
             if r.case is not None and r.case.source == "trtllm-perf-overview"][:12]
    synthetic = [replace(c, measured=(("throughput_tokens_per_s", predict_case(
        c, GPUS, truth)["throughput_tokens_per_s"]),)) for c in cases]
    fitted = fit_serving(synthetic, GPUS)
    error = sum(abs(math.log(predict_case(c, GPUS, fitted)["throughput_tokens_per_s"]
                             / c.measured_value("throughput_tokens_per_s"))) for c in synthetic)
    start = sum(abs(math.log(predict_case(c, GPUS, CAL)["throughput_tokens_per_s"]
                             / c.measured_value("throughput_tokens_per_s"))) for c in synthetic)
    assert error < 0.5 * start  # priors hold it back on 12 rows; it still halves the miss


def test_tensorrt_llm_gives_the_kv_cache_most_of_what_the_weights_leave() -> None:
    # 70B fp8 on one H100: the weights take ~66 GiB of 80; vLLM's 90 % of the whole memory
    # leaves ~4 GiB of KV, TensorRT-LLM's 90 % of what is free after the weights ~11 GiB.
    trt = replace(_replica(tp=1, precision="fp8"), framework="trtllm")
    vllm = replace(trt, framework="vllm")
    assert trt.kv_capacity_tokens() > 2 * vllm.kv_capacity_tokens() > 0


def test_fp8_math_reaches_a_smaller_share_of_its_doubled_peak() -> None:
    replica = _replica("llama3.1-8b", tp=1, precision="fp8")  # no collectives
    half = replace(CAL, fp8_efficiency_ratio=0.5)
    same = replace(CAL, fp8_efficiency_ratio=1.0)
    assert prefill_seconds(replica, 8000, 2000, half) == pytest.approx(
        2 * prefill_seconds(replica, 8000, 2000, same), rel=0.05)
    bf16 = _replica("llama3.1-8b", tp=1)
    assert prefill_seconds(bf16, 8000, 2000, half) == prefill_seconds(bf16, 8000, 2000, same)


def test_beam_search_decodes_every_beam_and_returns_one() -> None:
    replica = _replica("gptj-6b", tp=1, precision="fp8")
    greedy = offline_tokens_per_s(replica, Traffic(800, 70), CAL)
    beams = offline_tokens_per_s(replica, Traffic(800, 70, beams=4), CAL)
    assert 1.5 < greedy / beams < 4.0  # four sequences decoded per returned one, one prefill
    cases = {r.row_id: r.case for r in read_runs(RUNS, GPUS)}
    assert cases["D033"] is not None and cases["D033"].beams == 4  # MLPerf GPT-J
    assert cases["D096"] is not None and cases["D096"].beams == 1  # TRT-LLM blog GPT-J
    l40s = cases["D015"]  # NVIDIA's MLPerf TensorRT code quantizes on Ada too
    assert l40s is not None and l40s.precision == "fp8"


def test_the_first_token_waits_for_the_prompts_batched_with_it() -> None:
    from simulator.core.serving.queueing import batched_wait_quantile
    # No other arrivals: the wait is the uniform residual of the running iteration.
    assert batched_wait_quantile(0.1, 0.03, 0.0, 0.99) == pytest.approx(0.099)
    # Poisson(2) other prompts: P99 is 6 prefills (P(N <= 6) = 0.995) plus most of an iteration.
    p99 = batched_wait_quantile(0.1, 0.03, 2.0, 0.99)
    assert 5 * 0.03 < p99 < 6 * 0.03 + 0.1
    assert batched_wait_quantile(0.1, 0.03, 2.0, 0.5) < p99
    replica = _replica()
    traffic = Traffic(2000, 300)
    point = at_rate(replica, traffic, 2.0, CAL)
    prefill = prefill_seconds(replica, 2000, 2000, CAL)
    assert point.ttft_p99_s > point.ttft_p50_s > prefill  # plus a decode step of the batch


def test_mlperf_server_latencies_are_predicted_at_the_highest_passing_rate() -> None:
    case = {r.row_id: r.case for r in read_runs(RUNS, GPUS)}["D004"]
    assert case is not None
    predicted = predict_case(case, GPUS, CAL)
    assert predicted["tpot_ms"] <= 200.0 + 1e-6 and predicted["ttft_ms"] <= 2000.0 + 1e-6
    assert predicted["throughput_tokens_per_s"] > 0


def test_a_gpu_without_a_peak_gives_no_latency_rather_than_an_error() -> None:
    from simulator.core.serving.queueing import batched_wait_quantile
    assert math.isnan(batched_wait_quantile(math.nan, math.nan, math.nan, 0.99))


def test_mlperf_rows_batch_up_to_the_kv_cache_and_unstated_outputs_are_not_guessed() -> None:
    cases = {r.row_id: r.case for r in read_runs(RUNS, GPUS)}
    mixtral = cases["D025"]  # MLPerf Offline, Mixtral on one H200 per replica
    assert mixtral is not None and mixtral.is_batch_tuned
    capped = predict_case(replace(mixtral, is_batch_tuned=False), GPUS,
                          replace(CAL, batch_cap=256.0))
    tuned = predict_case(mixtral, GPUS, replace(CAL, batch_cap=256.0))
    assert tuned["throughput_tokens_per_s"] > 1.2 * capped["throughput_tokens_per_s"]
    blog = cases["D098"]  # batch 1, output length "-": its throughput is listed, not scored
    assert blog is not None and blog.unanswered == (
        "throughput_tokens_per_s: output length not stated",)
    assert math.isnan(blog.measured_value("throughput_tokens_per_s"))
    assert blog.measured_value("ttft_ms") == 7.1


def test_tensor_parallel_collectives_over_pcie_reach_their_own_share_of_the_link() -> None:
    pcie = Replica(serving_model("llama3.1-70b"), GPUS["L40S PCIe-48GB"], 4, "fp8", 1.0, 32.0)
    slow = replace(CAL, pcie_efficiency=0.25)
    fast = replace(CAL, pcie_efficiency=0.75)
    assert decode_step_seconds(pcie, 256, 1000, slow) > decode_step_seconds(pcie, 256, 1000, fast)
    nvlink = _replica(precision="fp8")  # H100 SXM over NVLink: PCIe's share does not apply
    assert decode_step_seconds(nvlink, 256, 1000, slow) == decode_step_seconds(nvlink, 256, 1000,
                                                                               fast)


def _two_nodes(model: str, pp: int, ep: int, network_gbytes_per_s: float,
               gpu: str = "H100 SXM5-80GB") -> Replica:
    return Replica(serving_model(model), GPUS[gpu], 8, "fp8", 1.0, 450.0, pp=pp, ep=ep,
                   inter_node_gbytes_per_s=network_gbytes_per_s)


def test_pipeline_stages_across_nodes_wait_for_the_network_between_them() -> None:
    fast = _two_nodes("llama3.1-405b", 2, 1, 400.0)  # 3,200 Gbit/s per node
    slow = _two_nodes("llama3.1-405b", 2, 1, 3.125)  # 25 Gbit/s per node
    assert decode_step_seconds(slow, 256, 2000, CAL) > decode_step_seconds(fast, 256, 2000, CAL)
    one_node = Replica(serving_model("llama3.1-405b"), GPUS["H100 SXM5-80GB"], 8, "fp8", 1.0,
                       450.0, pp=2)
    # Two stages hold twice the KV cache but decode no faster: they run one after another.
    assert fast.kv_capacity_tokens() > 2 * _two_nodes("llama3.1-405b", 1, 1, 400.0) \
        .kv_capacity_tokens()
    assert decode_step_seconds(one_node, 1, 2000, CAL) == pytest.approx(
        decode_step_seconds(fast, 1, 2000, CAL), rel=0.02)


def test_experts_spread_over_two_nodes_read_faster_unless_the_network_is_slow() -> None:
    tp_only = _two_nodes("deepseek-v3", 2, 1, 400.0)
    wide = _two_nodes("deepseek-v3", 2, 16, 400.0)
    narrow_network = _two_nodes("deepseek-v3", 2, 16, 3.125)
    step = decode_step_seconds(tp_only, 64, 3000, CAL)
    assert decode_step_seconds(wide, 64, 3000, CAL) < step
    assert decode_step_seconds(narrow_network, 64, 3000, CAL) > step
    dense = _two_nodes("llama3.1-405b", 2, 16, 400.0)  # no experts: EP changes nothing read
    assert dense.expert_lanes == 8


@pytest.mark.parametrize(("kwargs", "words"), [
    ({"inter_node_gbytes_per_s": 0.0}, "inter-node"),
    ({"pp": 2, "ep": 32}, "ep cannot exceed"),
])
def test_a_replica_refuses_impossible_layouts(kwargs: dict[str, float], words: str) -> None:
    with pytest.raises(ValueError, match=words):
        Replica(serving_model("deepseek-v3"), GPUS["H100 SXM5-80GB"], 8, "fp8", 1.0, 450.0,
                **kwargs)  # type: ignore[arg-type]
