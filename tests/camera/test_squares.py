"""The squares the reader reads (drivers/camera/squares.py): the index corners of whole card outlines, at a slant,
in zones; bad frames."""

from __future__ import annotations

import math
from dataclasses import replace

import cv2
import numpy as np
import pytest

from drivers.camera.detect import (
    CARD_H,
    CARD_W,
    DetectorConfig,
    Zone,
    _clearly_light,
    _cut_apart,
    _grey_levels,
    _shrunk,
    find_cards,
    whiteness,
)
from drivers.camera.indices import Proposal
from drivers.camera.squares import OUTLINES, RULES, USUAL_INDEX, outline_squares, squares
from tests.camera.render import pip, render_card


def _index_centres(code: str) -> tuple[np.ndarray, float]:
    """Where the drawn card's two indices are, in its own pixels (top-left and bottom-right), and their height:
    the box of the print in its top-left corner."""
    card, _ = render_card(code)
    height, width = card.shape[:2]
    corner = card[: int(0.3 * height), : int(0.2 * width)].min(axis=2) < 128
    ys, xs = np.nonzero(corner)
    x, y = (xs.min() + xs.max()) / 2, (ys.min() + ys.max()) / 2
    return np.array([[x, y], [width - 1 - x, height - 1 - y]], dtype=np.float32), float(ys.max() - ys.min())


def _lay(frame: np.ndarray, code: str, corners: np.ndarray) -> np.ndarray:
    """Draw the card with its corners (clockwise from its top-left) at `corners`; returns where its two index
    centres landed."""
    card, mask = render_card(code)
    height, width = card.shape[:2]
    source = np.array([[0, 0], [width - 1, 0], [width - 1, height - 1], [0, height - 1]], dtype=np.float32)
    matrix = cv2.getPerspectiveTransform(source, corners.astype(np.float32))
    size = (frame.shape[1], frame.shape[0])
    warped = cv2.warpPerspective(card, matrix, size, flags=cv2.INTER_AREA)
    alpha = cv2.warpPerspective(mask, matrix, size, flags=cv2.INTER_LINEAR)[..., None].astype(np.float32) / 255
    frame[:] = (frame * (1 - alpha) + warped * alpha).astype(np.uint8)
    centres, _ = _index_centres(code)
    return np.asarray(cv2.perspectiveTransform(centres[None], matrix)[0])


def _felt() -> np.ndarray:
    frame = np.empty((720, 1280, 3), np.uint8)
    frame[:] = (40, 105, 35)
    return frame


def _card_corners(centre: tuple[float, float], width: float, turn: float, squash: float = 1.0) -> np.ndarray:
    """A card `width` pixels wide turned `turn` degrees, then seen by a camera tilted towards the top of the frame:
    its height on screen times `squash` (cos of the tilt)."""
    height = width * 88 / 63
    local = np.array([[-width / 2, -height / 2], [width / 2, -height / 2], [width / 2, height / 2],
                      [-width / 2, height / 2]])  # fmt: skip
    theta = math.radians(turn)
    rotation = np.array([[math.cos(theta), -math.sin(theta)], [math.sin(theta), math.cos(theta)]])
    turned = local @ rotation.T
    return np.asarray(turned * [1.0, squash] + centre, dtype=np.float32)


def _frames(square: Proposal, centre: np.ndarray, side: float, direction: np.ndarray) -> bool:
    """The square holds the index: centred on it (a quarter of its side), about its size, turned along `direction`
    (the index's own vertical on screen) either way up."""
    angle = math.degrees(math.atan2(float(direction[0]), float(direction[1])))
    turn = abs((square.angle - angle + 90) % 180 - 90)
    near = math.hypot(square.x - centre[0], square.y - centre[1]) <= 0.25 * side
    return near and 0.67 <= square.side / side <= 1.5 and turn <= 20


