"""Simulation requests: what is missing is named, not refused."""

import pytest

from simulator.requests import NOT_PREDICTED_NOTE, inputs_from_request, without_time


def test_a_request_without_a_goal_is_answered_without_time() -> None:
    inputs = inputs_from_request({"workload": {"preset": "llama2-7b"}, "goal": {}})
    assert inputs.missing == ("tokens_or_samples_total",)
    result = without_time({"tokens_per_second": 1e5, "time_to_train_hours": 3.0,
                           "gpu_hours": 24.0}, inputs)
    assert result["tokens_per_second"] == 1e5
    assert result["time_to_train_hours"] is None and result["gpu_hours"] is None
    assert result["not_predicted"] == NOT_PREDICTED_NOTE
    assert NOT_PREDICTED_NOTE.startswith("not predicted: missing tokens_or_samples_total")


def test_a_request_with_a_goal_keeps_its_time() -> None:
    inputs = inputs_from_request({"workload": {"preset": "llama2-7b"},
                                  "goal": {"tokens": 1e9}})
    assert inputs.missing == () and inputs.goal.tokens == 1e9
    assert without_time({"time_to_train_hours": 3.0}, inputs) == {"time_to_train_hours": 3.0}


@pytest.mark.parametrize("goal", [{"tokens": 0}, {"tokens": -5}, {"tokens": "many"}])
def test_a_bad_goal_is_still_refused_with_its_field(goal: dict) -> None:
    with pytest.raises(ValueError, match="goal"):
        inputs_from_request({"workload": {"preset": "llama2-7b"}, "goal": goal})
