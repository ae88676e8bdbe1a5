"""The calibration envelope: each axis a prediction can be outside, said in words, measured
as a distance, and the band width each envelope group gets from out-of-family residuals."""

from __future__ import annotations

import numpy as np
import pytest

from simulator.core import Calibration
from simulator.core.crossval import Residuals, with_bands
from simulator.core.domain import (
    BATCH_DEFAULT_NOTE,
    CalibrationDomain,
    DomainPoint,
    assess,
    assess_many,
    domain_from_points,
)
from simulator.core.envelope import ENVELOPE_GROUPS, envelope_group_index
from simulator.core.reference_runs import run_year

H100 = ("H100 SXM5-80GB", "Hopper", "bf16")
# H100 bf16 runs at 64-512 GPUs, pipelines up to 8 deep, up to 2B parameters per GPU, from
# 2023-2024, steady-state speed and whole runs; no consumer part.
DOMAIN = domain_from_points([
    DomainPoint(*H100, 64, 2048, pp=1, params_per_gpu=1.0, year=2023),
    DomainPoint(*H100, 512, 8192, pp=8, params_per_gpu=2.0, year=2024,
                metric_kind="whole_run"),
])


def _inside(**changes: object) -> DomainPoint:
    values: dict[str, object] = {"gpu_name": H100[0], "architecture": H100[1],
                                 "precision": H100[2], "n_gpus": 256, "seq_len": 4096,
                                 "pp": 4, "params_per_gpu": 1.5, "year": 2024}
    return DomainPoint(**{**values, **changes})  # type: ignore[arg-type]


@pytest.mark.parametrize(("changes", "axis", "words", "group"), [
    ({"gpu_name": "H200 SXM-141GB"}, "gpu",
     "no calibration runs of the H200 SXM-141GB at 16bit", "near"),
    ({"gpu_name": "B200 HGX-180GB", "architecture": "Blackwell"}, "architecture",
     "no calibration runs of Blackwell at 16bit", "unseen"),
    ({"n_gpus": 16384}, "gpu_count",
     "16,384 GPUs is more than the largest calibration run (512 GPUs)", "far"),
    ({"n_gpus": 1024}, "gpu_count",
     "1,024 GPUs is more than the largest calibration run (512 GPUs)", "near"),
    ({"pp": 32}, "pipeline", "a 32-stage pipeline is deeper than any calibration run's (8)",
     "far"),
    ({"params_per_gpu": 8.0}, "model", "8B parameters per GPU", "far"),
    ({"seq_len": 131072}, "seq_len", "sequence of 131,072 tokens outside the calibrated "
     "2,048-8,192", "far"),
    ({"year": 2021}, "era", "a 2021 run; the calibration runs date from 2023-2024", "near"),
    ({"metric_kind": "time"}, "metric", "reports benchmark times to train", "near"),
])
def test_each_axis_outside_is_listed_measured_and_said(changes, axis, words, group):
    verdict = assess(DOMAIN, _inside(**changes))
    assert verdict.envelope == (axis,)
    assert words in verdict.envelope_note
    assert verdict.envelope_note.startswith("outside the calibration envelope: ")
    assert verdict.envelope_group == group
    assert verdict.envelope_distance > 0


def test_inside_every_axis_says_nothing_and_unknown_years_are_not_judged():
    for point in (_inside(), _inside(year=0), _inside(metric_kind="whole_run")):
        verdict = assess(DOMAIN, point)
        assert (verdict.envelope, verdict.envelope_distance, verdict.envelope_note) == (
            (), 0.0, "")


def test_a_consumer_part_is_outside_until_one_is_calibrated():
    rtx = ("GeForce RTX 4090 PCIe-24GB", "Ada Lovelace", "fp16")
    point = DomainPoint(*rtx, 2, 512, "llm")
    assert "consumer" in assess(DOMAIN, point).envelope
    with_rtx = domain_from_points([DomainPoint(*rtx, 1, 512)])
    assert "consumer" not in assess(with_rtx, point).envelope


def test_several_axes_add_up_and_the_note_names_each_with_the_settings():
    verdict = assess(DOMAIN, _inside(n_gpus=2048, pp=16, is_batch_default=True))
    assert verdict.envelope == ("gpu_count", "pipeline")
    assert verdict.envelope_distance == pytest.approx(2.0 + 1.0)
    assert "2,048 GPUs" in verdict.envelope_note and "16-stage" in verdict.envelope_note
    assert verdict.envelope_note.endswith(BATCH_DEFAULT_NOTE)


def test_fewer_gpus_than_any_run_count_half():
    verdict = assess(DOMAIN, _inside(n_gpus=16))
    assert verdict.envelope == ("gpu_count",) and verdict.envelope_distance == pytest.approx(1.0)
    assert "16 GPUs is below the smallest calibration run (64 GPUs)" in verdict.envelope_note