@pytest.mark.parametrize("turn", [0.0, 35.0, 90.0, 160.0])
def test_both_indices_of_a_card_on_felt_are_framed_at_any_turn(turn: float) -> None:
    frame = _felt()
    corners = _card_corners((640, 360), 150, turn)
    centres = _lay(frame, "7C", corners)
    _, index_height = _index_centres("7C")
    side = 1.3 * index_height * 150 / render_card("7C")[0].shape[1]
    down = corners[3] - corners[0]  # the card's (and each index's) vertical
    found = [square for square, zone in outline_squares(frame) if zone is None]
    for centre in centres:
        assert any(_frames(square, centre, side, down) for square in found), (turn, centre, found)


def test_a_card_seen_at_a_slant_is_framed_where_the_default_outline_rules_refuse_it() -> None:
    """A camera 50 degrees off vertical foreshortens a card lying across the view to 0.64 of its height: a card
    88 mm long then looks squarer than a card should (aspect 1.1); seen from above, the detector's default rules
    refuse it, the reader's accept it and frame its indices."""
    frame = _felt()
    corners = _card_corners((640, 360), 150, 0.0, squash=math.cos(math.radians(50)))
    centres = _lay(frame, "7H", corners)
    assert find_cards(frame, config=DetectorConfig()) == []
    assert len(find_cards(frame, config=OUTLINES)) == 1
    _, index_height = _index_centres("7H")
    side = 1.3 * index_height * 150 / render_card("7H")[0].shape[1] * math.cos(math.radians(50))
    found = [square for square, _ in outline_squares(frame)]
    for centre in centres:
        assert any(_frames(square, centre, side, corners[3] - corners[0]) for square in found), (centre, found)


def test_in_zones_only_the_cards_of_each_zone_are_framed_and_named() -> None:
    frame = _felt()
    inside = _lay(frame, "9D", _card_corners((300, 360), 140, 20.0))
    outside = _lay(frame, "KS", _card_corners((980, 360), 140, -15.0))
    zones = [Zone("player", (150, 150, 320, 420))]
    found = outline_squares(frame, zones)
    assert found and all(zone == "player" for _, zone in found)
    assert all(math.hypot(s.x - x, s.y - y) > 100 for s, _ in found for x, y in outside)
    assert any(math.hypot(s.x - x, s.y - y) < 15 for s, _ in found for x, y in inside)
    # all the reader's squares: the zone's glyph pairs too, and nothing from outside the zone
    every = squares(frame, zones)
    assert len(every) > len(found)
    assert all(zone == "player" and 150 - 40 <= s.x <= 470 + 40 for s, zone in every)


def test_on_a_pale_table_outlines_are_left_to_the_glyph_pairs() -> None:
    """On a table as light as the cards only edges would find the outline; the outline squares leave such a table
    to the glyph pairs, which still frame the card's indices."""
    frame = np.full((720, 1280, 3), (205, 215, 225), np.uint8)
    centres = _lay(frame, "7C", _card_corners((640, 360), 150, 25.0))
    assert outline_squares(frame) == []
    assert any(math.hypot(s.x - x, s.y - y) < 15 for s, _ in squares(frame) for x, y in centres)


@pytest.mark.parametrize(
    ("table", "dark", "clearly_light"),
    [
        ((40, 105, 35), True, False),
        ((30, 30, 30), True, False),
        ((90, 90, 90), True, False),
        ((115, 115, 115), False, False),
        ((150, 140, 130), False, True),
        ((205, 215, 225), False, True),
    ],
    ids=["felt", "black", "grey", "light grey", "wood", "pale"],
)
def test_a_table_passed_over_at_a_glance_is_never_one_the_thresholds_call_dark(
    table: tuple[int, int, int], dark: bool, clearly_light: bool
) -> None:
    """The outline squares look at a sixteenth of the pixels first and pass over a table far from dark; the
    thresholds' own test (on the frame shrunk by area) decides the rest: a grey felt (a third of the cards'
    whiteness) is searched, a light grey table between the two is left to that test and passed over."""
    frame = np.empty((720, 1280, 3), np.uint8)
    frame[:] = table
    for centre in ((420, 360), (860, 360)):
        _lay(frame, "7C", _card_corners(centre, 150, 25.0))
    _, shade, high = _grey_levels(whiteness(_shrunk(frame, 4)))
    assert (shade < OUTLINES.dark_table * high) == dark
    assert _clearly_light(frame) == clearly_light
    assert bool(outline_squares(frame)) == dark


