"""Enrollment: learning a deck's rank and suit templates from photographs of its cards.

Two ways in. A folder of photos, one card each, named by the card's code (`QH.jpg`, `10S.png`; `QH_2.jpg` for a
second photo of the same card). Or labelled boxes in larger photos (a CSV of `image, code, xmin, ymin, xmax, ymax`,
as the real photographs in `shared/data/cards` come). Either way the card is found and rectified as the recognizer
would find it, and the glyphs of both index corners become samples of its rank and suit. A photo whose card cannot be
found or whose index cannot be isolated is skipped, with the reason, never guessed from.

Samples that would be misread against the others (a corner hidden under glare, a stray glyph taken for the rank) are
dropped: each sample must match its own rank (suit) better than any other, using the remaining samples.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numpy as np
import numpy.typing as npt

from drivers.camera.detect import CARD_ASPECT, Box, Detection, DetectorConfig, find_cards, order_corners, warp
from drivers.camera.errors import EnrollmentError, ImageError
from drivers.camera.glyphs import CORNER, Canvas, IndexGlyphs, Layout, as_vector, box_fraction, extract_index
from drivers.camera.image_io import IMAGE_SUFFIXES, Image, load_image, u8
from drivers.camera.templates import Templates
from studio.domain.cards import Card
from studio.domain.errors import InvalidCardCode

SHRINK = (0.7, 0.5, 0.35)  # each photo is also enrolled shrunk by these factors...
SMALLEST_CARD = 90  # ...while the card stays at least this many pixels wide
DEFOCUS = 1.2  # the blur (sigma, pixels) of the out-of-focus copies
DUPLICATE = 0.99  # a sample correlating this well with one already kept adds nothing
_NAME = re.compile(r"^(?P<code>[^_\-\s.]+)(?:[_\-\s].*)?$")


@dataclass(slots=True)
class Enrollment:
    """The cards gathered so far (their two index corners, rectified), and what was skipped and why."""

    corners: list[tuple[Card, list[Image]]] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    dropped: int = 0  # samples left out as inconsistent with the others, at the last `templates()`

    @property
    def cards(self) -> int:
        return len(self.corners)

    def add_card(self, name: str, image: Image, detection: Detection, card: Card) -> None:
        """Add the card's two index corners, as photographed and as a camera further away would see them (the
        photo shrunk until the card is `SMALLEST_CARD` pixels wide, sharp and out of focus): a template learns the blur
        of a small card."""
        patches = []
        width = min(detection.box[2], detection.box[3] / CARD_ASPECT)
        for scale in (1.0, *SHRINK):
            if scale < 1.0 and width * scale < SMALLEST_CARD:
                break
            shrunk = (
                image if scale == 1.0 else u8(cv2.resize(image, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA))
            )
            patches += [warp(shrunk, quad * scale, CORNER) for quad in detection.orientations()[:2]]
            if scale < 1.0:  # and a little out of focus, as a camera often is
                soft = u8(cv2.GaussianBlur(shrunk, (0, 0), DEFOCUS))
                patches += [warp(soft, quad * scale, CORNER) for quad in detection.orientations()[:2]]
        if not any(_complete(extract_index(patch)) for patch in patches[:2]):
            self.skipped.append((name, "no rank and suit found in either corner of the card"))
            return
        self.corners.append((card, patches))

    def templates(self, description: str = "") -> Templates:
        """Templates from the cards gathered. First from the glyphs isolated by shape; from those, where this deck
        prints its index; then again, each corner read the way (by shape or by place) that matches its known card
        best, so that templates and recognition isolate glyphs alike."""
        if not self.corners:
            reasons = "; ".join(f"{name}: {reason}" for name, reason in self.skipped[:3])
            raise EnrollmentError(f"no card could be enrolled{': ' + reasons if reasons else ''}")
        first: list[tuple[Card, IndexGlyphs, tuple[int, ...]]] = []
        for card, patches in self.corners:
            for patch in patches:
                first += [(card, g, patch.shape) for g in extract_index(patch) if _complete([g])]
        draft = self._build([(card, glyphs) for card, glyphs, _ in first], None, description)
        layout = _median_layout([(g, shape) for _, g, shape in first])
        second: list[tuple[Card, IndexGlyphs]] = []
        for card, patches in self.corners:
            for patch in patches:
                readings = [g for g in extract_index(patch, layout) if _complete([g])]
                if readings:
                    second.append((card, max(readings, key=lambda g: _fit(draft, card, g))))
        return self._build(second, layout, description)

    def _build(self, samples: list[tuple[Card, IndexGlyphs]], layout: Layout | None, description: str) -> Templates:
        ranks = [(card.rank.code, g.rank) for card, g in samples if g.rank is not None]
        suits = [(card.suit.code, g.suit, g.redness) for card, g in samples if g.suit is not None]
        kept_ranks = _distinct(_consistent(ranks))
        kept_suit_ids = {id(glyph) for _, glyph in _distinct(_consistent([(suit, glyph) for suit, glyph, _ in suits]))}
        kept_suits = [sample for sample in suits if id(sample[1]) in kept_suit_ids]
        self.dropped = len(ranks) - len(kept_ranks) + len(suits) - len(kept_suits)  # inconsistent or duplicate
        return Templates.from_samples(kept_ranks, kept_suits, layout, description)


def _complete(readings: list[IndexGlyphs]) -> bool:
    return any(g.rank is not None and g.suit is not None for g in readings)


def _fit(templates: Templates, card: Card, glyphs: IndexGlyphs) -> float:
    """How well a reading matches its known card: best rank score plus best suit score."""
    assert glyphs.rank is not None and glyphs.suit is not None
    total = 0.0
    for labels, vectors, code, canvas in (
        (templates.rank_labels, templates.rank_vectors, card.rank.code, glyphs.rank),
        (templates.suit_labels, templates.suit_vectors, card.suit.code, glyphs.suit),
    ):
        rows = [index for index, label in enumerate(labels) if label == code]
        total += float((vectors[rows] @ as_vector(canvas)).max()) if rows else 0.0
    return total


def _median_layout(samples: list[tuple[IndexGlyphs, tuple[int, ...]]]) -> Layout | None:
    ranks = [box_fraction(g.rank_box, shape) for g, shape in samples if g.rank_box is not None]
    suits = [box_fraction(g.suit_box, shape) for g, shape in samples if g.suit_box is not None]
    if not ranks or not suits:
        return None
    rank = tuple(float(v) for v in np.median(np.array(ranks), axis=0))
    suit = tuple(float(v) for v in np.median(np.array(suits), axis=0))
    return Layout((rank[0], rank[1], rank[2], rank[3]), (suit[0], suit[1], suit[2], suit[3]))


def enroll_folder(folder: Path | str, detector: DetectorConfig | None = None) -> Enrollment:
    """Samples from a folder of photos, one card each, named by its code."""
    root = Path(folder)
    if not root.is_dir():
        raise EnrollmentError(f"{root}: not a folder of card photos")
    enrollment = Enrollment()
    files = sorted(path for path in root.iterdir() if path.suffix.lower() in IMAGE_SUFFIXES and path.is_file())
    if not files:
        raise EnrollmentError(f"{root}: no photos ({', '.join(sorted(IMAGE_SUFFIXES))}) in this folder")
    for path in files:
        match = _NAME.match(path.stem)
        try:
            card = Card.parse(match.group("code") if match else path.stem)
        except InvalidCardCode:
            enrollment.skipped.append((path.name, "the file name is not a card code such as QH or 10S"))
            continue
        try:
            image = load_image(path)
        except ImageError as error:
            enrollment.skipped.append((path.name, str(error)))
            continue
        detection = _single_card(image, detector)
        if detection is None:
            enrollment.skipped.append((path.name, "no card found in the photo"))
            continue
        enrollment.add_card(path.name, image, detection, card)
    return enrollment


@dataclass(frozen=True, slots=True)
class LabelledBox:
    image: Path
    card: Card
    box: Box


def read_labels(csv_path: Path | str, root: Path | str | None = None) -> list[LabelledBox]:
    """Boxes from a CSV with columns `image, code, xmin, ymin, xmax, ymax` (others ignored); image paths are
    relative to `root` (default: the CSV's folder)."""
    path = Path(csv_path)
    base = Path(root) if root is not None else path.parent
    try:
        with path.open(newline="", encoding="utf-8") as handle:
            rows = list(csv.DictReader(handle))
    except FileNotFoundError:
        raise EnrollmentError(f"{path}: no such labels file") from None
    except (OSError, UnicodeDecodeError, csv.Error) as error:
        raise EnrollmentError(f"{path}: cannot read the labels ({error})") from None
    boxes = []
    for number, row in enumerate(rows, start=2):
        try:
            x0, y0, x1, y1 = (int(float(row[key])) for key in ("xmin", "ymin", "xmax", "ymax"))
            boxes.append(LabelledBox(base / row["image"], Card.parse(row["code"]), (x0, y0, x1 - x0, y1 - y0)))
        except (KeyError, TypeError, ValueError) as error:
            raise EnrollmentError(
                f"{path}, line {number}: not an image,code,xmin,ymin,xmax,ymax row ({error})"
            ) from None
    return boxes


def enroll_boxes(boxes: Iterable[LabelledBox], detector: DetectorConfig | None = None) -> Enrollment:
    """Samples from labelled boxes: in each box, the card found there."""
    enrollment = Enrollment()
    by_image: dict[Path, list[LabelledBox]] = {}
    for box in boxes:
        by_image.setdefault(box.image, []).append(box)
    for image_path, labelled in by_image.items():
        try:
            image = load_image(image_path)
        except ImageError as error:
            enrollment.skipped.extend((str(image_path), str(error)) for _ in labelled)
            continue
        detections = find_cards(image, config=detector)
        for item in labelled:
            detection = _best_overlap(detections, item.box)
            if detection is None:
                enrollment.skipped.append((f"{image_path.name} {item.card.code}", "no card found in the box"))
                continue
            enrollment.add_card(f"{image_path.name} {item.card.code}", image, detection, item.card)
    return enrollment


def _single_card(image: Image, detector: DetectorConfig | None) -> Detection | None:
    """The card of a one-card photo: the largest card found, or the whole photo if it is a tight crop of a card."""
    detections = find_cards(image, config=detector)
    if detections:
        return max(detections, key=lambda d: d.box[2] * d.box[3])
    height, width = image.shape[:2]
    aspect = max(height, width) / max(1, min(height, width))
    if abs(aspect - CARD_ASPECT) < 0.25:
        corners = np.array([[0, 0], [width - 1, 0], [width - 1, height - 1], [0, height - 1]], dtype=np.float32)
        return Detection(order_corners(corners))
    return None


def _best_overlap(detections: Sequence[Detection], box: Box) -> Detection | None:
    best, best_iou = None, 0.5
    for detection in detections:
        iou = box_iou(detection.box, box)
        if iou > best_iou:
            best, best_iou = detection, iou
    return best


def box_iou(a: Box, b: Box) -> float:
    ix = min(a[0] + a[2], b[0] + b[2]) - max(a[0], b[0])
    iy = min(a[1] + a[3], b[1] + b[3]) - max(a[1], b[1])
    inter = max(0, ix) * max(0, iy)
    union = a[2] * a[3] + b[2] * b[3] - inter
    return inter / union if union > 0 else 0.0


def _consistent(samples: Sequence[tuple[str, Canvas]]) -> list[tuple[str, Canvas]]:
    """The samples that the others (leave one out) would label correctly. A label with a single sample keeps it."""
    if len(samples) < 3:
        return list(samples)
    labels = np.array([label for label, _ in samples])
    vectors = np.stack([as_vector(glyph) for _, glyph in samples])
    scores = vectors @ vectors.T
    np.fill_diagonal(scores, -2.0)
    kept = []
    for index, (label, glyph) in enumerate(samples):
        same = labels == label
        same[index] = False
        if not same.any():
            kept.append((label, glyph))
            continue
        if scores[index][same].max() >= scores[index][~(labels == label)].max(initial=-2.0):
            kept.append((label, glyph))
    return kept


def _distinct(samples: Sequence[tuple[str, Canvas]], alike: float = DUPLICATE) -> list[tuple[str, Canvas]]:
    """The samples less one of each pair of near-duplicates of the same label (correlation above `alike`): they
    add nothing to recognition but time."""
    kept: list[tuple[str, Canvas]] = []
    vectors: dict[str, list[npt.NDArray[np.float32]]] = {}
    for label, glyph in samples:
        vector = as_vector(glyph)
        same = vectors.setdefault(label, [])
        if same and float(np.max(np.stack(same) @ vector)) > alike:
            continue
        same.append(vector)
        kept.append((label, glyph))
    return kept
