"""Drawn training cards (drivers/camera/training/drawn.py): every code, its two indices where the labels say, the
suits' shapes, the fonts checked by hash. The glyphs are drawn here with OpenCV's own font (Pillow, which draws the
fonts of `FONTS`, is in the training extra only)."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from drivers.camera.training.compose import scene
from drivers.camera.training.dataset import CODES
from drivers.camera.training.drawn import FONTS, drawn_card, drawn_pieces, font_glyphs, suit_mask


def hershey(text: str, height: int) -> np.ndarray:
    """A glyph function as `drawn.font_glyphs` gives, drawn with OpenCV's Hershey font."""
    canvas = np.zeros((4 * height, 4 * height * max(1, len(text))), np.uint8)
    cv2.putText(canvas, text, (height, 3 * height), cv2.FONT_HERSHEY_DUPLEX, height / 20, 255, max(1, height // 12))
    ys, xs = np.nonzero(canvas)
    return canvas[ys.min() : ys.max() + 1, xs.min() : xs.max() + 1]


def square_of(image: np.ndarray, x: float, y: float, side: float) -> np.ndarray:
    """The labelled square's pixels (it may reach past the card's edge: 1.3 times the index's longer side)."""
    half = side / 2
    return image[max(0, round(y - half)) : round(y + half), max(0, round(x - half)) : round(x + half)]


def ink(image: np.ndarray) -> np.ndarray:
    """Pixels clearly darker or redder than the card stock."""
    b, g, r = (image[..., k].astype(int) for k in range(3))
    return np.asarray((np.minimum(np.minimum(b, g), r) < 170) | (r - np.maximum(b, g) > 50))


@pytest.mark.parametrize("code", ["AS", "10D", "QC", "7H", "2S"])
def test_a_drawn_card_has_its_index_in_both_corners_where_its_labels_say(code: str) -> None:
    piece = drawn_card(code, hershey, np.random.default_rng(3))
    height, width = piece.image.shape[:2]
    assert [label for label, *_ in piece.truths] == [CODES.index(code)] * 2
    (_, x1, y1, side1), (_, x2, y2, side2) = piece.truths
    assert x1 < width / 4 and y1 < height / 4  # top-left, and the other half a turn round from it
    assert (x2, y2, side2) == pytest.approx((width - x1, height - y1, side1))
    for _, x, y, side in piece.truths:
        square = ink(square_of(piece.image, x, y, side))
        # the index's centre: the rank above it, the suit below (the second corner's square turned back upright)
        upright = square if y < height / 2 else square[::-1, ::-1]
        middle = upright.shape[0] // 2
        assert upright[:middle].mean() > 0.05 and upright[middle:].mean() > 0.05, (code, x, y)
        assert not square[0].any() or not square[-1].any()  # and the square is the index's, not a corner of pips


def test_red_suits_are_drawn_red_and_black_suits_dark() -> None:
    rng = np.random.default_rng(5)
    for code in ("AH", "AD", "AS", "AC"):
        piece = drawn_card(code, hershey, rng)
        _, x, y, side = piece.truths[0]
        b, g, r = (int(v) for v in square_of(piece.image, x, y, side).reshape(-1, 3).min(axis=0))
        if code[1] in "HD":
            assert r - min(b, g) > 50, code
        else:
            assert max(b, g, r) < 100, code


def test_suit_shapes_are_the_height_asked_and_spades_point_up_where_clubs_are_round() -> None:
    rng = np.random.default_rng(0)
    masks = {suit: suit_mask(suit, 60, rng) for suit in "CDHS"}
    for suit, mask in masks.items():
        assert 55 <= mask.shape[0] <= 60, suit
    # the top fifth: a spade's point is narrow, a club's top lobe round and wide, a heart's two lobes wider still
    width = {suit: (mask[: mask.shape[0] // 5] > 127).sum(axis=1).max() for suit, mask in masks.items()}
    assert width["S"] < width["C"] < width["H"]
    with pytest.raises(ValueError, match="not a suit"):
        suit_mask("X", 60, rng)


def test_drawn_pieces_give_every_code_the_same_number_of_times_and_the_seed_fixes_them() -> None:
    pieces = drawn_pieces([hershey], 2, seed=7)
    assert sorted(piece.truths[0][0] for piece in pieces) == sorted(list(range(len(CODES))) * 2)
    again = drawn_pieces([hershey], 2, seed=7)
    assert all(np.array_equal(a.image, b.image) for a, b in zip(pieces, again, strict=True))
    assert not np.array_equal(pieces[0].image, drawn_pieces([hershey], 2, seed=8)[0].image)


def test_drawn_cards_in_a_scene_keep_their_labels_on_their_ink() -> None:
    pieces = drawn_pieces([hershey], 1, seed=1)
    labelled = 0
    for seed in range(6):
        frame, found = scene(pieces, np.random.default_rng(seed))
        for _, square in found:
            half = max(2, round(square.side / 4))
            x, y = round(square.x), round(square.y)
            labelled += 1
            assert ink(frame[y - half : y + half, x - half : x + half]).any(), (seed, square)
    assert labelled >= 10


def test_a_font_that_is_not_the_recorded_file_is_refused(tmp_path: Path) -> None:
    for name in FONTS:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(b"not the font")
    with pytest.raises(ValueError, match="SHA-256 differs"):
        font_glyphs(tmp_path)
    with pytest.raises(FileNotFoundError, match="train-camera installs"):
        font_glyphs(tmp_path / "elsewhere")