@pytest.mark.parametrize(
    "frame",
    [
        np.zeros((8, 8, 3), np.uint8),
        np.full((720, 1280, 3), 255, np.uint8),
        np.full((720, 1280, 3), 30, np.uint8),
        np.random.default_rng(3).integers(0, 256, (720, 1280, 3), dtype=np.uint8),
    ],
    ids=["tiny", "white", "dark", "noise"],
)
def test_frames_with_no_card_give_no_outline_square(frame: np.ndarray) -> None:
    assert outline_squares(frame) == []


def _centre_found(detections: list, corners: np.ndarray, tolerance: float) -> bool:
    centre = corners.mean(axis=0)
    return any(math.hypot(*(d.quad.mean(axis=0) - centre)) <= tolerance for d in detections)


@pytest.mark.parametrize(("offset", "turn"), [((95, 70), 30.0), ((140, 40), 15.0), ((-60, 130), -55.0)])
def test_touching_cards_are_cut_apart_into_two_cards(offset: tuple[int, int], turn: float) -> None:
    """Two cards dealt so that one lies over the other's corner, or side by side at a slant and touching: their
    outline is one shape, no card's; cut where the outlines cross, each piece is a card and both are found."""
    frame = _felt()
    under = _card_corners((560, 330), 150, 0.0)
    over = _card_corners((560 + offset[0], 330 + offset[1]), 150, turn)
    _lay(frame, "7C", under)
    _lay(frame, "KD", over)
    whole = find_cards(frame, config=DetectorConfig(aspect=(1.0, 2.5), edge_width=0, dark_tables_only=True))
    assert not (_centre_found(whole, under, 25) and _centre_found(whole, over, 25))  # merged: not both cards
    found = find_cards(frame, config=OUTLINES)
    assert _centre_found(found, over, 15), found
    assert _centre_found(found, under, 35), found  # the card underneath lacks the part under the other


@pytest.mark.parametrize("turn", [30.0, 50.0, 125.0])
def test_a_turned_card_seen_far_off_vertical_is_found(turn: float) -> None:
    """A card turned on the table and seen 48 degrees off vertical is a quadrilateral with no right angle: it fills
    its rectangle less than a card seen from above, and only the slanted bound (`slanted_fill`) finds it."""
    frame = _felt()
    corners = _card_corners((640, 360), 110, turn, squash=math.cos(math.radians(48)))
    _lay(frame, "QH", corners)
    (_, (width, height), _) = cv2.minAreaRect(corners)
    assert cv2.contourArea(corners) / (width * height) < OUTLINES.min_fill  # what the strict bound turns away
    assert not _centre_found(find_cards(frame, config=replace(OUTLINES, slanted_fill=1.0)), corners, 10)
    assert _centre_found(find_cards(frame, config=OUTLINES), corners, 10)


def _card_with_index_at(centre_y: int) -> np.ndarray:
    """Felt with one upright card 150 x 210 pixels whose two indices (a 7 over a club) are centred `centre_y` pixels
    from their corner on the 200 x 280 canonical card (where indices usually are: 41)."""
    card = np.full((CARD_H, CARD_W, 3), 250, np.uint8)
    for _ in range(2):  # the top-left index, then the card half a turn round and the other one
        cv2.putText(card, "7", (9, centre_y - 4), cv2.FONT_HERSHEY_SIMPLEX, 0.9, (20, 20, 20), 3, cv2.LINE_AA)
        pip(card, "C", (18, centre_y + 14), 20, (20, 20, 20))
        card = np.ascontiguousarray(card[::-1, ::-1])
    frame = _felt()
    source = np.array([[0, 0], [CARD_W, 0], [CARD_W, CARD_H], [0, CARD_H]], dtype=np.float32)
    matrix = cv2.getPerspectiveTransform(source, np.array([[500, 200], [650, 200], [650, 410], [500, 410]], np.float32))
    warped = cv2.warpPerspective(card, matrix, (1280, 720))
    inside = cv2.warpPerspective(np.full((CARD_H, CARD_W), 255, np.uint8), matrix, (1280, 720)) > 0
    frame[inside] = warped[inside]
    return frame


