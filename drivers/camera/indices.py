"""Where corner indices may be: proposals from the ink of a frame, with no notion of a card outline.

A corner index is a rank printed over a suit, dark or red ink on white card stock. The frame is shrunk to at most
`WORK_HEIGHT` rows (a 1080p frame is read at full resolution); ink is what an adaptive threshold finds clearly
darker than its neighbourhood (at the working scale and at half of it, for large prints), plus what is clearly red.
Connected pieces of ink the size of a glyph are paired with their nearest neighbours of a similar size (a rank and
its suit, the 1 and the 0 of a ten); each pair, and each piece with pieces touching it merged, gives a square around
it: a *proposal*. Proposals whose square is not mostly light (card stock) or holds too little or too much ink are
dropped, and near-duplicates are merged.
The learned reader (`reader.py`) then says which proposals are indices, and of which card.

The same function proposes the training crops (`training/dataset.py`), so that the reader learns exactly the crops
it will see.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

from drivers.camera.image_io import Image

# Frames are read at most this tall, a 1080p frame at full resolution: shrunk to 720 rows, a studio index of 24 to
# 36 px there became 16 to 24 px and was framed once in a hundred times; at full size, four in ten (2026-12-02)
WORK_HEIGHT = 1080
BLOCK, INK_CONTRAST = 21, 12  # adaptive threshold: neighbourhood (px) and how much darker than it ink must be
RED_LEVEL = 45  # red minus the stronger other channel: red print
GLYPH_MIN, GLYPH_MAX = 7, 44  # a glyph's longer side in pixels at the scale it is found at
MAX_ASPECT = 6.0  # the 1 of a ten is thin
PAIR_GAP = 0.6  # two glyphs of one index are at most this many glyph sizes apart (bounding-box gap)
PAIR_RATIO = 2.6  # ...and their sizes differ at most this much
NEIGHBOURS = 2  # pairs made with each glyph's nearest neighbours
SAME_GLYPH = 0.6  # boxes overlapping this much (IoU) are one glyph found twice (at both scales)
MAX_GLYPHS = 90  # glyphs kept per scale, the smoothest-surrounded first
LONE_GLYPHS = 0  # 1: a glyph alone (rank and suit run together) is proposed too; 0: pairs only
SIDE = 1.3  # a proposal's square is this times the longer side of what it holds
# mean brightness of the square (and of a glyph's ring), as a fraction of the frame's white (card stock). The white is
# the frame's brightest stock: under uneven light a card in shadow has stock at a third of it, and its index square,
# which reaches past the card's edge onto the table, less still (0.4 until 2026-12-06 missed such cards' indices:
# docs/camera.md, "Cards in shadow")
MIN_LIGHT = 0.3
INK_MIN, INK_MAX = 0.06, 0.6  # fraction of the square that is ink
RING, RING_INK = 0.25, 0.45  # the ring around a glyph (in glyph sizes) and the most ink it may hold
# grey levels between a glyph's ink and the card stock around it: 22, not 30, so that a pale rank (a pink or a thin
# grey one, blurred at 25 to 40 px) is a glyph; the ring tests still keep cloth texture out
GLYPH_CONTRAST = 22
RING_SPREAD = 25.0  # standard deviation of the stock around a glyph: smooth card, not cloth or wood grain


@dataclass(frozen=True, slots=True)
class Proposal:
    x: float  # centre, in frame pixels
    y: float
    side: float  # of the square, in frame pixels
    angle: float = 0.0  # degrees: the crop turned by this shows the index upright or upside down


def _u8(image: npt.NDArray[np.generic]) -> Image:
    return np.asarray(image, dtype=np.uint8)


def work_scale(image: Image) -> float:
    return min(1.0, WORK_HEIGHT / int(image.shape[0]))


def ink_mask(bgr: Image, grey: Image) -> npt.NDArray[np.uint8]:
    """255 where there is ink: clearly darker than its neighbourhood (`grey` is `bgr` in grey), or clearly red."""
    ink = cv2.adaptiveThreshold(grey, 255, cv2.ADAPTIVE_THRESH_MEAN_C, cv2.THRESH_BINARY_INV, BLOCK, INK_CONTRAST)
    b, g, r = cv2.split(bgr)
    red = cv2.subtract(r, cv2.max(g, b))
    # ink where red > RED_LEVEL, by OpenCV: a NumPy mask over a whole frame costs about a millisecond
    return np.asarray(cv2.bitwise_or(ink, cv2.threshold(red, RED_LEVEL, 255, cv2.THRESH_BINARY)[1]), dtype=np.uint8)


@dataclass(frozen=True, slots=True)
class _Sums:
    """Integral images of one scale, computed once and shared by `_glyphs` and `_plausible`."""

    white: float  # the frame's white: the 99th percentile of its grey
    grey: npt.NDArray[Any]  # integral of the grey image
    ink: npt.NDArray[Any]  # of the ink mask (0 or 1)
    stock: npt.NDArray[Any]  # of the grey where there is no ink (card stock, cloth)
    stock_square: npt.NDArray[Any]  # of its square

    @property
    def shape(self) -> tuple[int, int]:
        return int(self.grey.shape[0]) - 1, int(self.grey.shape[1]) - 1


def _scan(work: Image) -> tuple[npt.NDArray[np.uint8], _Sums]:
    """The ink mask of one scale and its integral images."""
    grey = _u8(cv2.cvtColor(work, cv2.COLOR_BGR2GRAY))
    ink = ink_mask(work, grey)
    stock = cv2.bitwise_and(grey, cv2.bitwise_not(ink))  # the grey where there is no ink (ink is 0 or 255)
    stock_sum, stock_square = cv2.integral2(stock, sdepth=cv2.CV_32S, sqdepth=cv2.CV_64F)
    on = cv2.threshold(ink, 0, 1, cv2.THRESH_BINARY)[1]
    return ink, _Sums(
        max(_percentile_99(grey[::4, ::4]), 1.0),
        np.asarray(cv2.integral(grey, sdepth=cv2.CV_32S)),
        np.asarray(cv2.integral(on, sdepth=cv2.CV_32S)),
        np.asarray(stock_sum),
        np.asarray(stock_square),
    )


def _percentile_99(grey: Image) -> float:
    """`np.percentile(grey, 99)` to the last bit, from the grey levels' histogram: a quarter of its time (NumPy
    partitions the pixels) on a zone's pixels; 4 calls a frame."""
    # counted by OpenCV: a third of `np.bincount`'s time on the strided sample (float counts, exact below 2**24)
    cumulative = np.cumsum(cv2.calcHist([grey], [0], None, [256], [0, 256]).ravel().astype(np.int64))
    count = int(cumulative[-1])
    place = (count - 1) * 0.99  # NumPy's "linear" method, the default
    below = int(place)
    weight = place - below
    a = int(np.searchsorted(cumulative, below + 1))  # the grey levels in sorted places `below` and `below` + 1
    b = int(np.searchsorted(cumulative, min(below + 2, count)))
    # NumPy's own interpolation, so that the result is the same float
    return b - (b - a) * (1 - weight) if weight >= 0.5 else a + (b - a) * weight


