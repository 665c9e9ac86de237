"""The benchmark's studio renders (tests/camera/scenes.py): each real card cut along its outline (`card_outline`),
cloth beyond the table's edges, and each read scored on the uppermost card under its index squares (`owners`)."""

from __future__ import annotations

import math

import cv2
import numpy as np
import pytest

from drivers.camera.recognize import CardRead
from tests.camera.scenes import Card, card_outline, owners, rectified_card, studio_scene


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


def _read(*squares: tuple[int, int, int, int]) -> CardRead:
    x0, y0 = min(s[0] for s in squares), min(s[1] for s in squares)
    x1, y1 = max(s[0] + s[2] for s in squares), max(s[1] + s[3] for s in squares)
    box = (x0, y0, x1 - x0, y1 - y0)
    return CardRead("Q", "H", 0.9, 0.9, 0.9, box, np.zeros((4, 2), np.float32), indices=squares)


def test_a_read_belongs_to_the_uppermost_card_under_each_of_its_index_squares() -> None:
    """`studio_scene` lays each card over the ones before it: a read of an index printed on the upper of two
    overlapping cards is that card's only (scored as a wrong read of the card beneath until 2026-12-05); a card read
    by both corners belongs to it even when its box's centre lies on another card; a read on no card belongs to none."""
    square = np.array([[0, 0], [100, 0], [100, 140], [0, 140]], dtype=np.float32)
    lower, upper, apart = (Card(code, square + np.array([shift, 0], np.float32))
                           for code, shift in (("KS", 0), ("QH", 60), ("2C", 400)))  # fmt: skip
    placed = [lower, upper, apart]
    on_both = _read((70, 10, 20, 20))  # where the two first cards overlap: the upper one shows
    on_lower_only = _read((10, 10, 20, 20))
    two_corners = _read((410, 10, 20, 20), (470, 110, 20, 20))  # box centre (450, 70): still the card at 400
    nowhere = _read((300, 300, 20, 20))
    assert owners([on_both, on_lower_only, two_corners, nowhere], placed) == [{1}, {0}, {2}, {None}]


@pytest.mark.parametrize("tilt", [40.0, 50.0])
def test_the_table_seen_at_a_slant_shows_cloth_beyond_its_far_corners(tilt: float) -> None:
    """The far edge of a table seen at a slant is narrower than the frame: beyond it the render shows more cloth,
    not a reflection of the table (which showed mirrored cards there until 2026-12-05: thousands of card pixels in
    every such frame of white cards)."""
    white_card = np.full((176, 126, 3), 245, np.uint8)
    cards = [(code, white_card) for code in ("AS", "KD", "QH", "2C", "3D", "4S")]
    width, height = 1280, 720
    narrower = width * 0.35 * math.sin(math.radians(tilt)) / 2  # the far edge's inset on each side
    rows, columns = np.mgrid[0:height, 0:width]
    inset = narrower * (1 - rows / height) - 3
    beyond = (columns < inset) | (columns > width - 1 - inset)
    for seed in range(2):
        frame, _ = studio_scene(cards, (width, height), seed, tilt, cloth=(30, 90, 40))
        card_pixels = frame.min(axis=2) > 180
        assert card_pixels.sum() > 10_000  # the six cards are on the table
        assert not (card_pixels & beyond).any()
