"""Synthetic studio scenes composed from real card images whose index squares are known exactly (training only).

A scene is a table top of a random cloth (felt of any colour, now and then a pale one) on which pieces of real
photos are laid, each scaled so that its indices are the size a studio camera sees (an index square of 18 to 70
pixels in a 1280 x 720 frame), turned any way and overlapping the ones before (an index a later piece covers is no
longer labelled); the table is then seen by a camera up to 50 degrees off vertical (foreshortened, the far side
narrower), with glare, blur, noise and a light level. The pieces are:

- the TRAIN roboflow photos (`split.csv`), cut to the region around their labelled indices (index squares from
  the labels);
- the cards of the TRAIN webcam-9-to-ace photos, cut out by their labelled card boxes; that deck prints its index
  at a fixed place of the card (`CARD_INDEX`: the centre at 11% of the width and 16% of the height from the top-left
  corner, the same from the bottom-right), so the index squares follow from the card box.

The scene's index squares go through the same transforms as the pixels, so the labels are exact; the crops are
then cut from what `squares.squares` finds in the scene, as the reader will see them at run time. Everything draws
from the generator it is given: one seed, one data set.
"""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np
import numpy.typing as npt

from drivers.camera.indices import Proposal
from drivers.camera.squares import READER_RULES, SquareRules
from drivers.camera.training.dataset import CODES, SIZE, label_image, labels, load

U8 = npt.NDArray[np.uint8]
CARD_INDEX = ((0.11, 0.16), (0.89, 0.84))  # webcam-9-to-ace: index centres as fractions of the card box
CARD_INDEX_SIDE = 1.3 * 0.19  # the index square's side as a fraction of the card box's height
# An index is judged in a calibration scene only when this share of its square lies clear of later pieces: a later
# piece's edge across half of it leaves a sliver beside the later card's own index, often an unlabelled corner
# (docs/camera.md, "Partly covered indices set aside in the calibration scenes").
SHOWN = 0.8
SIDES = (24.0, 72.0)  # index square sides in a 1280 x 720 scene (log-uniform)


@dataclass(frozen=True)
class Piece:
    """A piece of a real photo and its labelled indices: (class, x, y, side) in the piece's pixels."""

    image: U8
    truths: tuple[tuple[int, float, float, float], ...]


def roboflow_pieces(paths: list[Path]) -> list[Piece]:
    """Each photo cut to its labelled indices and a margin of two index sizes around them."""
    pieces = []
    for path in paths:
        image = load(path)
        height, width = image.shape[:2]
        truths = labels(path, width, height)
        if not truths:
            continue
        margin = 2 * max(t.side for _, t in truths)
        x0 = int(max(0, min(t.x for _, t in truths) - margin))
        y0 = int(max(0, min(t.y for _, t in truths) - margin))
        x1 = int(min(width, max(t.x for _, t in truths) + margin))
        y1 = int(min(height, max(t.y for _, t in truths) + margin))
        pieces.append(Piece(image[y0:y1, x0:x1].copy(), tuple((c, t.x - x0, t.y - y0, t.side) for c, t in truths)))
    return pieces


def card_pieces(data: Path, images: set[Path]) -> list[Piece]:
    """The cards of the given webcam-9-to-ace photos, cut out by their labelled boxes (`labels_rank_suit.csv`)."""
    pieces = []
    with (data / "labels_rank_suit.csv").open(newline="") as handle:
        for row in csv.DictReader(handle):
            path = data / row["image"]
            if path not in images or row["code"] not in CODES:
                continue
            image = cv2.imread(str(path), cv2.IMREAD_COLOR)
            if image is None:
                continue
            x0, y0, x1, y1 = (int(row[key]) for key in ("xmin", "ymin", "xmax", "ymax"))
            card = np.asarray(image[y0:y1, x0:x1], dtype=np.uint8).copy()
            h, w = card.shape[:2]
            label = CODES.index(row["code"])
            side = CARD_INDEX_SIDE * h
            pieces.append(Piece(card, tuple((label, u * w, v * h, side) for u, v in CARD_INDEX)))
    return pieces


