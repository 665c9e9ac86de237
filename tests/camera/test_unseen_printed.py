"""bench/unseen_printed.py: reads on cards the network never saw, judged as `calibrate` judges."""

from __future__ import annotations

from bench.unseen_printed import summary
from drivers.camera.training.calibrate import threshold_of


def test_a_wrong_read_at_or_above_the_threshold_is_confident_and_listed_with_the_card_under_it() -> None:
    reads = [
        {"lead": 0.95, "code": "9S", "on": ["9C"], "scene": 4, "corners": 2, "side": 27},
        {"lead": 0.70, "code": "2C", "on": ["2S"], "scene": 1, "corners": 1, "side": 60},
        {"lead": 0.90, "code": "KD", "on": ["KD"], "scene": 2, "corners": 1, "side": 52},
        {"lead": 0.50, "code": "QH", "on": ["QH"], "scene": 3, "corners": 1, "side": 20},
        # on two indices, one of them its own: right
        {"lead": 0.863, "code": "AS", "on": ["AC", "AS"], "scene": 5, "corners": 1, "side": 31},
    ]
    result = summary(reads, 0.863)
    assert (result["reads"], result["right"], result["sure_right"]) == (5, 3, 2)
    assert result["confident_wrong"] == 1
    assert result["confident_wrong_reads"] == [{"read": "9S", "on": ["9C"], "lead": 0.95, "corners": 2, "side": 27,
                                                "scene": 4}]  # fmt: skip
    # by the side of the read's largest index square: 24 up to 32 px, 32 up to 40, ..., 52 px and more
    assert result["by_side_px"] == {
        "0-24": {"reads": 1, "sure_right": 0, "confident_wrong": 0},
        "24-32": {"reads": 2, "sure_right": 1, "confident_wrong": 1},
        "32-40": {"reads": 0, "sure_right": 0, "confident_wrong": 0},
        "40-52": {"reads": 0, "sure_right": 0, "confident_wrong": 0},
        "52+": {"reads": 2, "sure_right": 1, "confident_wrong": 0},
    }
    assert result["highest_wrong_leads"] == [0.95, 0.7]
    assert result["threshold_these_scenes_set"] == threshold_of([0.95, 0.70]) == 0.97


def test_no_wrong_read_sets_no_threshold_above_the_floor() -> None:
    result = summary([{"lead": 0.99, "code": "KD", "on": ["KD"], "scene": 0, "corners": 1, "side": 40}], 0.863)
    assert result["confident_wrong"] == 0 and result["confident_wrong_reads"] == []
    assert result["threshold_these_scenes_set"] == threshold_of([])
