"""bench/camera_stages.py: each stage's own time, without the stages it calls."""

from __future__ import annotations

import time
from types import SimpleNamespace

import pytest

from bench.camera_stages import Stages


def test_a_stage_is_timed_without_the_stages_it_calls() -> None:
    def network(crops: int) -> int:
        time.sleep(0.02)
        return crops

    def step() -> int:
        time.sleep(0.01)
        return namespace.network(3) + namespace.network(4)

    namespace = SimpleNamespace(network=network, step=step)
    stages = Stages()
    stages.wrap(namespace, "network", lambda crops: f"network {crops}")
    stages.wrap(namespace, "step", "step")
    assert namespace.step() == 7  # wrapped functions still answer
    assert stages.calls == {"network 3": 1, "network 4": 1, "step": 1}
    assert stages.seconds["network 3"] == pytest.approx(0.02, abs=0.008)
    assert stages.seconds["step"] == pytest.approx(0.01, abs=0.008)  # its own sleep, not the networks' 40 ms


def test_a_stage_that_raises_is_closed_and_its_caller_too() -> None:
    def failing() -> None:
        raise ValueError("bad frame")

    def outer() -> None:
        namespace.failing()

    namespace = SimpleNamespace(failing=failing, outer=outer)
    stages = Stages()
    stages.wrap(namespace, "failing", "failing")
    stages.wrap(namespace, "outer", "outer")
    with pytest.raises(ValueError, match="bad frame"):
        namespace.outer()
    assert stages.calls == {"failing": 1, "outer": 1}
    assert stages._open == []  # the next stage timed is not charged to a stage left open
