"""Finding cards in a frame and rectifying them.

A card is a bright, colourless, card-shaped region: its outline, at some brightness level or as a closed edge, is a
quadrilateral of aspect about 88:63 that fills its minimum-area rectangle. Candidates come from several thresholds of
the frame's "whiteness" (the darkest of the three colour channels, so that felt, wood and red ink are all dark) taken
on a small copy of the frame, and from the closed edges of a larger copy, which separate a card from a background as
light as the card. Overlapping candidates are resolved in favour of the outer one (a card, not its printed frame)
unless it holds two or more card-sized candidates (two cards side by side, not one card).

Each card's corners are ordered clockwise from the top-left corner of the card standing upright (long side
vertical). Which of the two short sides is the top is not known from the outline alone; the recognizer reads the
index in both opposite corners (`Detection.orientations`) and keeps the better read.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import cv2
import numpy as np
import numpy.typing as npt

from drivers.camera.image_io import Image, u8

CARD_ASPECT = 88 / 63  # poker-size and bridge-size cards are 88 mm tall, 63 or 56 mm wide
CARD_W, CARD_H = 200, 280  # the rectified card, in pixels
CLEAN_FILL = 0.9  # an outline filling its minimum-area rectangle less well than this is not clearly a card's
DARK_TABLE = 0.25  # a table whose whiteness is below this share of the cards' is dark enough for thresholds alone
LIGHT_TABLE = 0.5  # a table whose whiteness is this share of the cards' or more is far from dark (`_clearly_light`)
# Touching cards cut apart: concave corners at least this deep (times the square root of the outline's area) are
# where two outlines cross, and a piece filling this much of its rectangle is a card (it lacks the overlap's sliver)
CUT_DEPTH, TOUCHING_FILL = 0.08, 0.75
CONVEX = 0.9  # a card's outline fills this much of its convex hull at least (a slanted card's 0.91 to 0.97)
LOOK_STEP = 4  # `_clearly_light` looks at every fourth pixel of every fourth row

Box = tuple[int, int, int, int]  # x, y, width, height in frame pixels
Quad = npt.NDArray[np.float32]  # 4 x 2 corner coordinates
# A quad's corners taken from the next one round, the previous one and the opposite one (np.roll by -1, 1 and 2,
# as an index: a fraction of the cost on four points)
_NEXT, _PREVIOUS, _OPPOSITE = np.array([1, 2, 3, 0]), np.array([3, 0, 1, 2]), np.array([2, 3, 0, 1])


@dataclass(frozen=True, slots=True)
class Zone:
    """A named part of the frame where cards are dealt (the Player and the Banker boxes)."""

    name: str
    box: Box


@dataclass(frozen=True, slots=True)
class DetectorConfig:
    level_width: int = 320  # long side of the copy thresholded at several levels
    edge_width: int = 640  # long side of the copy searched for closed edges (0: no edge search)
    levels: int = 8  # thresholds between the 40th and the 99.5th percentile of whiteness
    min_area: float = 0.003  # smallest card, as a fraction of the searched region's area
    max_area: float = 0.6  # largest card, as a fraction of the searched region's area
    min_side: int = 24  # smallest card width in frame pixels: below this its index cannot be read
    aspect: tuple[float, float] = (1.15, 1.8)  # long side / short side (1.4 seen square on; perspective widens it)
    min_fill: float = 0.85  # outline area / minimum-area rectangle area (rounded corners lose ~2%)
    # A camera far off vertical sees a turned card as a quadrilateral with no right angle, which fills its rectangle
    # less (0.78 for a card 48 degrees off vertical): an outline filling at least this much, convex (`CONVEX`) and
    # not two cards cut apart (`cut_touching`), is a card too (1.0: none)
    slanted_fill: float = 1.0
    dark_table: float = DARK_TABLE  # a table darker than this share of the cards' whiteness is searched by thresholds
    zone_margin: float = 0.15  # a zone is searched with this margin (fraction of its size) around it
    refine: bool = True  # snap each side to the card's edge at full resolution
    dark_tables_only: bool = False  # find nothing on a table not clearly darker than the cards (wood, white)
    cut_touching: bool = False  # cut apart outlines of cards that touch or overlap (`_cut_apart`)


@dataclass(frozen=True, slots=True, eq=False)
class Detection:
    quad: Quad  # clockwise from the top-left corner of the upright card, in frame coordinates
    zone: str | None = None
    box: Box = field(init=False)

    def __post_init__(self) -> None:
        x0, y0 = np.floor(self.quad.min(axis=0)).astype(int)
        x1, y1 = np.ceil(self.quad.max(axis=0)).astype(int)
        object.__setattr__(self, "box", (int(x0), int(y0), int(x1 - x0), int(y1 - y0)))

    def orientations(self) -> list[Quad]:
        """The card's corners in each order worth reading: upright and upside down (the index sits in opposite
        corners), plus the two sideways orders when the outline is too square to tell the long side."""
        quads = [self.quad, self.quad[_OPPOSITE]]
        sides = _sides(self.quad)
        if max(sides) / max(min(sides), 1e-6) < 1.12:
            quads += [self.quad[_PREVIOUS], self.quad[_NEXT]]
        return quads


def find_cards(
    frame: Image, zones: tuple[Zone, ...] | list[Zone] = (), config: DetectorConfig | None = None
) -> list[Detection]:
    """The cards in a BGR frame: in each zone if zones are given (a card belongs to the zone holding its centre),
    else anywhere."""
    config = config or DetectorConfig()
    height, width = frame.shape[:2]
    if not zones:
        return [Detection(quad) for quad in _find_in(frame, config)]
    found: list[Detection] = []
    for zone in zones:
        x, y, w, h = zone.box
        mx, my = int(w * config.zone_margin), int(h * config.zone_margin)
        x0, y0 = max(0, x - mx), max(0, y - my)
        x1, y1 = min(width, x + w + mx), min(height, y + h + my)
        if x1 - x0 < 2 or y1 - y0 < 2:
            continue
        for local in _find_in(frame[y0:y1, x0:x1], config):
            quad = local + np.array([x0, y0], dtype=np.float32)
            cx, cy = quad.mean(axis=0)
            if x <= cx < x + w and y <= cy < y + h:
                found.append(Detection(quad, zone.name))
    return found


def whiteness(image: Image) -> npt.NDArray[np.uint8]:
    """The darkest colour channel: high on white card stock, low on ink of any colour, felt and wood."""
    return np.minimum(np.minimum(image[..., 0], image[..., 1]), image[..., 2])  # faster than cv2.split and cv2.min


def _find_in(region: Image, config: DetectorConfig) -> list[Quad]:
    height, width = region.shape[:2]
    if min(height, width) < config.min_side:
        return []
    if config.dark_tables_only and _clearly_light(region):
        return []
    candidates: list[_Candidate] = []
    # The picture shrunk by whole factors (OpenCV's fast path): small for the thresholds, larger for the edges.
    edge_factor = max(1, -(-max(height, width) // max(config.edge_width, config.level_width, 1)))
    level_factor = edge_factor * max(1, round(-(-max(height, width) // max(config.level_width, 1)) / edge_factor))
    shrunk = _shrinking(region, level_factor)
    small = whiteness(shrunk[-1][1])
    edge_scale, level_scale = 1.0 / edge_factor, 1.0 / level_factor
    low, table, high = _grey_levels(small)
    dark = table < config.dark_table * high
    if config.dark_tables_only and not dark:
        return []
    region_area = float(height * width)
    # On a dark cloth a few thresholds between cloth and cards find every card; a lighter table needs them all.
    levels = (
        np.linspace(table + 0.25 * (high - table), table + 0.75 * (high - table), 3)
        if dark
        else np.linspace(low, high, config.levels)
    )
    for level in np.unique(levels.astype(int)):
        _, mask = cv2.threshold(small, int(level), 255, cv2.THRESH_BINARY)
        candidates += _candidates(u8(mask), level_scale, cv2.RETR_EXTERNAL, config, region_area=region_area)
    chosen = _select(candidates)
    # Closed edges too, when the thresholds may not separate cards from the table: a table not clearly darker than
    # the cards (wood, cardboard), an outline not clearly a card's, or bright areas no card found explains. On a
    # dark cloth with every card found clearly, the edge search (the costliest step) is skipped.
    if config.edge_width > 0 and (
        not dark
        or any(candidate.fill < CLEAN_FILL for candidate in chosen)
        or _unexplained(small, level_scale, chosen, config, region_area)
    ):
        # the copy for the edges is normally one made on the way to the small one
        on_the_way = [image for factor, image in shrunk if factor == edge_factor]
        white = whiteness(on_the_way[0] if on_the_way else _shrunk(region, edge_factor))
        edges = u8(cv2.dilate(cv2.Canny(cv2.GaussianBlur(white, (5, 5), 0), 20, 60), np.ones((3, 3), np.uint8)))
        extra = _candidates(edges, edge_scale, cv2.RETR_LIST, config, region_area=region_area)
        if extra:
            chosen = _select(candidates + extra)
    # A card cut by the edge of the picture shows an outline that is not its own, unless it has a card's proportions
    # (it only touches the edge): it is left unread.
    quads = [
        _fit_quad(candidate.points)
        for candidate in chosen
        if not candidate.cut or abs(candidate.aspect - CARD_ASPECT) < 0.12
    ]
    if config.refine:
        quads = refine_quads(region, quads)
    return quads


def _grey_levels(white: npt.NDArray[np.uint8]) -> tuple[int, int, int]:
    """The 40th, 60th and 99.5th percentiles of the whiteness: most of the picture (the 60th) is table, the
    brightest of it is card stock."""
    counts = np.bincount(white.ravel(), minlength=256).cumsum()
    low, table, high = (int(np.searchsorted(counts, share * counts[-1])) for share in (0.40, 0.60, 0.995))
    return low, table, high


def _clearly_light(region: Image) -> bool:
    """Whether the table is far from dark (`LIGHT_TABLE`), told from every `LOOK_STEP`th pixel: a look at a
    sixteenth of the pixels, where the shrunk copy the thresholds need cost half a millisecond a zone (a zone with
    its margin is shrunk by 3, off OpenCV's fast path). On 387 photos and halves of them (webcam scenes, phone
    close-ups, top-down photos), the table's share seen so was within 0.06 of the one from the shrunk copy, far
    inside the margin: a table passed over here is never one the thresholds would call dark."""
    _, table, high = _grey_levels(whiteness(region[::LOOK_STEP, ::LOOK_STEP]))
    return table >= LIGHT_TABLE * high


def _unexplained(
    small: npt.NDArray[np.uint8], scale: float, chosen: list[_Candidate], config: DetectorConfig, region_area: float
) -> bool:
    """Whether bright areas, at least half a card large, lie outside every card found."""
    min_area = 0.5 * _area_bounds(config, region_area, scale)[0]
    _, bright = cv2.threshold(small, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    if cv2.countNonZero(bright) < min_area:
        return False  # not enough bright pixels in all for one such area
    explained = np.zeros_like(small)
    for candidate in chosen:
        hull = cv2.convexHull((candidate.points * scale).astype(np.int32))
        cv2.fillConvexPoly(explained, hull, 255)
    explained = u8(cv2.dilate(explained, np.ones((5, 5), np.uint8)))
    rest = cv2.morphologyEx(cv2.bitwise_and(bright, cv2.bitwise_not(explained)), cv2.MORPH_OPEN, np.ones((3, 3)))
    if cv2.countNonZero(rest) < min_area:
        return False  # the usual case, every bright area explained: no need to tell the areas apart
    count, _, stats, _ = cv2.connectedComponentsWithStats(rest, connectivity=8)
    return bool(count > 1 and stats[1:, 4].max() >= min_area)


def _shrunk(image: Image, factor: int) -> Image:
    """The image shrunk by a whole factor, averaging each factor x factor block (a few pixels of the right and
    bottom edges are dropped to make the division exact). Halving repeatedly is OpenCV's fastest path."""
    return _shrinking(image, factor)[-1][1]


