"""A history's energy and CO2e per GPU type and place, and the burst move (hand-checked)."""

import pandas as pd
import pytest

from planner.purchase_mix.core.carbon import BurstInput, burst_moves, history_carbon

FACTORS = pd.DataFrame([
    {"provider": "aws", "region": "us-east-1", "g_co2e_per_kwh": 379.069, "pue": 1.135,
     "year": "2020", "source": "CCF"},
    {"provider": "gcp", "region": "europe-north1", "g_co2e_per_kwh": 39.0, "pue": 1.09,
     "year": "2024", "source": "Google"},
])
TDP = {"A100": 400.0, "H100": 700.0}


def test_energy_and_co2e_per_type_and_place_by_hand():
    usage = pd.DataFrame({"gpu_type": ["A100", "A100", "H100", "L4"],
                          "provider": ["aws", "aws", "lambda", "aws"],
                          "region": ["us-east-1"] * 4, "gpu_hours": [600.0, 400.0, 100.0, 5.0]})
    rows = {(r.gpu_type, r.provider): r for r in history_carbon(usage, TDP, FACTORS)}
    a100 = rows[("A100", "aws")]
    assert a100.gpu_hours == 1000.0 and a100.energy_kwh == pytest.approx(400.0)
    assert a100.co2e_kg == pytest.approx(400.0 * 1.135 * 379.069 / 1000)
    assert rows[("H100", "lambda")].co2e_kg is None
    assert rows[("H100", "lambda")].basis == "no carbon data for Lambda us-east-1"
    assert rows[("L4", "aws")].energy_kwh is None and "no TDP" in rows[("L4", "aws")].basis


def test_moving_the_burst_saves_its_share_of_co2e_at_the_price_difference():
    prices = pd.DataFrame({"gpu_type": ["A100", "A100", "A100"],
                           "provider": ["aws", "gcp", "lambda"],
                           "region": ["us-east-1", "europe-north1", "us-east-1"],
                           "usd_per_gpu_hour": [4.10, 4.60, 1.29]})
    moves = burst_moves([BurstInput("A100", "aws", "us-east-1", 250.0, 4.10)], prices, TDP,
                        FACTORS)
    move = moves[0]
    assert (move.to_provider, move.to_region) == ("gcp", "europe-north1")
    # 250 GPU-h × 0.4 kW = 100 kWh; (1.135 × 379.069 − 1.09 × 39) g/kWh
    assert move.co2e_saved_kg == pytest.approx(100.0 * (1.135 * 379.069 - 1.09 * 39.0) / 1000)
    assert move.cost_change_usd == pytest.approx(250.0 * 0.50)
    assert "Google Cloud europe-north1" in move.words


def test_no_priced_region_with_data_gives_no_move():
    prices = pd.DataFrame({"gpu_type": ["H100"], "provider": ["lambda"], "region": ["x"],
                           "usd_per_gpu_hour": [2.5]})
    move = burst_moves([BurstInput("H100", "lambda", "x", 10.0, 2.5)], prices, TDP, FACTORS)[0]
    assert move.co2e_saved_kg is None and move.words == "no priced region with carbon data"


def test_bad_usage_is_refused():
    with pytest.raises(ValueError, match="gpu_hours must be >= 0"):
        history_carbon(pd.DataFrame({"gpu_type": ["A100"], "provider": ["aws"],
                                     "region": ["us-east-1"], "gpu_hours": [-1.0]}), TDP, FACTORS)
