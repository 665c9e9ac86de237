"""Where the shipped reader looks: the squares of a frame it reads, from two sources.

1. `indices.propose`: glyph pairs found in the frame's ink, with no notion of a card (touching and overlapping
   cards, pale tables, a card half under another).
2. `outline_squares`: where a whole card's outline is found on felt (`detect.find_cards`; touching cards cut
   apart where their outlines cross), the index in each of its two printed corners, located by shape
   (`glyphs.index_box`) in the rectified corner and where indices usually are (when no shape is found there, or
   one elsewhere), and mapped back to the frame. On studio felt this frames indices the glyph pairs miss: small or
   pale ranks that break into specks, a suit nearer to a pip than to its rank (measured in docs/camera.md, "Squares
   from card outlines").

The reader reads both kinds alike; squares framing the same index vote together (`reader._vote`). Training proposes
its crops the same way (`training/dataset.py`), so that the network learns the squares it will see.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import cv2
import numpy as np

from drivers.camera.detect import CARD_H, CARD_W, DetectorConfig, Quad, Zone, find_cards, warp, whiteness
from drivers.camera.glyphs import CORNER, index_box
from drivers.camera.image_io import Image
from drivers.camera.indices import MIN_LIGHT, SIDE, Proposal, propose

# Cards seen up to 50 degrees off vertical: foreshortening by cos 50 = 0.64 makes a card's long side look as short as
# 0.9 times its short side, or its aspect as long as 2.2 (88 / 63 / 0.64); the detector's default (1.15 to 1.8) is
# for cards seen from above; a card turned on the table and seen far off vertical fills its rectangle less
# (`slanted_fill`). Only on a table clearly darker than the cards (felt, grey felt under glare included: under 0.4 of
# the cards' whiteness): on wood or a pale table only the edge search finds outlines, and there the glyph pairs do the
# work (outline squares there read no more of the validation photos and cost 3.6 ms a 1280 x 720 webcam frame on
# wood; telling that it is no felt costs 1.1 ms). docs/camera.md, "Slanted cards and grey felt".
OUTLINES = DetectorConfig(
    aspect=(1.0, 2.5), slanted_fill=0.75, dark_table=0.4, edge_width=0, dark_tables_only=True, cut_touching=True
)
# Where a card's index is usually printed, squared for an outline whose index shape is not found there (a pale or
# broken rank, or a pip taken for it): centre at 0.090 of the card's width and 0.146 of its height from the corner,
# square side 0.251 of its height (the median of 307 indices of the studio deck found by shape; most decks print
# theirs near there)
USUAL_INDEX = (0.090, 0.146, 0.251)
SAME_PLACE = 0.15  # a found index within this many sides of the usual place, and of its size within 15%, is there


@dataclass(frozen=True, slots=True)
class SquareRules:
    """How the squares are found. A network reads best the squares it learned on, and its training is rebuilt
    exactly only with the rules its crops were proposed with: its `.json` records their name in `RULES`
    (`"squares"`, `train.Recipe`). The reader always reads with the newest (`READER_RULES`)."""

    min_light: float = MIN_LIGHT  # the glyph pairs' (`indices.propose`)
    outlines: DetectorConfig = OUTLINES  # the card outlines' (`detect.find_cards`)
    usual_place: bool = True  # an outline's index squared where indices usually are too, not only where one is found


# Named by the last day the reader found its squares by them (the newest: the day they came). The shipped network
# until 2026-12-07 (P32) was trained on "2026-12-06": darker card stock not proposed, no slanted outline nor grey
# felt, one square a corner (docs/camera.md, "Cards in shadow" and "Slanted cards and grey felt"); the one since
# (P48b) on "2026-12-07".
RULES = {
    "2026-12-06": SquareRules(
        0.4, DetectorConfig(aspect=(1.0, 2.5), edge_width=0, dark_tables_only=True, cut_touching=True), False
    ),
    "2026-12-07": SquareRules(),
}
NEWEST = "2026-12-07"
READER_RULES = RULES[NEWEST]
_CANONICAL = np.array([[0, 0], [CARD_W, 0], [CARD_W, CARD_H], [0, CARD_H]], dtype=np.float32)


def squares(image: Image, zones: Sequence[Zone] = (), rules: SquareRules = READER_RULES
            ) -> list[tuple[Proposal, str | None]]:  # fmt: skip
    """Every square the reader reads, with the name of the zone it was found in (None: read anywhere); training
    passes the `rules` its recipe records."""
    found: list[tuple[Proposal, str | None]]
    if zones:
        found = [(square, zone.name) for zone in zones for square in propose(image, zone.box, rules.min_light)]
    else:
        found = [(square, None) for square in propose(image, min_light=rules.min_light)]
    return found + outline_squares(image, zones, rules)


def outline_squares(image: Image, zones: Sequence[Zone] = (), rules: SquareRules = READER_RULES
                    ) -> list[tuple[Proposal, str | None]]:  # fmt: skip
    """Squares on the indices of every card whose outline is found (in the zones, if given): both printed corners,
    and for an outline too square to tell its long side (a card seen at a slant), the two sideways corners too."""
    found = []
    for detection in find_cards(image, list(zones), rules.outlines):
        for quad in detection.orientations():
            found += [(square, detection.zone) for square in _index_squares(image, quad, rules.usual_place)]
    return found


def _index_squares(image: Image, quad: Quad, usual_place: bool) -> list[Proposal]:
    """Squares around the index in the top-left corner of the card `quad` (clockwise from that corner), turned along
    the index's own vertical: where a rank over a suit is found there, and (with `usual_place`, or where none is
    found) where indices usually are (`USUAL_INDEX`) unless that is the same square. The shape search takes a pip or
    a court figure's print for the index on small, blurred cards; the gate and the network choose between the two
    (docs/camera.md, "Slanted cards and grey felt")."""
    patch = _without_table(warp(image, quad, CORNER))  # canonical card pixels: the patch starts at the card's corner
    cx, cy, side = USUAL_INDEX[0] * CARD_W, USUAL_INDEX[1] * CARD_H, USUAL_INDEX[2] * CARD_H / SIDE
    usual = _in_frame((cx - side / 2, cy - side / 2, cx + side / 2, cy + side / 2), quad)
    found = index_box(patch)
    if found is None:
        return [usual]
    shape = _in_frame((found[0], found[1], found[0] + found[2], found[1] + found[3]), quad)
    if not usual_place or (
        math.hypot(shape.x - usual.x, shape.y - usual.y) <= SAME_PLACE * usual.side
        and abs(shape.side / usual.side - 1.0) <= SAME_PLACE
    ):
        return [shape]
    return [shape, usual]


def _in_frame(box: tuple[float, float, float, float], quad: Quad) -> Proposal:
    """The square of the reader around `box` (x0, y0, x1, y1 in the canonical card's pixels) of the card `quad`, in
    the frame, turned along the card's vertical."""
    x0, y0, x1, y1 = box
    middle_x, middle_y = (x0 + x1) / 2, (y0 + y1) / 2
    # the index's centre and the middles of its four sides, in the frame
    points = np.array([[[middle_x, middle_y], [middle_x, y0], [middle_x, y1], [x0, middle_y], [x1, middle_y]]],
                      dtype=np.float32)  # fmt: skip
    centre, top, bottom, left, right = cv2.perspectiveTransform(points, _to_frame(quad))[0]
    height, width = float(np.hypot(*(bottom - top))), float(np.hypot(*(right - left)))
    down = bottom - top
    angle = math.degrees(math.atan2(float(down[0]), float(down[1])))  # as `indices`: 0 when the suit is straight below
    return Proposal(float(centre[0]), float(centre[1]), SIDE * max(height, width, 1.0), angle)


def _without_table(patch: Image) -> Image:
    """The corner patch with the table it shows painted as card stock: the cloth beyond a rounded corner, or a sliver
    along an outline a pixel off. Print never touches a card's edge, so dark pieces touching the patch's edge are
    not the index (the shape rules would otherwise take such a piece for the rank)."""
    white = whiteness(patch)
    level = 0.5 * float(np.percentile(white, 90))
    dark = np.asarray(white < level, dtype=np.uint8)
    count, labels = cv2.connectedComponents(dark, connectivity=8)
    on_edge = np.zeros(count, dtype=bool)  # by label: a lookup, a fifth of the time of np.isin on the patch
    on_edge[labels[0]] = on_edge[labels[-1]] = on_edge[labels[:, 0]] = on_edge[labels[:, -1]] = True
    on_edge[0] = False
    if not on_edge.any():
        return patch
    cleaned = patch.copy()
    cleaned[on_edge[labels]] = np.median(patch[white >= level], axis=0)
    return cleaned


def _to_frame(quad: Quad) -> np.ndarray:
    return np.asarray(cv2.getPerspectiveTransform(_CANONICAL, quad.astype(np.float32)))