def _shrinking(image: Image, factor: int) -> list[tuple[int, Image]]:
    """`_shrunk`, with every copy made on the way: (factor shrunk by so far, copy), from (1, the image itself) to the
    one shrunk by `factor`, so that a copy shrunk by a factor on the way need not be made again."""
    steps = [(1, image)]
    done = 1
    while factor > 1:
        step = 2 if factor % 2 == 0 else factor
        height, width = image.shape[:2]
        rows, columns = height // step, width // step
        if rows < 1 or columns < 1:
            break
        image = u8(cv2.resize(image[: rows * step, : columns * step], (columns, rows), interpolation=cv2.INTER_AREA))
        factor //= step
        done *= step
        steps.append((done, image))
    return steps


@dataclass(slots=True)
class _Candidate:
    contour: npt.NDArray[np.int32]  # outline in the pixels of the mask it was found in
    scale: float  # of that mask, relative to the region
    area: float  # in region pixels
    fill: float
    rect: Box
    aspect: float  # long side / short side of its minimum-area rectangle
    cut: bool  # the outline runs along the edge of the picture

    @property
    def points(self) -> npt.NDArray[np.float32]:
        """The outline in region coordinates (made only for the few candidates chosen)."""
        return self.contour.reshape(-1, 2).astype(np.float32) / self.scale


