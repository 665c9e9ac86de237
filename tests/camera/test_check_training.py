"""The suit checks' training crops (drivers/camera/training/check.py, `suit_pair`): each check learns from the crops of
its two suits only, never from a non-index crop, labelled by the suit (the training itself needs torch, installed for
training only)."""

from __future__ import annotations

import numpy as np
import pytest

from drivers.camera.training.check import suit_pair
from drivers.camera.training.dataset import CLASSES, NONE


@pytest.mark.parametrize("suits", ["CS", "DH"])
def test_a_suit_check_learns_its_two_suits_labelled_by_suit(suits: str) -> None:
    labels = np.array([*range(len(CLASSES)), NONE, NONE])  # every card, and crops of no index
    crops = labels * 10  # a crop stands for its label here
    kept, answer = suit_pair(suits)(crops, labels)
    codes = [CLASSES[crop // 10] for crop in kept]
    assert len(codes) == 26 and {code[-1] for code in codes} == set(suits)  # 13 ranks of each of its suits
    assert "none" not in codes
    assert answer.tolist() == [int(code[-1] == suits[1]) for code in codes]  # 1 for its second suit