def _glyphs(sums: _Sums, ink: npt.NDArray[np.uint8], factor: float, min_light: float) -> npt.NDArray[np.float64]:
    """Pieces of ink the size and look of a glyph: rows of x0, y0, x1, y1 in working pixels (times `factor`).

    A glyph is printed on card stock: the ring around its box is light (`min_light` of the frame's white), smooth
    (`RING_SPREAD`), holds little other ink (`RING_INK`), and the glyph's ink is much darker than that ring
    (`GLYPH_CONTRAST`). Cloth texture, wood grain and a pip's neighbours fail one of these."""
    # BBDT: the same components, in the same order, as the default algorithm, in about 60% of its time
    count, _, stats, _ = cv2.connectedComponentsWithStatsWithAlgorithm(ink, 8, cv2.CV_32S, cv2.CCL_BBDT)
    if count <= 1:
        return np.zeros((0, 4))
    x, y, w, h, area = stats[1:].T.astype(np.float64)
    longer, shorter = np.maximum(w, h), np.maximum(np.minimum(w, h), 1)
    keep = (
        (longer >= GLYPH_MIN)
        & (longer <= GLYPH_MAX)
        & (longer / shorter <= MAX_ASPECT)
        & (area >= 0.1 * w * h)
        & (area <= 0.92 * w * h)
    )
    boxes = np.stack([x, y, x + w, y + h], axis=1)[keep]  # x0 y0 x1 y1: whole pixels inside the frame
    if len(boxes) == 0:
        return np.zeros((0, 4))
    outer = _whole(boxes + RING * longer[keep, None] * _GROW, sums)
    # the four integral-image corners of each box and of the box with its ring, looked up at once in each table
    places = _corner_places(np.concatenate([boxes, outer]).astype(np.intp), sums.shape[1] + 1).reshape(4, 2, -1)
    inner_area = (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])
    ring_area = np.maximum((outer[:, 2] - outer[:, 0]) * (outer[:, 3] - outer[:, 1]) - inner_area, 1)
    inner_ink, outer_ink = _totals(sums.ink, places)
    inner_stock, outer_stock = _totals(sums.stock, places)
    inner_square, outer_square = _totals(sums.stock_square, places)
    ring_ink = outer_ink - inner_ink
    stock_pixels = np.maximum(ring_area - ring_ink, 1)
    ring_light = (outer_stock - inner_stock) / stock_pixels
    ring_square = (outer_square - inner_square) / stock_pixels
    ring_spread = np.sqrt(np.maximum(ring_square - ring_light**2, 0))
    glyph_ink = np.maximum(inner_ink, 1)
    glyph_grey = (_totals(sums.grey, places[:, 0]) - inner_stock) / glyph_ink
    good = (ring_light >= min_light * sums.white) & (ring_ink / ring_area <= RING_INK) & (
        ring_light - glyph_grey >= GLYPH_CONTRAST) & (ring_spread <= RING_SPREAD)  # fmt: skip
    # On a textured cloth many pieces pass: the smoothest-surrounded MAX_GLYPHS are kept (a frame's work is bounded).
    kept = np.flatnonzero(good)
    if len(kept) > MAX_GLYPHS:
        kept = np.sort(kept[np.argsort(ring_spread[kept], kind="stable")[:MAX_GLYPHS]])
    return np.asarray(boxes[kept] * factor, dtype=np.float64)