def _candidates(
    mask: npt.NDArray[np.uint8], scale: float, retrieval: int, config: DetectorConfig, *, region_area: float
) -> list[_Candidate]:
    """Card-shaped outlines in a binary mask of the region shrunk by `scale`; with `config.cut_touching`, the cards
    of an outline that is no card's shape cut apart where their outlines cross (`_cut_apart`)."""
    min_area, _ = _area_bounds(config, region_area, scale)
    # Cheap test first: an outline shorter than the smallest card's perimeter (diagonal steps count 1) is not one.
    min_points = int(0.65 * 2 * (1 + CARD_ASPECT) * np.sqrt(min_area / CARD_ASPECT))
    contours, _ = cv2.findContours(mask, retrieval, cv2.CHAIN_APPROX_NONE)
    found = []
    for outline in contours:
        if len(outline) < min_points:
            continue
        contour = np.asarray(outline, dtype=np.int32)
        candidate = _card(contour, mask.shape, scale, config, region_area, config.min_fill)
        if candidate is not None:
            found.append(candidate)
            continue
        pieces = []
        if config.cut_touching and cv2.contourArea(contour) >= 1.5 * min_area:
            pieces = [_card(piece, mask.shape, scale, config, region_area, TOUCHING_FILL) for piece in
                      _cut_apart(contour)]  # fmt: skip
            found += [piece for piece in pieces if piece is not None]
        if config.slanted_fill < config.min_fill and not any(pieces):
            slanted = _card(contour, mask.shape, scale, config, region_area, config.slanted_fill)
            if slanted is not None and slanted.area * scale**2 >= CONVEX * cv2.contourArea(cv2.convexHull(contour)):
                found.append(slanted)
    return found


