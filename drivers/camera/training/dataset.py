"""The training crops: real index crops from the TRAIN split (augmented into studio-like views) and hard negatives.

For every training photo (`split.csv`, set `train`; `validation` is built the same way with fewer views, for the
temperature and the figures):

- the proposals (`indices.py`), labelled against the boxes: those framing a labelled index are positives, those
  far from any are negatives (pips, court figures, the cloth, a neighbour's half index). Each positive is cropped
  several times as the reader would (turned by the proposal's angle), then turned a little or half a turn,
  foreshortened as by a camera up to 50 degrees off vertical, shifted and scaled a little, and degraded: lower
  resolution, blur, noise, light level and colour cast, glare;
- random squares of the photo as further negatives.

Webcam frames are un-stretched to 1280 x 720 (they were 16:9 before the export stretched them to 640 x 640); phone
photos are kept at 640 x 640 (their original orientation is not recorded; the views' foreshortening covers it).
Everything draws from one seeded generator: the same seed gives the same data set.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

from drivers.camera.indices import Proposal, crop_matrix
from drivers.camera.squares import READER_RULES, SquareRules, squares

SIZE = 32  # the reader's input, pixels a side (`train.py --size`; `index_net.json` says which the network takes)
RANKS = ("2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A")
CODES = tuple(rank + suit for rank in RANKS for suit in "CDHS")
NONE = len(CODES)  # class index of "not an index"
CLASSES = (*CODES, "none")


# Labels of the roboflow set that are wrong, by (photo, line number from 1): the right card, seen in the photo. They
# are corrected wherever the labels are read (training, calibration, the benchmark), so that a right read is not
# counted as a wrong one. Only photos looked at are listed; the rest are taken as labelled.
ERRATA = {
    # the three of spades on the left of the middle row, both corners labelled 4S (docs/camera.md, "Data")
    ("WIN_20240627_11_38_29_Pro", 5): "3S",
    ("WIN_20240627_11_38_29_Pro", 6): "3S",
}


def label_names(path: Path) -> list[tuple[str, list[float]]]:
    """(card or class name, values) of each labelled box of a roboflow photo, `ERRATA` corrected."""
    names = (path.parents[1] / "classes.txt").read_text().split("\n")
    result = []
    for number, line in enumerate((path.parents[1] / "labels" / f"{path.stem}.txt").read_text().splitlines(), 1):
        parts = line.split()
        if parts:
            name = ERRATA.get((path.stem, number), names[int(parts[0])].strip())
            result.append((name, [float(v) for v in parts[1:]]))
    return result


def labels(path: Path, width: int, height: int) -> list[tuple[int, Proposal]]:
    """The labelled index boxes of a roboflow photo as (class, square proposal) in pixels of the un-stretched image;
    labels that are not a card (BACK, jokers) are dropped."""
    result = []
    for name, values in label_names(path):
        if name not in CODES:
            continue
        if len(values) > 4:  # a polygon: its bounding box
            xs, ys = values[0::2], values[1::2]
            x, y, w, h = (min(xs) + max(xs)) / 2, (min(ys) + max(ys)) / 2, max(xs) - min(xs), max(ys) - min(ys)
        else:
            x, y, w, h = values
        result.append((CODES.index(name), Proposal(x * width, y * height, 1.3 * max(w * width, h * height))))
    return result


def load(path: Path) -> npt.NDArray[np.uint8]:
    image = cv2.imread(str(path), cv2.IMREAD_COLOR)
    if image is None:
        raise ValueError(f"{path}: not an image")
    size = (1280, 720) if path.name.startswith("WIN_") else (640, 640)
    return np.asarray(cv2.resize(image, size, interpolation=cv2.INTER_CUBIC), dtype=np.uint8)


def degrade(crop: npt.NDArray[np.uint8], rng: np.random.Generator) -> npt.NDArray[np.uint8]:
    """Studio-like degradations of a crop: resolution, blur, light, colour cast, glare, noise."""
    size = crop.shape[0]
    image: npt.NDArray[Any] = crop.astype(np.float32)
    if rng.random() < 0.6:  # seen at lower resolution (a crop 14 pixels across or more)
        low = int(rng.integers(14, size))
        image = cv2.resize(cv2.resize(image, (low, low), interpolation=cv2.INTER_AREA), (size, size),
                           interpolation=cv2.INTER_LINEAR)  # fmt: skip
    if rng.random() < 0.4:
        image = cv2.GaussianBlur(image, (0, 0), float(rng.uniform(0.3, 1.2)))
    gain = rng.uniform(0.55, 1.25) * rng.uniform(0.9, 1.1, size=3)
    image = image * gain + rng.uniform(-25, 25)
    if rng.random() < 0.25:  # glare: a bright soft spot
        yy, xx = np.mgrid[0:size, 0:size].astype(np.float32)
        cx, cy = (float(value) for value in rng.uniform(0, size, 2))
        radius = float(rng.uniform(6, 24)) * size / 32
        spot = np.exp(-((xx - cx) ** 2 + (yy - cy) ** 2) / (2 * radius**2)) * rng.uniform(40, 170)
        image = image + spot[..., None]
    image = image + rng.normal(0, rng.uniform(0, 8), image.shape)
    return np.clip(image, 0, 255).astype(np.uint8)


def view(image: npt.NDArray[np.uint8], square: Proposal, rng: np.random.Generator | None,
         size: int = SIZE) -> npt.NDArray[np.uint8]:  # fmt: skip
    """The `size` x `size` crop of a square, as the reader sees it; with `rng`, turned a little or half a turn (a
    proposal's angle is the index's vertical, either way up), foreshortened, shifted and degraded."""
    if rng is None:
        matrix = crop_matrix(square, size)
    else:
        side = square.side * float(rng.uniform(0.88, 1.15))
        tilt = float(rng.uniform(0.64, 1.0))  # cos(50 degrees): foreshortening of a camera 50 degrees off vertical
        stretch = (tilt, 1.0) if rng.random() < 0.5 else (1.0, tilt)
        turn = float(rng.uniform(-12, 12)) + (180.0 if rng.random() < 0.5 else 0.0)
        matrix = crop_matrix(Proposal(square.x, square.y, side, square.angle), size, turn, stretch,
                             (float(rng.uniform(-0.06, 0.06)), float(rng.uniform(-0.06, 0.06))))  # fmt: skip
    crop = cv2.warpAffine(image, matrix, (size, size), flags=cv2.INTER_AREA, borderMode=cv2.BORDER_REPLICATE)
    as_u8 = np.asarray(crop, dtype=np.uint8)
    return degrade(as_u8, rng) if rng is not None else as_u8


def matches(square: Proposal, truth: Proposal) -> bool:
    """A proposal frames a labelled index: centred on it and about its size."""
    ratio = square.side / truth.side  # a slanted index's labelled box is wider than its own square
    return bool(np.hypot(square.x - truth.x, square.y - truth.y) <= 0.2 * truth.side and 0.55 < ratio < 1.45)


def far(square: Proposal, truths: list[tuple[int, Proposal]]) -> bool:
    return all(np.hypot(square.x - t.x, square.y - t.y) > 0.45 * max(t.side, square.side) for _, t in truths)


def build(
    paths: list[Path], seed: int, views: int, negatives: int, size: int = SIZE, rules: SquareRules = READER_RULES
) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.int64]]:
    """Crops (N x size x size x 3, BGR) and class indices. `views`: augmented views per labelled index in a webcam
    frame (phone close-ups get half as many); `negatives`: proposals far from any index kept per photo; `rules`:
    how the squares are found (`squares.SquareRules`)."""
    rng = np.random.default_rng(seed)
    crops: list[npt.NDArray[np.uint8]] = []
    classes: list[int] = []
    for path in paths:
        image = load(path)
        height, width = image.shape[:2]
        truths = labels(path, width, height)
        count = views if path.name.startswith("WIN_") else max(1, views // 2)
        label_image(image, truths, count, negatives, rng, crops, classes, size, rules)
    return np.stack(crops), np.array(classes, dtype=np.int64)


def label_image(image: npt.NDArray[np.uint8], truths: list[tuple[int, Proposal]], count: int, negatives: int,
           rng: np.random.Generator, crops: list[npt.NDArray[np.uint8]], classes: list[int],
           size: int = SIZE, rules: SquareRules = READER_RULES) -> None:  # fmt: skip
    """The proposals of one image labelled against its index squares: `count` views of each positive, up to
    `negatives` proposals far from any index and a quarter as many random squares."""
    height, width = image.shape[:2]
    far_ones = []
    # the squares the reader reads: glyph pairs and card outlines' corners
    for square, _ in squares(image, rules=rules):
        hit = next((label for label, truth in truths if matches(square, truth)), None)
        if hit is not None:
            for _ in range(count):
                crops.append(view(image, square, rng, size))
                classes.append(hit)
        elif far(square, truths):
            far_ones.append(square)
    for index in rng.permutation(len(far_ones))[:negatives]:
        crops.append(view(image, far_ones[int(index)], rng, size))
        classes.append(NONE)
    for _ in range(negatives // 4):
        side = float(rng.uniform(20, 120))
        square = Proposal(float(rng.uniform(0, width)), float(rng.uniform(0, height)), side,
                          float(rng.uniform(0, 360)))  # fmt: skip
        if far(square, truths):
            crops.append(view(image, square, rng, size))
            classes.append(NONE)