_GROW = np.array([-1.0, -1.0, 1.0, 1.0])  # a box's sides moved out by a margin: x0 y0 x1 y1


def _whole(boxes: npt.NDArray[np.float64], sums: _Sums) -> npt.NDArray[np.float64]:
    """Boxes (x0 y0 x1 y1) rounded to whole pixels and clipped to the image `sums` was taken of."""
    height, width = sums.shape
    return np.asarray(np.clip(np.round(boxes), 0, (width, height, width, height)), dtype=np.float64)


def _corner_places(boxes: npt.NDArray[np.intp], stride: int) -> npt.NDArray[np.intp]:
    """Where each box's four corners lie in a flattened integral image `stride` wide: 4 x N, in the order of
    `_totals` (bottom right, top right, bottom left, top left)."""
    x0, y0, x1, y1 = boxes.T
    return np.stack([y1 * stride + x1, y0 * stride + x1, y1 * stride + x0, y0 * stride + x0])


def _totals(table: npt.NDArray[Any], places: npt.NDArray[np.intp]) -> npt.NDArray[np.float64]:
    """The sums of `table`'s image over boxes, from their corners' `places` (4 x ...; `_corner_places`): one lookup
    in the table for all of them, added in the table's own type."""
    bottom_right, top_right, bottom_left, top_left = table.ravel()[places]
    return np.asarray(bottom_right - top_right - bottom_left + top_left, dtype=np.float64)