def _card(
    contour: npt.NDArray[np.int32], shape: tuple[int, ...], scale: float, config: DetectorConfig, region_area: float,
    min_fill: float,
) -> _Candidate | None:  # fmt: skip
    """The outline as a candidate card if it has a card's size and shape, else None."""
    min_area, max_area = _area_bounds(config, region_area, scale)
    x, y, w, h = cv2.boundingRect(contour)
    if w * h < min_area:
        return None
    area = cv2.contourArea(contour)
    if not min_area <= area <= max_area or area < 0.45 * w * h:  # even at 45 degrees a card fills half its box
        return None
    (_, (rw, rh), _) = cv2.minAreaRect(contour)
    if min(rw, rh) < config.min_side * scale * 0.9:
        return None
    aspect = max(rw, rh) / min(rw, rh)
    fill = area / (rw * rh)
    if not config.aspect[0] <= aspect <= config.aspect[1] or fill < min_fill:
        return None
    box = _scaled_box((x, y, w, h), scale)
    cut = x <= 0 or y <= 0 or x + w >= shape[1] or y + h >= shape[0]
    return _Candidate(contour, scale, area / scale**2, fill, box, aspect, cut)


def _area_bounds(config: DetectorConfig, region_area: float, scale: float) -> tuple[float, float]:
    """The smallest and largest card's area, in pixels of the region shrunk by `scale`."""
    min_area = max(config.min_area * region_area, config.min_side**2 * CARD_ASPECT) * scale**2
    return min_area, config.max_area * region_area * scale**2