def cloth(size: tuple[int, int], rng: np.random.Generator) -> U8:
    """A table top: felt of a random colour (now and then pale: white, light wood), with a fine grain."""
    width, height = size
    if rng.random() < 0.12:
        colour = rng.uniform(150, 240) * np.array([rng.uniform(0.75, 1.0), rng.uniform(0.85, 1.0), 1.0])
    else:
        hsv = np.array([[[rng.uniform(0, 180), rng.uniform(60, 230), rng.uniform(35, 170)]]], dtype=np.uint8)
        colour = np.asarray(cv2.cvtColor(hsv, cv2.COLOR_HSV2BGR), dtype=np.float64)[0, 0]
    grain = cv2.GaussianBlur(rng.normal(0, rng.uniform(4, 14), (height, width)).astype(np.float32), (0, 0), 1.5)
    return np.clip(colour[None, None, :] + grain[..., None], 0, 255).astype(np.uint8)


def scene(pieces: list[Piece], rng: np.random.Generator,
          size: tuple[int, int] = (1280, 720)) -> tuple[U8, list[tuple[int, Proposal]]]:  # fmt: skip
    """One scene of `size` and its index squares (class, square) in frame pixels."""
    frame, truths, _ = scene_with_hidden(pieces, rng, size)
    return frame, truths


def scene_with_hidden(pieces: list[Piece], rng: np.random.Generator, size: tuple[int, int] = (1280, 720),
                      shown: float = 0.0) -> tuple[U8, list[tuple[int, Proposal]], list[Proposal]]:  # fmt: skip
    """`scene`, and the squares of the indices it leaves unlabelled though part of them may show: centre covered by
    a later piece, less than `shown` of its square clear of later pieces (calibration: `SHOWN`; training's scenes:
    0, the centre alone decides), or closer to the frame's edge than half a side. A read of such an index is neither
    right nor wrong (`calibrate.scene_leads`). The same draws as `scene`: the same scene for the same generator."""
    width, height = size
    tilt = math.radians(float(rng.uniform(0, 50)))
    table_height = int(height / math.cos(tilt))
    table = cloth((width, table_height), rng)
    owner = np.full((table_height, width), -1, dtype=np.int32)  # which piece each table pixel shows
    placed: list[tuple[int, int, float, float, float]] = []  # (piece number, class, x, y, side) on the table
    unit = width / 1280
    for number in range(int(rng.integers(3, 9))):
        piece = pieces[int(rng.integers(len(pieces)))]
        median = float(np.median([t[3] for t in piece.truths]))
        target = math.exp(rng.uniform(math.log(SIDES[0]), math.log(SIDES[1]))) * unit
        scale = target / median
        ph, pw = piece.image.shape[:2]
        if max(pw, ph) * scale > 0.9 * width:  # a large photo shown whole would not fit: fewer, larger indices
            scale = 0.9 * width / max(pw, ph)
        aspect = float(rng.uniform(0.9, 1.1))
        centre = (float(rng.uniform(0.1, 0.9) * width), float(rng.uniform(0.1, 0.9) * table_height))
        matrix = cv2.getRotationMatrix2D((pw / 2, ph / 2), float(rng.uniform(0, 360)), scale)
        matrix[:, :2] = matrix[:, :2] @ np.diag([aspect, 1 / aspect])
        matrix[:, 2] = np.array(centre) - matrix[:, :2] @ np.array([pw / 2, ph / 2])
        warped = cv2.warpAffine(piece.image, matrix, (width, table_height), flags=cv2.INTER_AREA)
        mask = cv2.warpAffine(np.full((ph, pw), 255, np.uint8), matrix, (width, table_height)) > 127
        table[mask] = warped[mask]
        owner[mask] = number
        for label, x, y, side in piece.truths:
            tx, ty = matrix @ np.array([x, y, 1.0])
            placed.append((number, label, float(tx), float(ty), side * scale))
    keystone = 1 - 0.35 * math.sin(tilt)
    source = np.array([[0, 0], [width, 0], [width, table_height], [0, table_height]], dtype=np.float32)
    target_corners = np.array([[width * (1 - keystone) / 2, 0], [width * (1 + keystone) / 2, 0], [width, height],
                               [0, height]], dtype=np.float32)  # fmt: skip
    camera = cv2.getPerspectiveTransform(source, target_corners)
    frame = np.asarray(cv2.warpPerspective(table, camera, (width, height), flags=cv2.INTER_AREA,
                                           borderMode=cv2.BORDER_REFLECT), dtype=np.uint8)  # fmt: skip
    truths: list[tuple[int, Proposal]] = []
    hidden: list[Proposal] = []
    for number, label, x, y, side in placed:
        ix, iy = round(x), round(y)
        if not (0 <= ix < width and 0 <= iy < table_height):
            continue  # off the table
        points = np.array([[[x, y], [x + side, y], [x, y + side]]], dtype=np.float32)
        (cx, cy), (ax, ay), (bx, by) = cv2.perspectiveTransform(points, camera)[0]
        local = math.sqrt(abs((ax - cx) * (by - cy) - (ay - cy) * (bx - cx)))  # the side, foreshortened on average
        square = Proposal(float(cx), float(cy), float(local))
        margin = 0.5 * local
        visible = owner[iy, ix] == number and (not shown or share_shown(owner, number, x, y, side) >= shown)
        if visible and margin <= cx < width - margin and margin <= cy < height - margin:
            truths.append((label, square))
        elif -margin <= cx < width + margin and -margin <= cy < height + margin:
            hidden.append(square)  # covered by a later piece, or cut by the frame's edge
    return _degrade(frame, rng), truths, hidden