def test_groups_split_at_zero_and_one_and_an_unseen_architecture_is_its_own():
    index = envelope_group_index(np.array([0.0, 0.01, 1.0, 1.01, 7.0, 2.0]),
                                 np.array([0.0, 0.0, 0.0, 0.0, 0.0, 2.0]))
    assert [ENVELOPE_GROUPS[i] for i in index] == ["inside", "near", "near", "far", "far",
                                                   "unseen"]


def test_vectorised_layouts_match_one_by_one():
    counts, pps = np.array([64.0, 1024.0, 16384.0, 256.0]), np.array([1.0, 4.0, 32.0, 16.0])
    per_gpu = np.array([0.5, 1.0, 8.0, 3.0])
    many = assess_many(DOMAIN, *H100, counts, 4096, pp=pps, params_per_gpu=per_gpu,
                       metric_kind="whole_run")
    for i in range(len(counts)):
        one = assess(DOMAIN, DomainPoint(*H100, counts[i], 4096, pp=pps[i],
                                         params_per_gpu=per_gpu[i], metric_kind="whole_run"))
        assert many.notes[i] == one.envelope_note and many.group[i] == one.envelope_group
        assert many.band_scale[i] == pytest.approx(one.band_scale)
        assert many.envelope[i] == ";".join(one.envelope)


def test_a_domain_stored_before_the_envelope_axes_still_loads_and_judges_what_it_has():
    old = {"gpus": [{"key": "H100 SXM5-80GB|16bit|llm", "n_rows": 3, "min_gpus": 8.0,
                     "max_gpus": 512.0, "min_seq_len": 2048.0, "max_seq_len": 8192.0}],
           "architectures": [{"key": "Hopper|16bit|llm", "n_rows": 3, "min_gpus": 8.0,
                              "max_gpus": 512.0, "min_seq_len": 2048.0,
                              "max_seq_len": 8192.0}]}
    domain = CalibrationDomain.from_dict(old)
    assert assess(domain, _inside(pp=64, params_per_gpu=50.0, year=2019)).envelope == ()
    assert assess(domain, _inside(n_gpus=4096)).envelope == ("gpu_count",)
    assert CalibrationDomain.from_dict(DOMAIN.to_dict()) == DOMAIN


@pytest.mark.parametrize(("source", "year"), [
    ("MLPerf Training v2.1 results: NVIDIA dgxh100_preview (bert)", 2022),
    ("Efficient Large-Scale Language Model Training ... (Narayanan et al., SC21)", 2021),
    ("Touvron et al. 2023, LLaMA (arXiv 2302.13971)", 2023),
    ("Nemotron-4 15B Technical Report (arXiv 2402.16819), Section 2", 2024),
    ("torchtitan benchmarks/llama3_h100_202412_torchtitan.md (..., Dec 2024)", 2024),
    ("MPT Training Benchmarks (mosaicml/llm-foundry README.md)", 0),
])
def test_the_run_year_is_read_from_the_source(source, year):
    assert run_year({"source": source}) == year
    assert run_year({"source": source, "run_year": 2020}) == 2020


def test_each_envelope_group_gets_the_width_its_held_out_rows_needed():
    rng = np.random.default_rng(7)
    n = 600
    group = rng.integers(0, 3, n)
    # inside rows err 10 % (log sd), near 20 %, far 40 %: one band class
    residuals = rng.normal(0.0, np.array([0.1, 0.2, 0.4])[group])
    data = Residuals(residuals, group, np.ones(n))
    classes = np.full(n, "llm")
    cal = with_bands(Calibration(), data, classes, np.ones(n, dtype=bool))
    scales = np.array(cal.domain.envelope_scales)
    low, high = cal.band_quantiles("llm")
    assert scales[0] < scales[1] < scales[2]
    assert scales[2] / scales[0] == pytest.approx(4.0, rel=0.25)
    for g in range(3):
        rows = group == g
        covered = (residuals[rows] >= low * scales[g]) & (residuals[rows] <= high * scales[g])
        assert 0.75 <= covered.mean() <= 0.86


def test_a_farther_group_is_never_narrower_and_short_groups_keep_their_prior():
    n = 60
    group = np.array([0] * 30 + [1] * 25 + [2] * 5)
    residuals = np.concatenate([np.linspace(-0.3, 0.3, 30), np.linspace(-0.1, 0.1, 25),
                                np.linspace(-1.0, 1.0, 5)])
    cal = with_bands(Calibration(), Residuals(residuals, group, np.ones(n)),
                     np.full(n, "llm"), np.ones(n, dtype=bool))
    inside, near, far, unseen = cal.domain.envelope_scales
    assert near == pytest.approx(inside)  # its own rows needed less: kept at the inside width
    assert unseen >= far >= near