def _cut_apart(contour: npt.NDArray[np.int32], times: int = 2) -> list[npt.NDArray[np.int32]]:
    """The pieces of an outline cut along the shortest line between two of its concave corners, and each piece cut
    again, `times` cuts deep: where two cards touch or overlap, their outlines cross at concave corners, and the
    line between two such corners divides the cards (a piece lacks the sliver of the other card beyond the line)."""
    pieces = [contour]
    for _ in range(times):
        cut = [_cut(piece) for piece in pieces]
        if not any(cut):
            break
        pieces = [part for piece, parts in zip(pieces, cut, strict=True) for part in (parts or [piece])]
    return pieces if len(pieces) > 1 else []


def _cut(contour: npt.NDArray[np.int32]) -> list[npt.NDArray[np.int32]] | None:
    """The outline cut in two along the shortest line between two of its concave corners (convexity defects deeper
    than `CUT_DEPTH` times the square root of its area), or None if it has no two such corners."""
    if len(contour) < 8:
        return None
    try:
        defects = cv2.convexityDefects(contour, cv2.convexHull(contour, returnPoints=False))
    except cv2.error:  # an outline that crosses itself has no ordered hull
        return None
    if defects is None:
        return None
    depth = CUT_DEPTH * math.sqrt(max(cv2.contourArea(contour), 1.0))
    corners = np.sort(defects[:, 0, 2][defects[:, 0, 3] / 256.0 >= depth])
    if len(corners) < 2:
        return None
    points = contour.reshape(-1, 2)
    at = points[corners].astype(np.float64)
    distances = np.sqrt(((at[:, None] - at[None, :]) ** 2).sum(axis=2)) + np.tril(np.full((len(at),) * 2, np.inf))
    first, second = np.unravel_index(int(np.argmin(distances)), distances.shape)
    a, b = int(corners[first]), int(corners[second])
    return [points[a : b + 1].reshape(-1, 1, 2), np.concatenate([points[b:], points[: a + 1]]).reshape(-1, 1, 2)]


def _scaled_box(box: Box, scale: float) -> Box:
    x, y, w, h = box
    return int(x / scale), int(y / scale), math.ceil(w / scale), math.ceil(h / scale)


def _select(candidates: list[_Candidate]) -> list[_Candidate]:
    """One candidate per card: the outer outline, unless it holds two or more cards."""
    candidates = sorted(candidates, key=lambda c: -c.area)
    if not candidates:
        return []
    boxes = np.array([c.rect for c in candidates], dtype=np.float64)
    x0, y0 = boxes[:, 0], boxes[:, 1]
    x1, y1 = x0 + boxes[:, 2], y0 + boxes[:, 3]
    widths = np.clip(np.minimum(x1[:, None], x1[None, :]) - np.maximum(x0[:, None], x0[None, :]), 0, None)
    heights = np.clip(np.minimum(y1[:, None], y1[None, :]) - np.maximum(y0[:, None], y0[None, :]), 0, None)
    shared = widths * heights  # shared[i, j]: the area of the boxes' intersection
    box_area = boxes[:, 2] * boxes[:, 3]
    areas = np.array([c.area for c in candidates])
    fills = np.array([c.fill for c in candidates])
    chosen: list[int] = []
    for index in range(len(candidates)):
        # the same card found again (at another level): its box shared, and its outline too (boxes overlap where
        # cards touch at a slant, outlines do not)
        near = [other for other in chosen if shared[index, other] > 0.3 * box_area[index]]
        if any(_overlap(candidates[index], candidates[other]) > 0.3 * areas[index] for other in near):
            continue
        later = np.arange(index + 1, len(candidates))
        inner = later[(areas[later] > 0.05 * areas[index]) & (shared[index, later] > 0.8 * box_area[later])]
        disjoint: list[int] = []
        for other in inner[np.argsort(-fills[inner], kind="stable")].tolist():
            if not disjoint or (shared[other, disjoint] < 0.2 * box_area[other]).all():
                disjoint.append(other)
        if len(disjoint) >= 2:
            continue  # several cards merged into one outline: the inner candidates are the cards
        chosen.append(index)
    return [candidates[index] for index in chosen]


