"""bench/unseen_printed.py: reads on cards the network never saw, judged as `calibrate` judges."""

from __future__ import annotations

from bench.unseen_printed import summary
from drivers.camera.training.calibrate import threshold_of


def test_a_wrong_read_at_or_above_the_threshold_is_confident_and_listed_with_the_card_under_it() -> None:
    reads = [
        {"lead": 0.95, "code": "9S", "on": ["9C"], "scene": 4, "corners": 2},
        {"lead": 0.70, "code": "2C", "on": ["2S"], "scene": 1, "corners": 1},
        {"lead": 0.90, "code": "KD", "on": ["KD"], "scene": 2, "corners": 1},
        {"lead": 0.50, "code": "QH", "on": ["QH"], "scene": 3, "corners": 1},
        # on two indices, one of them its own: right
        {"lead": 0.863, "code": "AS", "on": ["AC", "AS"], "scene": 5, "corners": 1},
    ]
    result = summary(reads, 0.863)
    assert (result["reads"], result["right"], result["sure_right"]) == (5, 3, 2)
    assert result["confident_wrong"] == 1
    assert result["confident_wrong_reads"] == [{"read": "9S", "on": ["9C"], "lead": 0.95, "corners": 2, "scene": 4}]
    assert result["highest_wrong_leads"] == [0.95, 0.7]
    assert result["threshold_these_scenes_set"] == threshold_of([0.95, 0.70]) == 0.97


def test_no_wrong_read_sets_no_threshold_above_the_floor() -> None:
    result = summary([{"lead": 0.99, "code": "KD", "on": ["KD"], "scene": 0, "corners": 1}], 0.863)
    assert result["confident_wrong"] == 0 and result["confident_wrong_reads"] == []
    assert result["threshold_these_scenes_set"] == threshold_of([])
