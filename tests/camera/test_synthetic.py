"""Detection and recognition on synthetic frames drawn by the tests (tests/camera/render.py): a deck enrolled from
one photo per card, then frames with the cards at any angle, in perspective, with noise, blur and glare.

The accuracy floors are what was measured when these tests were written (docs/camera.md) less a small margin, not
figures tuned to pass: 30 frames of 6 cards per condition read 100% right in every condition below; with blur of
sigma 1.5 px most reads are right but unsure (the confidence falls with blur), so they would be misreads, not cards.
Here 4 frames per condition keep the suite fast; the floor allows one card in 24 to go wrong."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from drivers.camera.detect import Detection, Zone, find_cards, order_corners
from drivers.camera.enroll import box_iou
from drivers.camera.recognize import Recognizer, _Match, _read
from drivers.camera.templates import RANK_CODES, SUIT_CODES, Templates
from tests.camera.render import CODES, Placed, table


@pytest.fixture(scope="module")
def recognizer(synthetic_templates: Path) -> Recognizer:
    return Recognizer(Templates.load(synthetic_templates))


def accuracy(recognizer: Recognizer, frames: int, seed: int, **conditions: float | bool) -> tuple[float, list[str]]:
    """Share of the cards laid on `frames` frames that are found and read right, and what went wrong."""
    rng = np.random.default_rng(seed)
    right, total, wrong = 0, 0, []
    for index in range(frames):
        codes = [str(code) for code in rng.choice(CODES, 6, replace=False)]
        frame, placed = table(codes, seed=seed * 1000 + index, **conditions)  # type: ignore[arg-type]
        reads = recognizer.read_frame(frame)
        for card in placed:
            total += 1
            read = max(reads, key=lambda r: box_iou(r.box, card.box), default=None)
            if read is not None and box_iou(read.box, card.box) > 0.5 and read.code == card.code:
                right += 1
            else:
                wrong.append(f"{card.code} read as {read.code if read else 'nothing'}")
    return right / total, wrong


def test_enrollment_learns_every_rank_and_suit_and_where_the_index_is(synthetic_templates: Path) -> None:
    templates = Templates.load(synthetic_templates)
    assert templates.ranks == RANK_CODES
    assert templates.suits == SUIT_CODES
    assert templates.layout is not None
    assert templates.layout.rank[1] < templates.layout.suit[1]  # the rank above the pip
    assert {suit for suit, red in templates.suit_redness.items() if red > 0.2} == {"H", "D"}


def test_cards_are_found_where_they_lie(recognizer: Recognizer) -> None:
    frame, placed = table(["AS", "10H", "QD", "KC", "7S", "9D"], seed=11, tilt=0.05)
    found = find_cards(frame)
    assert len(found) == 6
    for card in placed:
        best = max(found, key=lambda d: box_iou(d.box, card.box))
        assert box_iou(best.box, card.box) > 0.85
        # corners within 2% of the card's width of where they were drawn (in either upright order)
        error = min(np.abs(best.quad - np.roll(order_corners(card.corners), shift, axis=0)).max() for shift in (0, 2))
        assert error < 0.02 * card.box[2] + 2


def test_every_card_of_the_deck_is_read_upright(recognizer: Recognizer) -> None:
    wrong = []
    for start in range(0, len(CODES), 8):
        codes = list(CODES[start : start + 8])
        frame, _ = table(codes, seed=start, any_angle=False, tilt=0.0)
        reads = {read.code for read in recognizer.read_frame(frame)}
        wrong += [code for code in codes if code not in reads]
    assert wrong == []


def test_reads_carry_code_confidence_and_box(recognizer: Recognizer) -> None:
    frame, placed = table(["QH", "10S"], seed=3)
    reads = sorted(recognizer.read_frame(frame), key=lambda r: r.box[0])
    assert [read.code for read in reads] == [card.code for card in sorted(placed, key=lambda c: c.box[0])]
    for read, card in zip(reads, sorted(placed, key=lambda c: c.box[0]), strict=True):
        assert 0.8 <= read.confidence <= 1.0
        assert read.card is not None and read.card.code == card.code
        assert box_iou(read.box, card.box) > 0.85


@pytest.mark.parametrize(
    ("conditions", "floor"),
    [
        ({}, 0.95),  # any angle
        ({"tilt": 0.07}, 0.95),  # perspective
        ({"noise": 10.0}, 0.95),
        ({"blur": 1.5}, 0.95),
        ({"glare": 170.0}, 0.95),
        ({"tilt": 0.05, "noise": 6.0, "blur": 1.0, "glare": 120.0}, 0.95),
    ],
    ids=["rotation", "perspective", "noise", "blur", "glare", "everything"],
)
def test_accuracy_under_degradation(recognizer: Recognizer, conditions: dict[str, float], floor: float) -> None:
    share, wrong = accuracy(recognizer, frames=4, seed=7, **conditions)
    assert share >= floor, wrong


def test_a_misread_is_an_unsure_read_not_a_confident_one(recognizer: Recognizer) -> None:
    """Over many degraded frames, every wrong full code comes with a low confidence."""
    rng = np.random.default_rng(5)
    for index in range(6):
        codes = [str(code) for code in rng.choice(CODES, 6, replace=False)]
        frame, placed = table(codes, seed=500 + index, tilt=0.06, noise=8.0, blur=1.4, glare=160.0)
        for read in recognizer.read_frame(frame):
            card: Placed = max(placed, key=lambda c: box_iou(c.box, read.box))
            if read.suit is not None and read.code != card.code:
                assert read.confidence < 0.8, f"{card.code} read as {read.code} with {read.confidence}"


def test_zones_limit_where_cards_are_read(recognizer: Recognizer) -> None:
    frame, placed = table(["QH", "10S", "9D", "KC"], seed=21, size=(1280, 720))
    left = min(placed, key=lambda c: c.box[0])
    x, y, w, h = left.box
    zone = Zone("player", (x - 10, y - 10, w + 20, h + 20))
    reads = recognizer.read_frame(frame, [zone])
    assert [(read.code, read.zone) for read in reads] == [(left.code, "player")]
    assert recognizer.read_frame(frame, [Zone("empty", (0, 0, 40, 40))]) == []


def test_a_rank_read_without_its_suit_is_never_a_sure_card() -> None:
    """A card whose suit the templates cannot tell is reported as rank and "?", with the rank's confidence kept as
    `rank_confidence` and the code's confidence 0: no consumer (the CLI's "cards", the camera source, the benchmark's
    confident reads) may take it for a sure card."""
    quad = np.array([[10, 10], [73, 10], [73, 98], [10, 98]], dtype=np.float32)
    rank = _Match("J", score=0.93, confidence=0.91)
    read = _read([(rank, None, quad)], Detection(quad))
    assert read is not None
    assert (read.code, read.card, read.rank_confidence, read.suit_confidence) == ("J?", None, 0.91, 0.0)
    assert read.confidence == 0.0
    suited = _read([(rank, _Match("S", score=0.9, confidence=0.85), quad)], Detection(quad))
    assert suited is not None and (suited.code, suited.confidence) == ("JS", 0.85)