def _distinct(boxes: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """The boxes without those that repeat an earlier one (IoU >= `SAME_GLYPH`), so that a glyph found at both
    scales counts once. Its two copies would otherwise be each other's nearest neighbours and those of the glyphs
    beside it, and take the `NEIGHBOURS` places of the pair that makes an index: a rank and its suit printed beside
    a large pip (a 9 of clubs seen small) each paired twice with the pip, never with each other."""
    if len(boxes) < 2:
        return boxes
    x0, y0, x1, y1 = (boxes[:, None, i] for i in range(4))
    across = np.maximum(np.minimum(x1, x1.T) - np.maximum(x0, x0.T), 0)
    down = np.maximum(np.minimum(y1, y1.T) - np.maximum(y0, y0.T), 0)
    area = (x1 - x0) * (y1 - y0)
    iou = across * down / np.maximum(area + area.T - across * down, 1e-6)
    rows, columns = np.nonzero(iou >= SAME_GLYPH)
    repeats = np.zeros(len(boxes), dtype=bool)
    repeats[rows[columns < rows]] = True  # overlaps an earlier box
    return np.asarray(boxes[~repeats], dtype=np.float64)


_BOX_CORNERS = np.array([[0, 1], [0, 3], [2, 1], [2, 3]])  # the columns of a box's four corners (x0 y0 x1 y1)


def _squares(boxes: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """Squares (cx, cy, side, angle) around each glyph alone and each glyph with its nearest similar neighbours.

    A pair's angle is that of the line through its two glyphs (rank over suit: the index's own vertical, either
    way up), and its side is measured along and across that line, so that the crop turned by it shows the index
    upright or upside down, never at a slant; a lone glyph's square follows its box's longer side."""
    if len(boxes) == 0:
        return np.zeros((0, 4))
    size = np.maximum(boxes[:, 2] - boxes[:, 0], boxes[:, 3] - boxes[:, 1])
    gap_x = np.maximum(boxes[None, :, 0] - boxes[:, None, 2], boxes[:, None, 0] - boxes[None, :, 2])
    gap_y = np.maximum(boxes[None, :, 1] - boxes[:, None, 3], boxes[:, None, 1] - boxes[None, :, 3])
    gap = np.maximum(np.maximum(gap_x, gap_y), 0)
    larger = np.maximum(size[:, None], size[None, :])
    ratio = larger / np.minimum(size[:, None], size[None, :])
    near = (gap <= PAIR_GAP * larger) & (ratio <= PAIR_RATIO)
    np.fill_diagonal(near, False)
    score = np.where(near, gap / larger, np.inf)
    order = np.argsort(score, axis=1)[:, :NEIGHBOURS]
    first = np.repeat(np.arange(len(boxes)), order.shape[1])
    second = order.ravel()
    valid = np.isfinite(score[first, second])  # a pair met from both sides is merged by `_dedupe`
    first, second = first[valid], second[valid]
    # Lone glyphs: the box's longer side is the index's vertical.
    width, height = boxes[:, 2] - boxes[:, 0], boxes[:, 3] - boxes[:, 1]
    singles = np.stack([(boxes[:, 0] + boxes[:, 2]) / 2, (boxes[:, 1] + boxes[:, 3]) / 2, SIDE * 1.6 * size,
                        np.where(height >= width, 0.0, 90.0)], axis=1)  # fmt: skip
    singles = singles if LONE_GLYPHS else singles[:0]
    if len(first) == 0:
        return singles
    a, b = boxes[first], boxes[second]
    centre_a = np.stack([(a[:, 0] + a[:, 2]) / 2, (a[:, 1] + a[:, 3]) / 2], axis=1)
    centre_b = np.stack([(b[:, 0] + b[:, 2]) / 2, (b[:, 1] + b[:, 3]) / 2], axis=1)
    direction = centre_b - centre_a
    angle = np.degrees(np.arctan2(direction[:, 0], direction[:, 1]))  # 0: b straight below a
    # The 8 corners of both boxes, measured along (u) and across (v) the pair's line.
    corners = np.concatenate([a[:, _BOX_CORNERS], b[:, _BOX_CORNERS]], axis=1)
    theta = np.radians(angle)[:, None]
    u = corners[..., 0] * np.sin(theta) + corners[..., 1] * np.cos(theta)
    v = corners[..., 0] * np.cos(theta) - corners[..., 1] * np.sin(theta)
    mid_u, mid_v = (u.max(axis=1) + u.min(axis=1)) / 2, (v.max(axis=1) + v.min(axis=1)) / 2
    sin, cos = np.sin(theta[:, 0]), np.cos(theta[:, 0])
    centre_x = mid_u * sin + mid_v * cos
    centre_y = mid_u * cos - mid_v * sin
    side = SIDE * np.maximum(u.max(axis=1) - u.min(axis=1), v.max(axis=1) - v.min(axis=1))
    pairs = np.stack([centre_x, centre_y, side, angle], axis=1)
    return np.concatenate([singles, pairs])


def _dedupe(squares: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """One square per place and size: centres within a tenth of the side and sides within 15% are the same."""
    if len(squares) == 0:
        return squares
    key = np.stack([
        np.round(squares[:, 0] / (0.1 * squares[:, 2])), np.round(squares[:, 1] / (0.1 * squares[:, 2])),
        np.round(np.log(squares[:, 2]) / 0.15), np.round((squares[:, 3] % 180) / 20) % 9,
    ], axis=1).astype(np.int64)  # fmt: skip
    # each row as one number (the columns' ranges multiplied out): `np.unique` of rows took four times as long
    key -= key.min(axis=0)
    spans = key.max(axis=0) + 1
    number = ((key[:, 0] * spans[1] + key[:, 1]) * spans[2] + key[:, 2]) * spans[3] + key[:, 3]
    _, first = np.unique(number, return_index=True)
    return squares[np.sort(first)]


def propose(image: Image, region: tuple[int, int, int, int] | None = None, min_light: float = MIN_LIGHT
            ) -> list[Proposal]:  # fmt: skip
    """Index proposals in the frame (in `region` = x, y, w, h only, if given), in frame pixels. `min_light` is
    `MIN_LIGHT` but in training, which proposes with the rules its recipe records (`squares.SquareRules`)."""
    x0, y0 = (region[0], region[1]) if region else (0, 0)
    # a zone copied out whole: OpenCV splits the channels of a strided view at a third of the speed
    view = np.ascontiguousarray(image[y0 : y0 + region[3], x0 : x0 + region[2]]) if region else image
    if view.size == 0 or min(view.shape[:2]) < 16:
        return []
    if view.ndim == 2:
        view = _u8(cv2.cvtColor(view, cv2.COLOR_GRAY2BGR))
    elif view.shape[2] == 4:
        view = _u8(cv2.cvtColor(view, cv2.COLOR_BGRA2BGR))
    scale = work_scale(image)
    work = _u8(cv2.resize(view, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)) if scale < 1 else view
    ink, sums = _scan(work)
    half_ink, half_sums = _scan(_u8(cv2.resize(work, None, fx=0.5, fy=0.5, interpolation=cv2.INTER_AREA)))
    glyphs = [_glyphs(sums, ink, 1.0, min_light), _glyphs(half_sums, half_ink, 2.0, min_light)]
    boxes = _distinct(np.concatenate(glyphs))
    squares = _dedupe(_squares(boxes))
    if len(squares) == 0:
        return []
    squares = squares[_plausible(sums, squares, min_light)]
    factor = 1.0 / scale
    return [Proposal(x0 + cx * factor, y0 + cy * factor, side * factor, angle)
            for cx, cy, side, angle in squares.tolist()]  # fmt: skip


def _plausible(sums: _Sums, squares: npt.NDArray[np.float64], min_light: float) -> npt.NDArray[np.bool_]:
    """Squares mostly of light card stock with some ink: from integral images, a few operations per square."""
    side = squares[:, 2]
    box = _whole(squares[:, [0, 1, 0, 1]] + side[:, None] / 2 * _GROW, sums)
    area = np.maximum((box[:, 2] - box[:, 0]) * (box[:, 3] - box[:, 1]), 1)
    places = _corner_places(box.astype(np.intp), sums.shape[1] + 1)
    light = _totals(sums.grey, places) / area / sums.white
    inked = _totals(sums.ink, places) / area
    plausible = (light >= min_light) & (inked >= INK_MIN) & (inked <= INK_MAX) & (area >= 0.5 * side**2)
    return np.asarray(plausible, dtype=np.bool_)


def crop_matrix(proposal: Proposal, size: int, angle: float = 0.0, stretch: tuple[float, float] = (1.0, 1.0),
                shift: tuple[float, float] = (0.0, 0.0)) -> npt.NDArray[np.float64]:  # fmt: skip
    """The affine map from frame pixels to a `size` x `size` crop of the proposal's square, turned by its angle
    (and by `angle` degrees more and stretched, for training; shifted by fractions of the side)."""
    scale = size / proposal.side
    rotation = cv2.getRotationMatrix2D((0.0, 0.0), angle - proposal.angle, 1.0)
    linear = np.diag(stretch) @ rotation[:, :2] * scale
    centre = np.array([proposal.x + shift[0] * proposal.side, proposal.y + shift[1] * proposal.side])
    offset = np.array([size / 2, size / 2]) - linear @ centre
    return np.concatenate([linear, offset[:, None]], axis=1)


def crop_matrices(squares: list[Proposal], size: int, angle: float = 0.0, scale: float = 1.0
                  ) -> npt.NDArray[np.float64]:  # fmt: skip
    """`crop_matrix` of every square at once (N x 2 x 3, no stretch or shift), each square `scale` times larger."""
    x, y, side, turn = np.array([(s.x, s.y, s.side, s.angle) for s in squares], dtype=np.float64).reshape(-1, 4).T
    theta = np.radians(angle - turn)
    factor = size / (side * scale)
    cos, sin = np.cos(theta) * factor, np.sin(theta) * factor
    matrices = np.empty((len(x), 2, 3))
    matrices[:, 0, 0], matrices[:, 0, 1], matrices[:, 1, 0], matrices[:, 1, 1] = cos, sin, -sin, cos
    matrices[:, 0, 2] = size / 2 - (cos * x + sin * y)
    matrices[:, 1, 2] = size / 2 - (-sin * x + cos * y)
    return matrices


def crop(image: Image, proposal: Proposal, size: int) -> Image:
    matrix = crop_matrix(proposal, size)
    return np.asarray(cv2.warpAffine(image, matrix, (size, size), flags=cv2.INTER_AREA,
                                     borderMode=cv2.BORDER_REPLICATE), dtype=np.uint8)  # fmt: skip
