"""Real and rendered scenes for the camera benchmark (bench/camera_bench.py) and the tests.

- `studio_scene`: a studio frame rendered from *real* card photos: the cards of the top-down photos of
  shared/data/cards/webcam-9-to-ace (never trained on), each cut along its outline in its photo (`card_outline`),
  laid on felt of a random colour in the Player and Banker boxes, turned any way, then the whole table seen by a
  camera up to 50 degrees off vertical (foreshortened and in perspective), with sensor noise, a little blur and, in
  every other frame, glare.
- `roboflow_truth`: the labelled corner indices of a roboflow-card-detection photo, un-stretched to 1280 x 720.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np
import numpy.typing as npt

from drivers.camera.detect import whiteness
from drivers.camera.recognize import CardRead
from drivers.camera.training.dataset import label_names

Image = npt.NDArray[np.uint8]
CARD_CONTRAST = 40  # grey levels between the card stock and the table around it, at least
SPAN = 0.1  # the card found reaches each side of its labelled box to within this fraction of the box


@dataclass(frozen=True)
class Card:
    code: str
    polygon: npt.NDArray[np.float32]  # 4 x 2, in frame pixels


def card_images(photos: Path, include: str = "cam_image", keep: Callable[[str], bool] = lambda image: True
                ) -> list[tuple[str, Image]]:  # fmt: skip
    """Every labelled card of the top-down photos (whose path holds `include`, and that `keep` keeps), as a card
    dealt on a table shows it: its outline found in the photo (`card_outline`) and rectified to the card's shape, so
    that a card lying slanted in its photo brings no wedges of that table along; where no outline is found, the
    labelled box trimmed of the table around it."""
    cards = []
    with (photos / "labels_rank_suit.csv").open(newline="") as handle:
        for row in csv.DictReader(handle):
            if include not in row["image"] or not keep(row["image"]):
                continue
            image = cv2.imread(str(photos / row["image"]))
            if image is None:
                continue
            x0, y0, x1, y1 = (int(row[key]) for key in ("xmin", "ymin", "xmax", "ymax"))
            card = rectified_card(image, (x0, y0, x1, y1))
            if card is None:
                trim_x, trim_y = (x1 - x0) // 30, (y1 - y0) // 30
                card = image[y0 + trim_y : y1 - trim_y, x0 + trim_x : x1 - trim_x]
            # Studio light is even and bright: each photo's card stock is brought to the same white (some of the
            # webcam photos are dim), keeping its colour balance, noise and blur.
            lit = card.astype(np.float32) * (235.0 / max(float(np.percentile(card, 95)), 1.0))
            cards.append((row["code"], np.clip(lit, 0, 255).astype(np.uint8)))
    return cards


def card_outline(image: Image, box: tuple[int, int, int, int]) -> npt.NDArray[np.float32] | None:
    """The four corners of the card labelled by `box` (x0, y0, x1, y1) in its photo, clockwise from the top left
    (the card upright, as the top-down photos show it), or None. The labelled box is the least upright box around
    the card: within it the card is what is bright and colourless (card stock, by Otsu's threshold on the darkest
    channel) and the table in its corners is not; the card is the least rectangle around the hull of the largest
    bright piece, which must be card-shaped and span the labelled box."""
    x0, y0, x1, y1 = box
    region = image[y0:y1, x0:x1]
    darkest = cv2.GaussianBlur(whiteness(region), (5, 5), 0)
    _, stock = cv2.threshold(darkest, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    table = cv2.bitwise_not(stock)
    if not cv2.countNonZero(table) or cv2.mean(darkest, stock)[0] - cv2.mean(darkest, table)[0] < CARD_CONTRAST:
        return None  # no card stock clearly lighter than a table
    stock = cv2.morphologyEx(stock, cv2.MORPH_OPEN, np.ones((5, 5), np.uint8))  # specks of a pale table
    contours, _ = cv2.findContours(stock, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    if not contours:
        return None
    rect = cv2.minAreaRect(cv2.convexHull(max(contours, key=cv2.contourArea)))  # the hull spans the card's print
    width, height = rect[1]
    corners = cv2.boxPoints(rect) + np.array([x0, y0], dtype=np.float32)
    span = np.concatenate([corners.min(axis=0), corners.max(axis=0)]) - np.array(box, dtype=np.float32)
    card_shaped = 1.2 <= max(width, height) / max(min(width, height), 1.0) <= 1.6
    if not card_shaped or np.abs(span).max() > SPAN * max(x1 - x0, y1 - y0):
        return None
    # clockwise in the picture (y grows downwards) from the corner nearest the top left: these photos show every
    # card within 45 degrees of upright
    centre = corners.mean(axis=0)
    clockwise = corners[np.argsort(np.arctan2(corners[:, 1] - centre[1], corners[:, 0] - centre[0]))]
    ordered = np.roll(clockwise, -int(np.argmin(clockwise.sum(axis=1))), axis=0)
    if np.hypot(*(ordered[1] - ordered[0])) > np.hypot(*(ordered[3] - ordered[0])):
        return None  # wider than tall: not a card upright
    return np.asarray(ordered, dtype=np.float32)


def rectified_card(image: Image, box: tuple[int, int, int, int]) -> Image | None:
    """The card labelled by `box`, cut along its outline and rectified to 63 x 88 proportions at the photo's scale."""
    corners = card_outline(image, box)
    if corners is None:
        return None
    width = float(np.hypot(*(corners[1] - corners[0])))
    size = (round(width), round(width * 88 / 63))
    target = np.array([[0, 0], [size[0], 0], [size[0], size[1]], [0, size[1]]], dtype=np.float32)
    matrix = cv2.getPerspectiveTransform(corners, target)
    return np.asarray(cv2.warpPerspective(image, matrix, size, flags=cv2.INTER_AREA), dtype=np.uint8)


