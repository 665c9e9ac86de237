"""Reading a card's rank and suit from its corner index, against a deck's templates.

For each card found, the index is read in both corners that can hold it (the card may lie either way up), and the
read with the higher confidence is kept. A glyph's score for a rank is its best correlation with that rank's enrolled
samples. Confidence rises with the best score and with its lead over the best other rank (or suit): a glyph that
looks equally like a Q and a K is not a confident Q, however good the match. The suit's colour, when clear, rules
out the suits of the other colour. A card whose suit cannot be told is reported with `?` for the suit, the rank's
confidence as `rank_confidence` and 0 as the code's `confidence` (a rank alone is never a sure card: until
2026-12-05 the code carried the rank's confidence, and `studio camera recognize` listed such a read among the
cards); an outline with no readable rank at all is not a card and is not reported.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from drivers.camera.detect import Box, Detection, DetectorConfig, Quad, Zone, find_cards, warp
from drivers.camera.glyphs import CORNER, IndexGlyphs, as_vector
from drivers.camera.glyphs import readings as index_readings
from drivers.camera.image_io import Image, check_frame
from drivers.camera.memory import keep_frame_buffers
from drivers.camera.templates import Templates
from studio.domain.cards import Card, parse_card

# Score and lead that earn full confidence, and the score below which nothing is claimed (calibrated on the
# real photographs and the synthetic frames: see docs/camera.md).
FULL_SCORE, NO_SCORE = 0.8, 0.5
FULL_SEPARATION = 2.5
# Between the two best labels: the Fisher discriminant in the first DISCRIMINANT_DIMENSIONS main components of the
# samples, regularised by DISCRIMINANT_RIDGE; a glyph FULL_DISCRIMINANT spreads from the midpoint is told apart surely.
DISCRIMINANT_DIMENSIONS = 48
DISCRIMINANT_RIDGE = 0.05
FULL_DISCRIMINANT = 2.0
FULL_PAIR_SEPARATION = 1.6  # ... and with both, a lead in correlation this large (see `confidence`) is enough
# Blur of the print (sigma in pixels of the card rectified to 200 px wide) up to which reads are trusted, and at
# which no read is: the real webcam photos measure 0.9..2.4 (99% below 2.4); on synthetic cards confident errors
# (clubs read as spades) begin at 3.0.
BLUR_OK, BLUR_LIMIT = 2.4, 3.0
SURE = 0.95  # two readings this confident and alike end the search for a better one...
CLEAR_SCORE = 0.95  # ...and so does one, if its glyphs also correlate this well with their templates
DOUBT = 0.3  # ...unless another reading says otherwise with at least this confidence
MIN_RANK_SCORE = 0.35  # below this the outline's corner shows no rank glyph: not a card (or face down)
MIN_SUIT_SCORE = 0.35  # below this the suit is reported as `?`
# Redness of print (red minus the stronger other channel, relative to the card stock): black print measures
# -0.2..0.03 and red 0.1..0.4 on the real photographs; between RED_LEVEL -/+ COLOUR_MARGIN the colour is not trusted.
RED_LEVEL = 0.07
COLOUR_MARGIN = 0.03


@dataclass(frozen=True, slots=True)
class CardRead:
    rank: str
    suit: str | None  # None: the rank was read but not the suit
    confidence: float  # 0..1, of the whole code: the lower of the rank's and the suit's
    rank_confidence: float
    suit_confidence: float
    box: Box
    quad: Quad
    zone: str | None = None
    indices: tuple[Box, ...] = ()  # the corner indices read (the shipped reader); empty for template reads

    @property
    def code(self) -> str:
        return self.rank + (self.suit or "?")

    @property
    def card(self) -> Card | None:
        return parse_card(self.code) if self.suit is not None else None

    @property
    def index_side(self) -> int | None:
        """The side in pixels of its largest index square: how large the camera films this card's index, which bears
        on how far its confidence holds (docs/camera.md, "Designs no training used"); None for a template read."""
        return max(side for _, _, side, _ in self.indices) if self.indices else None


@dataclass(frozen=True, slots=True)
class _Match:
    label: str
    score: float
    confidence: float


class Recognizer:
    def __init__(self, templates: Templates, detector: DetectorConfig | None = None) -> None:
        self.templates = templates
        self.detector = detector or DetectorConfig()
        keep_frame_buffers()
        self._ranks = _Bank(templates.rank_vectors, templates.rank_labels)
        self._suits = _Bank(templates.suit_vectors, templates.suit_labels)
        # Which enrolled suits print red: normally hearts and diamonds, but a four-colour deck says otherwise.
        self._red_suits = {suit for suit, value in templates.suit_redness.items() if value > RED_LEVEL}

    def read_frame(self, frame: object, zones: Sequence[Zone] = ()) -> list[CardRead]:
        """Every card found in the frame (in the zones, if given) whose rank can be read."""
        image = check_frame(frame)
        reads = []
        for detection in find_cards(image, list(zones), self.detector):
            read = self.read_card(image, detection)
            if read is not None:
                reads.append(read)
        return reads

    def read_card(self, image: Image, detection: Detection) -> CardRead | None:
        """The card's code from the best of its readings (both index corners, each isolated by shape and by
        place): the rank with the highest confidence, then the most confident suit among readings of that rank."""
        readings: list[tuple[_Match, _Match | None, Quad]] = []
        for quad in detection.orientations():
            for glyphs in index_readings(warp(image, quad, CORNER), self.templates.layout):
                rank, suit = self.match(glyphs)
                if rank is None:
                    continue
                readings.append((rank, suit, quad))
                if _clear(rank, suit):
                    return _read(readings, detection)  # no other reading could do better
            if _beyond_doubt(readings):
                break  # the other corner need not be read
        return _read(readings, detection)

    def match(self, glyphs: IndexGlyphs) -> tuple[_Match | None, _Match | None]:
        """The best rank and suit for one reading of an index; None where nothing matches well enough."""
        if glyphs.rank is None:
            return None, None
        rank = self._ranks.match(as_vector(glyphs.rank))
        if rank is None or rank.score < MIN_RANK_SCORE:
            return None, None
        suit = None
        if glyphs.suit is not None:
            suit = self._suits.match(as_vector(glyphs.suit), self._allowed_suits(glyphs.redness))
        if suit is not None and suit.score < MIN_SUIT_SCORE:
            suit = None
        # Past the blur the deck was enrolled and tested at, glyphs blur into each other (a club into a spade)
        # and the scores cannot tell: the confidence falls to nothing at BLUR_LIMIT.
        sharp = min(1.0, max(0.0, (BLUR_LIMIT - glyphs.blur) / (BLUR_LIMIT - BLUR_OK)))
        if sharp < 1.0:
            rank = _Match(rank.label, rank.score, round(rank.confidence * sharp, 4))
            suit = _Match(suit.label, suit.score, round(suit.confidence * sharp, 4)) if suit else None
        return rank, suit

    def _allowed_suits(self, redness: float) -> set[str] | None:
        """The suits of the colour the print shows, when it shows one clearly; None: any suit."""
        if redness > RED_LEVEL + COLOUR_MARGIN:
            allowed = {suit for suit in self._suits.labels if suit in self._red_suits}
        elif redness < RED_LEVEL - COLOUR_MARGIN:
            allowed = {suit for suit in self._suits.labels if suit not in self._red_suits}
        else:
            return None
        return allowed or None


class _Bank:
    """Template vectors grouped by label. A glyph is scored against every sample at once (one product, one
    reduction per label); the two best labels are then told apart by their Fisher discriminant, learned from their
    samples in the space of the samples' main components: it weighs the few pixels where, say, a club differs from
    a spade, which a plain correlation drowns in the many where they agree."""

    def __init__(self, vectors: npt.NDArray[np.float32], labels: tuple[str, ...]) -> None:
        order = sorted(range(len(labels)), key=lambda index: labels[index])
        self.vectors = np.ascontiguousarray(vectors[order]) if order else vectors
        ordered = [labels[index] for index in order]
        self.labels = [label for index, label in enumerate(ordered) if index == 0 or ordered[index - 1] != label]
        self._starts = np.array([ordered.index(label) for label in self.labels], dtype=np.intp)
        self._pairs: dict[tuple[str, str], tuple[npt.NDArray[np.float32], float, float]] = {}
        self._mean = np.zeros(self.vectors.shape[1] if self.vectors.ndim == 2 else 0, dtype=np.float32)
        self._basis = np.zeros((len(self._mean), 0), dtype=np.float32)
        if len(ordered) > 2:
            self._learn_pairs(np.array(ordered))

    def _learn_pairs(self, labels: npt.NDArray[np.str_]) -> None:
        self._mean = self.vectors.mean(axis=0)
        _, _, components = np.linalg.svd(self.vectors - self._mean, full_matrices=False)
        self._basis = np.ascontiguousarray(components[:DISCRIMINANT_DIMENSIONS].T, dtype=np.float32)
        projected = (self.vectors - self._mean) @ self._basis
        groups = {label: projected[labels == label] for label in self.labels}
        for index, first in enumerate(self.labels):
            for second in self.labels[index + 1 :]:
                a, b = groups[first], groups[second]
                if len(a) < 2 or len(b) < 2:
                    continue
                scatter = np.cov(a.T) * (len(a) - 1) + np.cov(b.T) * (len(b) - 1)
                scatter = scatter / (len(a) + len(b) - 2)
                ridge = DISCRIMINANT_RIDGE * float(np.trace(scatter)) / len(scatter) + 1e-6
                weights = np.linalg.solve(scatter + ridge * np.eye(len(scatter)), a.mean(axis=0) - b.mean(axis=0))
                on_a, on_b = a @ weights, b @ weights
                middle = float(on_a.mean() + on_b.mean()) / 2
                spread = float(np.sqrt((((on_a - on_a.mean()) ** 2).sum() + ((on_b - on_b.mean()) ** 2).sum())
                                       / (len(a) + len(b) - 2)))  # fmt: skip
                spread = max(spread, 0.05 * abs(float(on_a.mean() - on_b.mean())), 1e-6)
                self._pairs[(first, second)] = (weights.astype(np.float32), middle, spread)

    def match(self, vector: npt.NDArray[np.float32], allowed: set[str] | None = None) -> _Match | None:
        if not self.labels:
            return None
        best = np.maximum.reduceat(self.vectors @ vector, self._starts)
        scored = [
            (float(score), label)
            for score, label in zip(best.tolist(), self.labels, strict=True)
            if allowed is None or label in allowed
        ]
        if not scored:
            return None
        scored.sort(reverse=True)
        if len(scored) == 1:
            return _Match(scored[0][1], scored[0][0], confidence(scored[0][0], NO_SCORE))
        (score, label), (other_score, other) = scored[0], scored[1]
        rest = scored[2][0] if len(scored) > 2 else NO_SCORE
        pair = self._pairs.get((label, other)) or self._pairs.get((other, label))
        if pair is None:
            return _Match(label, score, confidence(score, other_score))
        weights, middle, spread = pair
        z = (float(((vector - self._mean) @ self._basis) @ weights) - middle) / spread
        first = label if (label, other) in self._pairs else other  # the discriminant points towards `first`
        if (z > 0) == (first == label):
            # Both agree: as sure as the weaker of the two says. The discriminant's spread is learned on enrolled
            # glyphs and is too narrow for a degraded one; the correlation's lead, alone, too cautious for a blur.
            sure = min(abs(z) / FULL_DISCRIMINANT, _lead(score, other_score, FULL_PAIR_SEPARATION))
            return _Match(label, score, round(min(sure, confidence(score, rest)), 4))
        # The discriminant overrules the best correlation: it is more often right (a blurred club), but not sure.
        return _Match(other, other_score, 0.0)


def _read(readings: list[tuple[_Match, _Match | None, Quad]], detection: Detection) -> CardRead | None:
    """The card from its readings: the rank with the highest confidence, then the most confident suit among the
    readings of that rank."""
    if not readings:
        return None
    rank, _, quad = max(readings, key=lambda reading: (reading[0].confidence, reading[0].score))
    suits = [suit for other, suit, _ in readings if suit is not None and other.label == rank.label]
    suit = max(suits, key=lambda match: (match.confidence, match.score), default=None)
    if suit is None:  # a rank alone is no card: its code (rank and "?") is as sure as its unread suit, not at all
        return CardRead(rank.label, None, 0.0, rank.confidence, 0.0, detection.box, quad, detection.zone)
    return CardRead(rank.label, suit.label, min(rank.confidence, suit.confidence), rank.confidence, suit.confidence,
                    detection.box, quad, detection.zone)  # fmt: skip


def _clear(rank: _Match, suit: _Match | None) -> bool:
    """A reading beyond doubt on its own: both glyphs match their templates closely, and surely."""
    return (
        suit is not None
        and min(rank.confidence, suit.confidence) >= SURE
        and rank.score >= CLEAR_SCORE
        and suit.score >= CLEAR_SCORE
    )


def _beyond_doubt(readings: list[tuple[_Match, _Match | None, Quad]]) -> bool:
    """Two readings agree on rank and suit, each surely, and no reading says otherwise with any confidence."""
    sure = [
        (rank.label, suit.label) for rank, suit, _ in readings if suit and min(rank.confidence, suit.confidence) >= SURE
    ]
    if len(sure) < 2 or len(set(sure)) != 1:
        return False
    code = sure[0]
    return all(
        (rank.label, suit.label if suit else code[1]) == code or rank.confidence < DOUBT for rank, suit, _ in readings
    )


def _lead(score: float, runner_up: float, full: float) -> float:
    separation = (1.0 - runner_up) / max(1.0 - score, 1e-3)
    return min(1.0, max(0.0, (separation - 1.0) / (full - 1.0)))


def confidence(score: float, runner_up: float) -> float:
    """How sure a match is: its quality (the score, from `NO_SCORE` to `FULL_SCORE`) times its separation (how many
    times further from a perfect match the runner-up is, from 1 to `FULL_SEPARATION`)."""
    quality = min(1.0, max(0.0, (score - NO_SCORE) / (FULL_SCORE - NO_SCORE)))
    return round(quality * _lead(score, runner_up, FULL_SEPARATION), 4)