def _overlap(a: _Candidate, b: _Candidate) -> float:
    """The area (region pixels) shared by the convex hulls of two candidates' outlines."""
    area, _ = cv2.intersectConvexConvex(cv2.convexHull(a.points), cv2.convexHull(b.points))
    return float(area)


def _fit_quad(points: npt.NDArray[np.float32]) -> Quad:
    """The four corners of an outline: where the four longest sides of its simplified convex hull meet when
    extended (a card's corners are rounded, or cut by a coarse threshold, and in perspective it is no rectangle);
    its minimum-area rectangle if those sides do not make a quadrilateral covering the hull (a thumb over a corner)."""
    hull = cv2.convexHull(points)
    hull_area = cv2.contourArea(hull)
    polygon = cv2.approxPolyDP(hull, 0.01 * cv2.arcLength(hull, True), True).reshape(-1, 2).astype(np.float64)
    if len(polygon) >= 4:
        ends = np.concatenate((polygon[1:], polygon[:1]))  # each side's end: the next vertex round the hull
        lengths = np.sqrt(((ends - polygon) ** 2).sum(axis=1))
        sides = sorted(np.argsort(lengths)[-4:].tolist())  # the four longest, in their order round the hull
        corners = []
        for index in range(4):
            first, second = sides[index - 1], sides[index]
            corner = _intersection(
                (polygon[first], ends[first] - polygon[first]), (polygon[second], ends[second] - polygon[second])
            )
            if corner is None:
                break
            corners.append(corner)
        if len(corners) == 4:
            quad = np.array(corners, dtype=np.float32)
            area = cv2.contourArea(quad)
            if cv2.isContourConvex(quad) and 0.95 * hull_area <= area <= 1.12 * hull_area:
                return order_corners(quad)
    return order_corners(cv2.boxPoints(cv2.minAreaRect(hull)).astype(np.float32))


def _sides(quad: Quad) -> tuple[float, float]:
    """Mean length of the top and bottom sides, and of the left and right sides."""
    lengths = np.sqrt(((quad - quad[_NEXT]) ** 2).sum(axis=1))
    return float(lengths[0] + lengths[2]) / 2, float(lengths[1] + lengths[3]) / 2


def order_corners(quad: Quad) -> Quad:
    """Corners clockwise (on screen) from the top-left of the card stood upright: long sides vertical, and of the two
    short sides the one nearer the top of the frame first."""
    centre = quad.sum(axis=0) / 4
    angles = np.arctan2(quad[:, 1] - centre[1], quad[:, 0] - centre[0])
    quad = quad[np.argsort(angles)]  # clockwise on screen, since y grows downwards
    horizontal, vertical = _sides(quad)
    if horizontal > vertical:  # lying sideways: make a long side the left one
        quad = quad[_NEXT]
    # of the two short sides, start at the one whose midpoint is higher in the frame
    if (quad[0, 1] + quad[1, 1]) > (quad[2, 1] + quad[3, 1]):
        quad = quad[_OPPOSITE]
    return np.ascontiguousarray(quad, dtype=np.float32)