def _felt(size: tuple[int, int], rng: np.random.Generator, cloth: tuple[int, int, int] | None = None) -> Image:
    width, height = size
    colour = rng.choice([(40, 110, 30), (90, 60, 20), (30, 30, 120), (50, 50, 50), (110, 80, 40), (20, 80, 70)])
    base = np.array(colour, dtype=np.float32) * rng.uniform(0.7, 1.3)
    if cloth is not None:
        base = np.array(cloth, dtype=np.float32)
    noise = cv2.GaussianBlur(rng.normal(0, 12, (height, width)).astype(np.float32), (0, 0), 1.5)
    frame = base[None, None, :] + noise[..., None]
    return np.clip(frame, 0, 255).astype(np.uint8)


def studio_scene(cards: list[tuple[str, Image]], size: tuple[int, int], seed: int, tilt_degrees: float,
                 count: int = 6, cloth: tuple[int, int, int] | None = None, spacing: float = 0.14,
                 turn: tuple[float, float] = (0.0, 360.0)) -> tuple[Image, list[Card]]:  # fmt: skip
    """A frame of `size` with `count` cards (distinct codes) dealt in two boxes, seen `tilt_degrees` off vertical;
    `cloth`: the table's colour (default: a felt drawn at random); `spacing`: between cards, as a fraction of the
    frame's width (a card is 0.095 wide: less overlaps them, each on top of the one before); `turn`: the range of
    the cards' angles in degrees."""
    rng = np.random.default_rng(seed)
    width, height = size
    tilt = math.radians(tilt_degrees)
    table_height = int(height / math.cos(tilt))  # the table top-down, before the camera's foreshortening
    table = _felt((width, table_height), rng, cloth)
    chosen: list[tuple[str, Image]] = []
    for index in rng.permutation(len(cards)):
        if cards[int(index)][0] not in {code for code, _ in chosen}:
            chosen.append(cards[int(index)])
        if len(chosen) == count:
            break
    card_width = width * 0.095
    placed = []
    for slot, (code, picture) in enumerate(chosen):
        box_left = 0.06 * width if slot < count // 2 else 0.54 * width
        cx = box_left + (0.07 + spacing * (slot % (count // 2))) * width + rng.uniform(-0.01, 0.01) * width
        cy = table_height * (0.5 + rng.uniform(-0.08, 0.08))
        w, h = card_width, card_width * 88 / 63
        angle = math.radians(rng.uniform(*turn))
        corners = np.array([[-w / 2, -h / 2], [w / 2, -h / 2], [w / 2, h / 2], [-w / 2, h / 2]])
        rotation = np.array([[math.cos(angle), -math.sin(angle)], [math.sin(angle), math.cos(angle)]])
        target = (corners @ rotation.T + [cx, cy]).astype(np.float32)
        ph, pw = picture.shape[:2]
        source = np.array([[0, 0], [pw, 0], [pw, ph], [0, ph]], dtype=np.float32)
        matrix = cv2.getPerspectiveTransform(source, target)
        warped = cv2.warpPerspective(picture, matrix, (width, table_height), flags=cv2.INTER_AREA)
        mask = cv2.warpPerspective(np.full((ph, pw), 255, np.uint8), matrix, (width, table_height))
        table[mask > 127] = warped[mask > 127]
        placed.append((code, target))
    keystone = 1 - 0.35 * math.sin(tilt)  # the far edge of the table looks narrower
    source = np.array([[0, 0], [width, 0], [width, table_height], [0, table_height]], dtype=np.float32)
    target = np.array([[width * (1 - keystone) / 2, 0], [width * (1 + keystone) / 2, 0], [width, height], [0, height]],
                      dtype=np.float32)  # fmt: skip
    camera = cv2.getPerspectiveTransform(source, target)
    # Beyond the table's far corners, more cloth of its colour: a reflection of the table (as until 2026-12-05)
    # showed mirrored cards there, which a camera never sees and the scoring could only call invented reads.
    cloth_colour = tuple(float(c) for c in cv2.mean(table[:8])[:3])
    frame = cv2.warpPerspective(table, camera, (width, height), flags=cv2.INTER_AREA,
                                borderMode=cv2.BORDER_CONSTANT, borderValue=cloth_colour)  # fmt: skip
    image = frame.astype(np.float32)
    if seed % 2:
        yy, xx = np.mgrid[0:height, 0:width].astype(np.float32)
        gx, gy, radius = rng.uniform(0.2, 0.8) * width, rng.uniform(0.3, 0.7) * height, rng.uniform(0.05, 0.15) * width
        image += (np.exp(-((xx - gx) ** 2 + (yy - gy) ** 2) / (2 * radius**2)) * rng.uniform(60, 140))[..., None]
    image = cv2.GaussianBlur(image, (0, 0), float(rng.uniform(0.3, 1.0)))
    image += rng.normal(0, rng.uniform(1, 5), image.shape)
    frame = np.clip(image, 0, 255).astype(np.uint8)
    cards_out = [Card(code, cv2.perspectiveTransform(poly[None], camera)[0]) for code, poly in placed]
    return frame, cards_out


def owners(reads: list[CardRead], placed: list[Card]) -> list[set[int | None]]:
    """For each read, the cards of `placed` it belongs to: for each of its index squares (or its box), the uppermost
    card where the square's centre lies (`studio_scene` lays each card over the ones before it), None where no card
    is. A read of a card's index printed over a card beneath is that upper card's, not a wrong read of the one
    beneath; and not where the centre of its box lies: a card read by both corners, half covered by the next card,
    has its box centre under that card."""
    centres = [[(x + w / 2, y + h / 2) for x, y, w, h in read.indices or (read.box,)] for read in reads]
    return [{uppermost_at(placed, centre) for centre in mine} for mine in centres]


def uppermost_at(placed: list[Card], point: tuple[float, float]) -> int | None:
    """The number of the uppermost card of `placed` at `point` (`studio_scene` lays each card over the ones before
    it), None where no card is."""
    at = (float(point[0]), float(point[1]))
    return max((k for k, card in enumerate(placed) if cv2.pointPolygonTest(card.polygon, at, False) >= 0), default=None)


def roboflow_truth(image_path: Path, size: tuple[int, int] = (1280, 720)) -> list[tuple[str, float, float, float]]:
    """(code, centre x, centre y, side) of every labelled card index, in pixels of the image resized to `size`."""
    out = []
    for name, values in label_names(image_path):
        x, y, w, h = values[:4]
        if name in {"BACK", "BLACK JOKER", "RED JOKER"}:
            continue
        out.append((name, x * size[0], y * size[1], max(w * size[0], h * size[1])))
    return out