def share_shown(owner: npt.NDArray[np.int32], number: int, x: float, y: float, side: float) -> float:
    """The share of the index square at (x, y) on the table that no piece laid after piece `number` covers (the
    table, or an earlier piece, where the square reaches past its own piece's edge, covers nothing)."""
    half = side / 2
    rows = slice(max(0, round(y - half)), max(0, round(y + half)))
    columns = slice(max(0, round(x - half)), max(0, round(x + half)))
    return 1.0 - float((owner[rows, columns] > number).sum()) / max(round(side) ** 2, 1)


def build_scenes(pieces: list[Piece], seed: int, scenes: int, views: int, negatives: int, crop_size: int = SIZE,
                 rules: SquareRules = READER_RULES) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.int64]]:  # fmt: skip
    """Crops and classes from `scenes` composed scenes (a quarter of them 1920 x 1080), labelled as the photos are
    (`dataset.label_image`): `views` views of each index the proposals frame, `negatives` far proposals."""
    rng = np.random.default_rng(seed)
    crops: list[U8] = []
    classes: list[int] = []
    for _ in range(scenes):
        size = (1920, 1080) if rng.random() < 0.25 else (1280, 720)
        frame, truths = scene(pieces, rng, size)
        label_image(frame, truths, views, negatives, rng, crops, classes, crop_size, rules)
    return np.stack(crops), np.array(classes, dtype=np.int64)


def _degrade(frame: U8, rng: np.random.Generator) -> U8:
    height, width = frame.shape[:2]
    image = frame.astype(np.float32) * float(rng.uniform(0.7, 1.15)) + float(rng.uniform(-15, 15))
    if rng.random() < 0.5:  # glare: a bright soft spot
        yy, xx = np.mgrid[0:height, 0:width].astype(np.float32)
        gx, gy = rng.uniform(0.1, 0.9) * width, rng.uniform(0.1, 0.9) * height
        radius = rng.uniform(0.04, 0.2) * width
        spot = np.exp(-((xx - gx) ** 2 + (yy - gy) ** 2) / (2 * radius**2)) * rng.uniform(50, 160)
        image += spot[..., None]
    image = np.asarray(cv2.GaussianBlur(image, (0, 0), float(rng.uniform(0.3, 1.3))), dtype=np.float32)
    image += rng.normal(0, rng.uniform(1, 6), image.shape).astype(np.float32)
    return np.asarray(np.clip(image, 0, 255), dtype=np.uint8)
