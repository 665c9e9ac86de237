"""The benchmark's studio renders cut each real card along its outline (tests/camera/scenes.py: `card_outline`)."""

from __future__ import annotations

import math

import cv2
import numpy as np
import pytest

from tests.camera.scenes import card_outline, rectified_card


def _photo(turn_degrees: float) -> tuple[np.ndarray, np.ndarray, tuple[int, int, int, int]]:
    """A white 126 x 176 card with a dark mark in its top-left corner, turned, on brown wood; its true corners
    (clockwise from its top left) and the least upright box around it, as the labels give it."""
    photo = np.zeros((400, 400, 3), np.uint8)
    photo[:] = (40, 80, 130)
    photo += np.random.default_rng(1).integers(0, 20, photo.shape, dtype=np.uint8)
    angle = math.radians(turn_degrees)
    rotation = np.array([[math.cos(angle), -math.sin(angle)], [math.sin(angle), math.cos(angle)]])
    half = np.array([[-63, -88], [63, -88], [63, 88], [-63, 88]], dtype=np.float64)
    corners = (half @ rotation.T + [200, 200]).astype(np.float32)
    cv2.fillConvexPoly(photo, np.round(corners).astype(np.int32), (235, 235, 235))
    mark = (np.array([[-50, -75], [-35, -75], [-35, -50], [-50, -50]]) @ rotation.T + [200, 200]).astype(np.int32)
    cv2.fillConvexPoly(photo, mark, (20, 20, 20))
    x, y, w, h = cv2.boundingRect(corners)
    return photo, corners, (x, y, x + w, y + h)


@pytest.mark.parametrize("turn", [0.0, 12.0, -20.0, 35.0])
def test_a_slanted_card_is_found_by_its_corners(turn: float) -> None:
    photo, truth, box = _photo(turn)
    corners = card_outline(photo, box)
    assert corners is not None
    assert np.abs(corners - truth).max() < 4, (corners, truth)


def test_the_rectified_card_is_upright_with_its_index_top_left_and_no_table() -> None:
    photo, _, box = _photo(25.0)
    card = rectified_card(photo, box)
    assert card is not None
    height, width = card.shape[:2]
    assert abs(height / width - 88 / 63) < 0.02
    darkest = card.min(axis=2)
    inner = darkest[3:-3, 3:-3]
    # the wood's darkest channel is under 60: none of it is left inside the card, but for the mark
    assert (inner < 60).mean() < 0.03
    assert darkest[int(0.2 * height), int(0.15 * width)] < 60  # the mark: top left


def test_a_box_holding_no_card_gives_none() -> None:
    wood = np.full((300, 300, 3), (40, 80, 130), np.uint8)
    assert card_outline(wood, (50, 50, 176, 226)) is None
