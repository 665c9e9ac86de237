"""Isolating the rank glyph and the suit pip in a card's corner index.

The index sits in the top-left corner of the upright card: the rank on top, the suit pip under it, both within the
first fifth of the card's width. In the rectified corner patch, ink is whatever is clearly darker than the card stock
around it in the darkest colour channel (black and red print alike; a gradient of light cancels out).

Two readings of the same patch are offered, and the recognizer keeps the one that matches the deck best:

- by shape: ink that runs into the patch's right or bottom edge belongs to the card's body (pips, a court card's
  frame) and a long strip along its left or top edge is the table showing past an inexact outline: both are ignored.
  The rank is the topmost piece tall enough to be one, with the pieces beside it (the 1 and the 0 of a ten); the
  suit is the largest piece under it.
- by place: a deck prints its index at the same place on every card, so once enrollment has learned where (the
  `Layout`), the rank is the ink around that place and above the line between rank and suit, and the suit the ink
  below it. This still finds a pale rank broken into specks and a rank and pip blurred into one blob.

Each glyph is cut out, scaled to a fixed height keeping its proportions and centred on a fixed canvas, so that two
glyphs compare by correlation. The colour of the index (red against black) is measured against the card stock, so a
warm or cold light does not change it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import cv2
import numpy as np
import numpy.typing as npt

from drivers.camera.detect import CARD_H, whiteness
from drivers.camera.image_io import Image

CORNER = (0.0, 0.0, 0.19, 0.36)  # the patch read for the index: x, y, width, height as fractions of the card
RANK_SHAPE = (32, 32)  # height, width of the rank canvas
SUIT_SHAPE = (24, 24)

INK_LEVEL = 0.16  # a pixel this much darker than the stock around it is ink
FULL_INK = 0.5  # and this much darker, fully ink
PIP_LEVEL = 0.45  # a pip is solid: its ink is taken from this fraction of the darkest print around it

Canvas = npt.NDArray[np.float32]  # a glyph centred on its fixed-size canvas, ink 0..1
Vector = npt.NDArray[np.float32]  # a canvas flattened, zero mean, unit length
Box = tuple[int, int, int, int]
FractionBox = tuple[float, float, float, float]  # x, y, w, h as fractions of the corner patch


@dataclass(frozen=True, slots=True)
class Layout:
    """Where a deck prints its index, as fractions of the corner patch."""

    rank: FractionBox
    suit: FractionBox


@dataclass(frozen=True, slots=True)
class IndexGlyphs:
    rank: Canvas | None  # the rank glyph on its canvas (0 paper .. 1 ink); None if no rank-like glyph was found
    suit: Canvas | None  # the suit pip on its canvas; None if none was found under the rank
    redness: float  # about 0 for black print, 0.15 or more for red
    rank_box: Box | None = None  # in patch pixels
    suit_box: Box | None = None
    blur: float = 0.0  # how blurred the print is: the sigma of a Gaussian blur, in canonical card pixels


@dataclass(frozen=True, slots=True)
class _Ink:
    ink: npt.NDArray[np.float32]  # 0 stock .. 1 black
    labels: npt.NDArray[np.int32]  # connected pieces of ink
    stats: npt.NDArray[np.int32]  # x, y, w, h, area of each piece
    pieces: list[int]  # the pieces large enough to be print
    unit: float  # patch pixels per canonical card pixel
    paper: tuple[float, float, float]  # the card stock's colour (B, G, R)
    blur: float  # see IndexGlyphs.blur


def extract_index(patch: Image, layout: Layout | None = None) -> list[IndexGlyphs]:
    """Readings of the rank and suit glyphs of a rectified corner patch (BGR): by place if the deck's layout is
    known, and by shape. Empty if the patch holds no print."""
    return list(readings(patch, layout))


def readings(patch: Image, layout: Layout | None = None) -> Iterator[IndexGlyphs]:
    """`extract_index`, one reading at a time, so that a caller satisfied with the first need not make the next."""
    ink = _ink(patch)
    if ink is None:
        return
    if layout is not None:
        by_place = _plausible(_by_place(patch, ink, layout), layout, patch.shape)
        if by_place is not None:
            yield by_place
    by_shape = _by_shape(patch, ink)
    if layout is not None:
        by_shape = _plausible(by_shape, layout, patch.shape)
    if by_shape is not None:
        yield by_shape


def index_box(patch: Image) -> Box | None:
    """The box around the whole index (rank and suit) of the first reading of a rectified corner patch that found
    both, in patch pixels; None if none did."""
    for reading in readings(patch):
        if reading.rank_box is not None and reading.suit_box is not None:
            return _union([reading.rank_box, reading.suit_box])
    return None


def _plausible(glyphs: IndexGlyphs | None, layout: Layout, shape: tuple[int, ...]) -> IndexGlyphs | None:
    """The reading, if its glyphs are of the size the deck prints them: a speck of a pale rank, or a rank and a pip
    taken together, is not a rank (and then the reading is dropped); a pip of the wrong size is not the suit (and
    then the suit is)."""
    if glyphs is None or glyphs.rank_box is None:
        return None
    height = shape[0]
    rank_height = glyphs.rank_box[3] / (layout.rank[3] * height)
    if not 0.6 <= rank_height <= 1.5:
        return None
    if glyphs.suit_box is not None and not 0.5 <= glyphs.suit_box[3] / (layout.suit[3] * height) <= 1.6:
        return IndexGlyphs(glyphs.rank, None, glyphs.redness, glyphs.rank_box, None, glyphs.blur)
    return glyphs


def box_fraction(box: Box, shape: tuple[int, ...]) -> FractionBox:
    height, width = shape[:2]
    return box[0] / width, box[1] / height, box[2] / width, box[3] / height


def as_vector(canvas: Canvas) -> Vector:
    """The canvas slightly blurred (a pixel's misalignment should cost little), flattened, zero mean, unit length."""
    blurred = np.asarray(cv2.GaussianBlur(np.asarray(canvas, dtype=np.float32), (3, 3), 0), dtype=np.float32).ravel()
    blurred -= blurred.sum() / blurred.size  # the mean (as `mean()` computes it, without its overhead)
    norm = float(np.sqrt(blurred.dot(blurred)))  # as `np.linalg.norm` computes it
    if norm > 1e-6:
        blurred /= np.float32(norm)
    return blurred


def _ink(patch: Image) -> _Ink | None:
    unit = patch.shape[0] / (CARD_H * CORNER[3])  # patch pixels per canonical card pixel
    white = whiteness(patch)
    # The stock's brightness around each pixel: a maximum filter wider than any stroke or pip, smoothed.
    size = 2 * round(9 * unit) + 1
    stock = cv2.blur(cv2.dilate(white, _square(size)), (size, size))
    if cv2.mean(stock)[0] < 40:  # no card stock here: a dark frame, or not a card
        return None
    ink = (1.0 - white.astype(np.float32) / np.maximum(stock.astype(np.float32), 1.0)).astype(np.float32)
    mask = (ink > INK_LEVEL).view(np.uint8)  # 0 or 1, without a copy
    if cv2.countNonZero(mask) < 4 * unit * unit:  # no print
        return None
    _, found, found_stats, _ = cv2.connectedComponentsWithStats(mask, connectivity=8)
    labels = np.asarray(found, dtype=np.int32)
    stats = np.asarray(found_stats, dtype=np.int32)
    large = stats[:, 4] >= 4 * unit * unit
    large[0] = False
    if not large.all():
        labels = np.where(large, np.arange(len(large), dtype=np.int32), 0).astype(np.int32)[labels]  # specks: stock
    pieces = np.flatnonzero(large).tolist()
    stock_mask = (ink < 0.05).view(np.uint8)
    blue, green, red, _ = cv2.mean(patch, mask=stock_mask) if cv2.countNonZero(stock_mask) else (255.0,) * 4
    paper = (max(blue, 1.0), max(green, 1.0), max(red, 1.0))
    return _Ink(ink, labels, stats, pieces, unit, paper, _blur(white, ink, mask, min(paper)) / unit)


def _blur(white: npt.NDArray[np.uint8], ink: npt.NDArray[np.float32], mask: npt.NDArray[np.uint8], paper: float
          ) -> float:  # fmt: skip
    """The blur of the print, as the sigma of a Gaussian: an edge of contrast C blurred by sigma rises at most by
    C / (sigma * sqrt(2 pi)) per pixel, so sigma follows from the contrast and the steepest edges around the ink."""
    slope = cv2.magnitude(cv2.Sobel(white, cv2.CV_32F, 1, 0, ksize=3), cv2.Sobel(white, cv2.CV_32F, 0, 1, ksize=3)) / 8
    near = cv2.dilate(mask, _square(5)).view(np.bool_)  # mask holds 0 or 1: a view as booleans needs no copy
    edges = slope[near]
    darkest = ink[mask.view(np.bool_)]
    if len(edges) < 10 or len(darkest) < 4:
        return 0.0
    contrast = paper * float(np.partition(darkest, len(darkest) * 98 // 100)[len(darkest) * 98 // 100])
    steepest = float(np.partition(edges, len(edges) * 95 // 100)[len(edges) * 95 // 100])
    return contrast / (max(steepest, 1e-3) * 2.5066)


def _select_labels(labels: npt.NDArray[np.int32], chosen: list[int] | npt.NDArray[np.intp]) -> npt.NDArray[np.bool_]:
    """True where a pixel belongs to one of the chosen pieces (a lookup table: faster than `np.isin`)."""
    table = np.zeros(int(labels.max()) + 1, dtype=np.bool_)
    table[np.asarray(chosen, dtype=np.intp)] = True
    return table[labels]


def _by_shape(patch: Image, ink: _Ink) -> IndexGlyphs | None:
    height, width = patch.shape[:2]
    boxes: dict[int, Box] = {}
    for label in ink.pieces:
        x, y, w, h, area = (int(v) for v in ink.stats[label])
        if area < 6 * ink.unit**2:
            continue
        if x + w >= width - 1 or y + h >= height - 1:
            continue  # runs on into the card's body
        if (x <= 0 and h > 0.4 * height) or (y <= 0 and w > 0.6 * width):
            continue  # the table beside the card
        boxes[label] = (x, y, w, h)
    tall = [label for label, box in boxes.items() if box[3] >= 0.045 * CARD_H * ink.unit]
    if not tall:
        return None
    first = min(tall, key=lambda label: boxes[label][1])
    fx, fy, fw, fh = boxes[first]
    rank_labels = [first]
    for label, (x, y, w, h) in boxes.items():
        overlap = min(fy + fh, y + h) - max(fy, y)
        gap = max(x - (fx + fw), fx - (x + w))
        if label != first and overlap > 0.5 * min(h, fh) and 0.7 * fh <= h <= 1.3 * fh and gap < 0.35 * fh:
            rank_labels.append(label)
    rx, ry, rw, rh = _union([boxes[label] for label in rank_labels])
    rank_mask = _select_labels(ink.labels, rank_labels)
    top, bottom = ry + round(0.85 * rh), min(height, ry + round(2.6 * rh))

    def under_rank(labels: npt.NDArray[np.int32]) -> list[int]:
        """The largest piece under the rank, clear of the patch's right and bottom edges."""
        count = int(labels.max()) + 1
        if count < 2:
            return []
        edge = set(np.unique(labels[:, -1]).tolist())
        if bottom >= height:
            edge |= set(np.unique(labels[-1, :]).tolist())
        areas = np.bincount(labels.ravel(), minlength=count)
        best, best_area = 0, 4 * ink.unit**2
        for label in range(1, count):
            if label in edge or areas[label] < best_area:
                continue
            columns = np.flatnonzero((labels == label).any(axis=0))
            centre = (columns[0] + columns[-1]) / 2
            if rx - 0.3 * rw <= centre <= rx + 1.3 * rw:
                best, best_area = label, areas[label]
        return [best] if best else []

    suit_mask = _pip_mask(ink, top, bottom, under_rank)
    return _glyphs(patch, ink, rank_mask, suit_mask)


def _by_place(patch: Image, ink: _Ink, layout: Layout) -> IndexGlyphs | None:
    height, width = patch.shape[:2]
    rank = _pixels(layout.rank, width, height)
    suit = _pixels(layout.suit, width, height)
    cut = round((rank[1] + rank[3] + suit[1]) / 2)  # the line between rank and suit: a blob across it is cut
    top = max(0, rank[1] - rank[3] // 3)
    bottom = min(height, suit[1] + suit[3] + suit[3] // 2)
    rank_labels = _inside(ink.labels[top:cut], rank, top, ink.unit)
    if not rank_labels:
        return None
    rank_labels += _beside(ink, rank_labels, top, cut)
    rank_mask = np.zeros((height, width), dtype=bool)
    rank_mask[top:cut] = _select_labels(ink.labels[top:cut], rank_labels)
    suit_mask = _pip_mask(ink, cut, bottom, lambda labels: _inside(labels, suit, cut, ink.unit, bottom >= height))
    return _glyphs(patch, ink, rank_mask, suit_mask)


def _pip_mask(
    ink: _Ink, top: int, bottom: int, choose: Callable[[npt.NDArray[np.int32]], list[int]]
) -> npt.NDArray[np.bool_] | None:
    """The suit pip within rows `top:bottom`, as chosen among the pieces of ink there. A pip is solid, so the ink is
    opened first: it sheds thin lines (a court card's frame) and the faint bridges blur builds to its neighbours."""
    height, width = ink.ink.shape
    if bottom - top < 3:
        return None
    size = max(3, 2 * round(1.5 * ink.unit) + 1)
    band = ink.ink[top:bottom]
    level = max(INK_LEVEL, PIP_LEVEL * float(np.partition(band.ravel(), int(band.size * 0.98))[int(band.size * 0.98)]))
    disc = _disc(size)
    mask = cv2.morphologyEx((band > level).view(np.uint8), cv2.MORPH_OPEN, disc)
    _, found = cv2.connectedComponents(mask, connectivity=8)
    labels = np.asarray(found, dtype=np.int32)  # already int32: no copy
    chosen = choose(labels)
    if not chosen:
        return None
    # back to the pip's full outline (its stem, the points that opening rounds off), but not to what it shed
    pip = _select_labels(labels, chosen).view(np.uint8)
    near = cv2.dilate(pip, disc).view(np.bool_)
    full = np.zeros((height, width), dtype=bool)
    full[top:bottom] = near & (band > INK_LEVEL)
    return full


@functools.cache
def _square(size: int) -> npt.NDArray[np.uint8]:
    """A square structuring element of that size (made once per size; OpenCV only reads it)."""
    return np.ones((size, size), np.uint8)


@functools.cache
def _disc(size: int) -> npt.NDArray[np.uint8]:
    """The elliptic structuring element of that size (made once per size; OpenCV only reads it)."""
    return np.asarray(cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (size, size)), dtype=np.uint8)


def _beside(ink: _Ink, chosen: list[int], top: int, cut: int) -> list[int]:
    """Pieces level with the chosen ones and as tall, close beside them (the 1 of a ten printed a little off the
    usual place), clear of the patch's right edge."""
    width = ink.labels.shape[1]
    x, y, w, h = _union([_stat_box(ink.stats, label) for label in chosen])
    found = []
    for label in ink.pieces:
        px, py, pw, ph = (int(v) for v in ink.stats[label][:4])
        if label in chosen or py < top or py + ph > cut + 1 or px + pw >= width - 1:
            continue
        overlap = min(y + h, py + ph) - max(y, py)
        gap = max(px - (x + w), x - (px + pw))
        if overlap > 0.6 * min(h, ph) and 0.7 * h <= ph <= 1.3 * h and gap < 0.35 * h:
            found.append(label)
    return found


def _stat_box(stats: npt.NDArray[np.int32], label: int) -> Box:
    x, y, w, h = (int(v) for v in stats[label][:4])
    return x, y, w, h


def _pixels(box: FractionBox, width: int, height: int) -> Box:
    return round(box[0] * width), round(box[1] * height), max(1, round(box[2] * width)), max(1, round(box[3] * height))


def _inside(labels: npt.NDArray[np.int32], box: Box, top: int, unit: float, at_bottom: bool = False) -> list[int]:
    """The pieces lying mostly within `box` (patch pixels; `labels` starts at patch row `top`), leaving out those
    that run into the patch's right or bottom edge (the card's body) and specks far smaller than the glyph."""
    x, y, w, h = box
    y0, y1 = max(0, y - top), max(0, y + h - top)
    size = int(labels.max()) + 1
    totals = np.bincount(labels.ravel(), minlength=size)
    within = np.bincount(labels[y0:y1, x : x + w].ravel(), minlength=size)
    body = np.flatnonzero(np.bincount(labels[:, -1], minlength=size))
    if at_bottom:
        body = np.concatenate((body, np.flatnonzero(np.bincount(labels[-1, :], minlength=size))))
    keep = (totals >= 3 * unit * unit) & (within >= 0.4 * totals)
    keep[0] = False
    keep[body] = False
    if not keep.any():
        return []
    largest = totals[keep].max()
    return np.flatnonzero(keep & (totals >= 0.12 * largest)).tolist()


def _glyphs(
    patch: Image, ink: _Ink, rank_mask: npt.NDArray[np.bool_], suit_mask: npt.NDArray[np.bool_] | None
) -> IndexGlyphs | None:
    rank_box = _mask_box(rank_mask)
    if rank_box is None:
        return None
    rank = _canvas(ink.ink, rank_mask, rank_box, RANK_SHAPE)
    if rank is None:
        return None
    suit_box = _mask_box(suit_mask) if suit_mask is not None else None
    suit = _canvas(ink.ink, suit_mask, suit_box, SUIT_SHAPE) if suit_mask is not None and suit_box else None
    redness = _redness(patch, ink, rank_mask, rank_box, suit_mask, suit_box)
    return IndexGlyphs(rank, suit, redness, rank_box, suit_box if suit is not None else None, ink.blur)


def _mask_box(mask: npt.NDArray[np.bool_]) -> Box | None:
    """The bounding box of the mask's pixels; None if it has none."""
    x, y, w, h = cv2.boundingRect(np.ascontiguousarray(mask).view(np.uint8))
    return (x, y, w, h) if w > 0 else None


def _union(boxes: list[Box]) -> Box:
    x0 = min(box[0] for box in boxes)
    y0 = min(box[1] for box in boxes)
    x1 = max(box[0] + box[2] for box in boxes)
    y1 = max(box[1] + box[3] for box in boxes)
    return x0, y0, x1 - x0, y1 - y0


def _canvas(
    ink: npt.NDArray[np.float32], mask: npt.NDArray[np.bool_], box: Box, shape: tuple[int, int]
) -> Canvas | None:
    """The glyph's ink (0 stock .. 1 full ink) within its box, limited to its own pieces and their anti-aliased
    edges so that a neighbour's ink does not leak in, scaled into the canvas keeping its proportions."""
    x, y, w, h = box
    inner = mask[y : y + h, x : x + w]
    own = cv2.dilate(np.ascontiguousarray(inner).view(np.uint8), _square(3))
    cut = ink[y : y + h, x : x + w]
    # full ink at the glyph's own strong strokes, so that pale and dark print give the same profile
    strokes = cut[inner]
    full = max(float(np.partition(strokes, len(strokes) * 3 // 4)[len(strokes) * 3 // 4]) if len(strokes) else FULL_INK,
               INK_LEVEL * 1.5)  # fmt: skip
    glyph = cut / np.float32(full)
    np.minimum(np.maximum(glyph, 0.0, out=glyph), 1.0, out=glyph)  # np.clip, without its overhead
    glyph *= own
    canvas_h, canvas_w = shape
    if h < 2 or w < 2:
        return None
    scale = min(canvas_h / h, canvas_w / w)
    new_w, new_h = max(1, round(w * scale)), max(1, round(h * scale))
    interpolation = cv2.INTER_AREA if scale < 1 else cv2.INTER_LINEAR
    resized = cv2.resize(glyph, (new_w, new_h), interpolation=interpolation)
    canvas = np.zeros(shape, dtype=np.float32)
    top, left = (canvas_h - new_h) // 2, (canvas_w - new_w) // 2
    canvas[top : top + new_h, left : left + new_w] = resized
    if float(canvas.max()) < 0.05:
        return None
    return canvas


def _redness(
    patch: Image,
    ink: _Ink,
    rank_mask: npt.NDArray[np.bool_],
    rank_box: Box,
    suit_mask: npt.NDArray[np.bool_] | None,
    suit_box: Box | None,
) -> float:
    """Mean over the index's strong ink of red minus the stronger other channel, each relative to the card stock's
    colour (so that a warm or cold light does not change it)."""
    total, count = 0.0, 0
    for mask, box in ((rank_mask, rank_box), (suit_mask, suit_box)):
        if mask is None or box is None:
            continue
        x, y, w, h = box
        cut = patch[y : y + h, x : x + w].astype(np.float32) / np.array(ink.paper, dtype=np.float32)
        redness = cut[..., 2] - np.maximum(cut[..., 0], cut[..., 1])
        own = mask[y : y + h, x : x + w]
        strong = own & (ink.ink[y : y + h, x : x + w] > 0.3)
        chosen = strong if strong.any() else own
        total += float(redness[chosen].sum())
        count += int(chosen.sum())
    return total / count if count else 0.0