@pytest.mark.parametrize(("centre_y", "squares_a_corner"), [(41, 1), (70, 2)])
def test_an_outline_corner_is_squared_where_its_index_is_found_and_where_indices_usually_are(
    centre_y: int, squares_a_corner: int
) -> None:
    """Where the shape found in a corner lies at the usual place, one square; where it lies elsewhere (a pip taken
    for the index, or a deck printing its index lower), its square and the usual place's, for the gate to choose.
    The rules the shipped network was trained on ("2026-12-06") square a corner once."""
    frame = _card_with_index_at(centre_y)
    found = [square for square, _ in outline_squares(frame)]
    assert len(found) == 2 * squares_a_corner
    index_y = 200 + centre_y * 0.75  # the top-left index's centre in the frame (the card is 0.75 times canonical)
    assert any(abs(square.x - 514) < 3 and abs(square.y - index_y) < 6 for square in found), found
    usual_y = 200 + USUAL_INDEX[1] * CARD_H * 0.75
    assert any(abs(square.y - usual_y) < 6 for square in found), found
    assert len(outline_squares(frame, rules=RULES["2026-12-06"])) == 2


def test_an_outline_is_not_cut_where_it_has_no_concave_corners() -> None:
    card = np.array([[0, 0], [63, 0], [63, 88], [0, 88]], dtype=np.int32).reshape(-1, 1, 2)
    assert _cut_apart(card) == []
    # two rectangles overlapping at a corner: two concave corners, one cut, two pieces that together are the outline
    mask = np.zeros((300, 300), np.uint8)
    cv2.rectangle(mask, (20, 20), (120, 160), 255, -1)
    cv2.rectangle(mask, (90, 120), (190, 260), 255, -1)
    contour = max(cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)[0], key=len)
    pieces = _cut_apart(contour)
    assert len(pieces) == 2
    assert sum(len(piece) for piece in pieces) == len(contour) + 2  # each cut corner belongs to both pieces
    areas = sorted(cv2.contourArea(piece) for piece in pieces)
    assert areas[0] == pytest.approx(100 * 140, rel=0.25) and areas[1] == pytest.approx(100 * 140, rel=0.25)


def test_an_outline_whose_index_is_not_found_is_framed_where_indices_usually_are() -> None:
    """A card whose top-left index the shape rules do not find (erased here: a pale or broken rank) is still read
    there: the square at the usual printed place frames it; the other corner's index is framed by its shape."""
    card, mask = render_card("7C")
    height, width = card.shape[:2]
    centres, index_height = _index_centres("7C")
    x, y = centres[0]
    erased = card.copy()
    half = int(0.8 * index_height)
    erased[max(0, int(y) - half) : int(y) + half, max(0, int(x) - half) : int(x) + half] = card[height // 2, 8]
    frame = _felt()
    corners = _card_corners((640, 360), 150, 20.0)
    source = np.array([[0, 0], [width - 1, 0], [width - 1, height - 1], [0, height - 1]], dtype=np.float32)
    matrix = cv2.getPerspectiveTransform(source, corners)
    warped = cv2.warpPerspective(erased, matrix, (1280, 720), flags=cv2.INTER_AREA)
    alpha = cv2.warpPerspective(mask, matrix, (1280, 720))[..., None].astype(np.float32) / 255
    frame[:] = (frame * (1 - alpha) + warped * alpha).astype(np.uint8)
    on_frame = cv2.perspectiveTransform(centres[None], matrix)[0]
    side = 1.3 * index_height * 150 / width
    found = [square for square, _ in outline_squares(frame)]
    for centre in on_frame:
        assert any(_frames(square, centre, side, corners[3] - corners[0]) for square in found), (centre, found)