def warp(
    frame: Image, quad: Quad, region: tuple[float, float, float, float] = (0.0, 0.0, 1.0, 1.0), scale: float = 1.0
) -> Image:
    """The part `region` (x, y, w, h as fractions of the upright card) of the card whose corners are `quad`,
    rectified to `scale` times the canonical card size."""
    rx, ry, rw, rh = region
    out_w, out_h = max(1, round(CARD_W * rw * scale)), max(1, round(CARD_H * rh * scale))
    # the canonical card's corners, shifted so that the region's top-left lands at (0, 0)
    x0, y0 = -rx * CARD_W * scale, -ry * CARD_H * scale
    x1, y1 = x0 + CARD_W * scale, y0 + CARD_H * scale
    target = np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]], dtype=np.float32)
    matrix = cv2.getPerspectiveTransform(quad.astype(np.float32), target)
    return u8(
        cv2.warpPerspective(frame, matrix, (out_w, out_h), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    )


_ALONG = np.linspace(0.15, 0.85, 15, dtype=np.float32)  # where each side is probed (its corners are rounded)
_ALONG64 = _ALONG.astype(np.float64)
_OUTWARDS = np.array([1.0, -1.0])


def refine_quad(image: Image, quad: Quad) -> Quad:
    """The quad with each side moved onto the card's edge. Along short lines across each side, the edge is where
    whiteness falls most going outwards (card stock to table); through those points a line is fitted (offset and tilt
    from the side as it was, by least squares, twice, the second time without the points more than a pixel and a
    half off the first), and the corners are where the fitted sides meet. A side with too few clear edge points keeps
    its place, and a result that moved too far or is no longer convex is dropped for the original."""
    return refine_quads(image, [quad])[0]


def refine_quads(image: Image, quads: list[Quad]) -> list[Quad]:
    """`refine_quad` for every card of a frame at once: one sampling of the picture and one line fit for all the
    cards' sides (a card's few thousand samples cost less than the calls that take them, one card at a time). Each
    card's sides are probed over their own reach; the lines across the sides of a card of shorter reach are padded
    to the longest, and the padding never counts as an edge."""
    result = list(quads)
    kept = [index for index, quad in enumerate(quads) if _side_lengths(quad).min() >= 4]
    if not kept:
        return result
    original = np.array([quads[index] for index in kept], dtype=np.float32)  # card, corner, xy
    corners = original.astype(np.float64)
    directions = corners[:, _NEXT] - corners
    lengths = np.sqrt((directions**2).sum(axis=2))  # card, side
    reaches = [max(3.0, 0.07 * min(side[0] + side[2], side[1] + side[3]) / 2) for side in lengths]
    spans = [np.arange(-reach, reach + 1.0, 1.0) for reach in reaches]
    steps = max(len(span) for span in spans)
    offsets = np.array([np.pad(span, (0, steps - len(span)), mode="edge") for span in spans])  # card, step
    normals = directions[..., ::-1] * _OUTWARDS / lengths[..., None]  # (dy, -dx): outwards, as corners run clockwise
    base = corners[:, :, None, :] + _ALONG[None, None, :, None] * directions[:, :, None, :]  # card, side, probe, xy
    points = base[:, :, :, None, :] + offsets[:, None, None, :, None] * normals[:, :, None, None, :]
    flat = points.astype(np.float32).reshape(-1, steps, 2)
    samples = cv2.remap(image, flat[..., 0], flat[..., 1], cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    profile = _channel_min(u8(samples)).reshape(len(kept), 4, len(_ALONG), steps).astype(np.int16)
    fall = profile[..., :-1] - profile[..., 1:]  # positive where whiteness drops going outwards
    for card, span in enumerate(spans):
        fall[card, :, :, len(span) - 1 :] = np.iinfo(np.int16).min  # the padding: never an edge
    best = fall.argmax(axis=3)
    shift = offsets[np.arange(len(kept))[:, None, None], best] + 0.5  # card, side, probe: the edge along the normal
    # the line fit, one row per side of every card
    rows = (len(kept) * 4, len(_ALONG))
    shift_rows = shift.reshape(rows)
    weight = (fall.max(axis=3) > 12.0).astype(np.float64).reshape(rows)
    along = (_ALONG64 * lengths[..., None]).reshape(rows)
    for _ in range(2):
        fit_a, fit_b = _weighted_line(along, shift_rows, weight)
        weight = weight * (np.abs(shift_rows - (fit_a[:, None] + fit_b[:, None] * along)) < 1.5)
    usable = weight.sum(axis=1) >= 6
    offset = np.where(usable, fit_a, 0.0).reshape(len(kept), 4)
    tilt = np.where(usable, fit_b, 0.0).reshape(len(kept), 4)
    # each side: through corner + a * normal, along direction + b * length * normal
    starts = corners + offset[..., None] * normals
    runs = directions / lengths[..., None] + tilt[..., None] * normals
    # corner i is where side i-1 meets side i: starts[i-1] + t * runs[i-1] = starts[i] + u * runs[i]
    before_start, before_run = starts[:, _PREVIOUS], runs[:, _PREVIOUS]
    cross = before_run[..., 0] * runs[..., 1] - before_run[..., 1] * runs[..., 0]
    gap = starts - before_start
    t = (gap[..., 0] * runs[..., 1] - gap[..., 1] * runs[..., 0]) / np.where(np.abs(cross) > 1e-9, cross, 1.0)
    met = before_start + t[..., None] * before_run
    refined = np.where((np.abs(cross) > 1e-9)[..., None], met, corners).astype(np.float32)
    moved = np.sqrt(((refined - original) ** 2).sum(axis=2)).max(axis=1)
    for card, index in enumerate(kept):
        quad, fitted = quads[index], np.ascontiguousarray(refined[card])
        area, before = cv2.contourArea(fitted), cv2.contourArea(quad)
        if (
            moved[card] > 2 * reaches[card]
            or not cv2.isContourConvex(fitted)
            or not 0.8 * before < area < 1.25 * before
        ):
            continue  # moved too far, or no longer a convex card: the quad as it was
        result[index] = fitted
    return result


def _side_lengths(quad: Quad) -> npt.NDArray[np.float64]:
    """The lengths of the quad's four sides, from each corner to the next."""
    corners = quad.astype(np.float64)
    return np.asarray(np.sqrt(((corners[_NEXT] - corners) ** 2).sum(axis=1)), dtype=np.float64)


def _channel_min(samples: Image) -> npt.NDArray[np.uint8]:
    """The darkest channel of each sample (whiteness), by pairwise minima: a reduction over an axis of three is slow."""
    if samples.ndim == 2:
        return samples
    darkest = samples[..., 0]
    for channel in range(1, samples.shape[-1]):
        darkest = np.minimum(darkest, samples[..., channel])
    return darkest


def _weighted_line(
    x: npt.NDArray[np.float64], y: npt.NDArray[np.float64], w: npt.NDArray[np.float64]
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """Per row, the weighted least-squares line y = a + b x (b = 0 where the points cannot tell a slope)."""
    wx = w * x
    s0, s1, s2, sy, sxy = np.stack((w, wx, wx * x, w * y, wx * y)).sum(axis=2)  # the five sums in one reduction
    determinant = s0 * s2 - s1 * s1
    safe = np.abs(determinant) > 1e-9
    slope = np.where(safe, (s0 * sxy - s1 * sy) / np.where(safe, determinant, 1.0), 0.0)
    offset = np.where(s0 > 0, (sy - slope * s1) / np.where(s0 > 0, s0, 1.0), 0.0)
    return offset, slope


def _intersection(
    first: tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]],
    second: tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]],
) -> npt.NDArray[np.float64] | None:
    (p, r), (q, s) = first, second
    cross = r[0] * s[1] - r[1] * s[0]
    if abs(cross) < 1e-6:
        return None
    t = ((q[0] - p[0]) * s[1] - (q[1] - p[1]) * s[0]) / cross
    return np.asarray(p + t * r, dtype=np.float64)
