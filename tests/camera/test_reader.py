"""The shipped reader (drivers/camera/reader.py): every card of a real deck without enrollment, at an angle,
overlapping, on pale tables; an enrolled deck confirming it; bad frames.

The scenes are rendered from the held-out top-down webcam photos of shared/data/cards/webcam-9-to-ace
(`images/test`: the shipped network was trained on synthetic scenes of `images/train`, never on these), and the
real roboflow webcam scenes of the held-out split (`split.csv`)."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any, cast

import cv2
import numpy as np
import pytest

import drivers.camera.reader as reader_module
from drivers.camera.errors import ImageError, TemplatesError
from drivers.camera.image_io import load_image
from drivers.camera.indices import Proposal, crop_matrices, crop_matrix
from drivers.camera.reader import (
    DEFAULT_MODEL,
    MIN_REPORTED,
    PLAUSIBLE,
    RANK_AGREES,
    SAME_INDEX,
    SURE,
    IndexReader,
    _averaged,
    _cards,
    _combine,
    _Index,
    _likeliest_per_index,
    _near,
    _near_pairs,
    gate_input,
    load_network,
)
from drivers.camera.recognize import CardRead
from drivers.camera.squares import squares
from drivers.camera.templates import Templates
from drivers.camera.training import calibrate, split
from tests.camera.conftest import REAL_DATA
from tests.camera.scenes import Card, card_images, owners, roboflow_truth, studio_scene


@pytest.fixture(scope="module")
def reader() -> IndexReader:
    return IndexReader()


@pytest.fixture(scope="module")
def cards() -> list[tuple[str, np.ndarray]]:
    found = card_images(REAL_DATA, "test/cam_image")  # held out: the network was trained on images/train
    if not found:
        pytest.fail(f"the real card photographs are missing under {REAL_DATA}")
    return found


def read_scenes(reader: IndexReader, scenes: list[tuple[np.ndarray, list[Card]]]) -> tuple[int, int, int, int]:
    """(cards, read right surely, read right at any confidence, sure reads of another card) over the scenes; a read
    belongs to the uppermost card under each of its index squares (`scenes.owners`)."""
    cards = right = found = wrong = 0
    for frame, placed in scenes:
        reads = reader.read_frame(frame)
        owned = owners(reads, placed)
        for number, card in enumerate(placed):
            on = [read for read, mine in zip(reads, owned, strict=True) if number in mine]
            cards += 1
            right += any(read.code == card.code and read.confidence >= SURE for read in on)
            found += any(read.code == card.code for read in on)
            wrong += sum(1 for read in on if read.code != card.code and read.confidence >= SURE)
    return cards, right, found, wrong


# The floors below are regression floors for what the shipped reader does today (about two thirds of what it
# measured with the reader's rules of 2026-12-04); the targets, which it misses, are measured in
# bench/camera_bench.py and written in docs/camera.md (issue 11 stays open until they are met).


def test_cards_on_felt_seen_from_above_are_read_at_any_turn(
    reader: IndexReader, cards: list[tuple[str, np.ndarray]]
) -> None:
    scenes = [studio_scene(cards, (1280, 720), seed, 0) for seed in range(3)]
    total, right, found, wrong = read_scenes(reader, scenes)
    assert wrong == 0
    assert found >= 11 and right >= 10, f"{right} sure, {found} in all of {total}"


@pytest.mark.parametrize("cloth", [(235, 235, 235), (150, 200, 225)], ids=["white", "pale-wood"])
def test_indices_are_found_on_pale_tables(
    reader: IndexReader, cards: list[tuple[str, np.ndarray]], cloth: tuple[int, int, int]
) -> None:
    """No card outline is needed: on a table as light as the cards, the indices are still found and read."""
    scenes = [studio_scene(cards, (1280, 720), 40 + seed, 20, cloth=cloth) for seed in range(2)]
    total, right, found, wrong = read_scenes(reader, scenes)
    assert wrong == 0
    assert found >= 6 and right >= 5, f"{right} sure, {found} in all of {total} on {cloth}"


def test_overlapping_cards_are_read_by_their_one_visible_index(
    reader: IndexReader, cards: list[tuple[str, np.ndarray]]
) -> None:
    """Cards dealt half over each other, upright: each lower card shows only its top-left index."""
    scenes = [studio_scene(cards, (1280, 720), 70 + seed, 10, spacing=0.05, turn=(-8.0, 8.0)) for seed in range(3)]
    total, right, found, wrong = read_scenes(reader, scenes)
    assert wrong == 0
    assert found >= 9 and right >= 8, f"{right} sure, {found} in all of {total} overlapping cards"


def _hand_shoe_and_uneven_light(frame: np.ndarray, placed: list[Card], seed: int) -> np.ndarray:
    """The frame with a dealer's hand (skin, fingers with creases) and a card shoe (a dark box with the red lattice
    of a card's back in its mouth) drawn where no card lies, and the light falling off towards one side."""
    rng = np.random.default_rng(seed)
    height, width = frame.shape[:2]
    layer = frame.copy()
    shoe = np.array([[0.76, 0.04], [0.97, 0.07], [0.95, 0.33], [0.74, 0.30]]) * (width, height)
    cv2.fillConvexPoly(layer, shoe.astype(np.int32), (38, 36, 40))
    back = np.array([[0.78, 0.26], [0.93, 0.28], [0.925, 0.33], [0.775, 0.31]]) * (width, height)
    cv2.fillConvexPoly(layer, back.astype(np.int32), (235, 235, 235))
    for k in range(14):  # the back's lattice: red diagonals on white
        x = int(0.785 * width + k * 0.011 * width)
        cv2.line(layer, (x, int(0.285 * height)), (x + 18, int(0.325 * height)), (40, 30, 190), 2)
        cv2.line(layer, (x + 18, int(0.285 * height)), (x, int(0.325 * height)), (40, 30, 190), 2)
    skin = tuple(int(c) for c in rng.uniform([120, 150, 190], [150, 175, 225]))
    palm = (int(0.22 * width), int(0.86 * height))
    cv2.ellipse(layer, palm, (95, 62), -10, 0, 360, skin, -1)
    for finger in range(4):  # spread over the table, each with two creases
        base = np.array([palm[0] - 70 + 45 * finger, palm[1] - 40])
        tip = base + np.array([-25 + 15 * finger, -110 + 12 * abs(finger - 1.5)])
        cv2.line(layer, tuple(int(v) for v in base), tuple(int(v) for v in tip), skin, 30)
        for share in (0.45, 0.7):
            crease = base + share * (tip - base)
            cv2.line(layer, (int(crease[0]) - 9, int(crease[1])), (int(crease[0]) + 9, int(crease[1]) + 2),
                     tuple(int(c * 0.55) for c in skin), 2)  # fmt: skip
    cards = np.zeros((height, width), np.uint8)
    for card in placed:
        cv2.fillConvexPoly(cards, card.polygon.astype(np.int32), 255)
    free = cv2.dilate(cards, np.ones((25, 25), np.uint8)) == 0
    drawn = frame.copy()
    drawn[free] = layer[free]
    light = np.linspace(0.55, 1.1, width, dtype=np.float32)[None, :, None]  # a lamp off to the right
    return np.clip(drawn.astype(np.float32) * light, 0, 255).astype(np.uint8)


def test_a_hand_a_shoe_and_uneven_light_invent_nothing_and_hide_no_card(
    reader: IndexReader, cards: list[tuple[str, np.ndarray]]
) -> None:
    """A hand and a shoe in the picture (skin, creases, a card's red back) are read as no card, surely or not, and
    with the light falling off to one side the cards are still read, never as another card."""
    plain = [studio_scene(cards, (1280, 720), 90 + seed, 15) for seed in range(3)]
    busy = [(_hand_shoe_and_uneven_light(frame, placed, seed), placed) for seed, (frame, placed) in enumerate(plain)]
    for frame, placed in busy:
        reads = reader.read_frame(frame)
        invented = [read.code for read, mine in zip(reads, owners(reads, placed), strict=True) if mine == {None}]
        assert invented == [], f"read on no card: {invented}"
    total, right, found, wrong = read_scenes(reader, busy)
    _, right_plain, _, _ = read_scenes(reader, plain)
    assert wrong == 0
    assert found >= 12 and right >= right_plain - 2, f"{right} sure ({right_plain} without), {found} in all of {total}"


def test_ranks_2_to_8_are_read_without_enrollment_in_held_out_real_scenes(reader: IndexReader) -> None:
    """The shipped templates knew 9 to ace only and could read none of these; the network reads every rank. Real
    webcam scenes of the held-out split (never trained on)."""
    labelled, right, found, wrong = ranks_2_to_8(reader)
    assert labelled > 30
    assert wrong == 0
    assert right >= 18 and found >= 24, f"{right} sure, {found} in all of {labelled} index labels"


def ranks_2_to_8(reader: IndexReader) -> tuple[int, int, int, int]:
    scenes = [path for path in split.read()["test"] if path.name.startswith("WIN_")][:8]
    labelled = right = found = wrong = 0
    for path in scenes:
        frame = cv2.resize(load_image(path), (1280, 720), interpolation=cv2.INTER_CUBIC)
        reads = reader.read_frame(frame)
        truth = roboflow_truth(path)
        lies_on = [calibrate.lies_on(read, truth) for read in reads]
        for label in truth:
            code = label[0]
            if code[:-1] not in {"2", "3", "4", "5", "6", "7", "8"}:
                continue
            on = [read for read, labels in zip(reads, lies_on, strict=True) if label in labels]
            labelled += 1
            right += any(read.code == code and read.confidence >= SURE for read in on)
            found += any(read.code == code for read in on)
            wrong += sum(1 for read in on if read.code != code and read.confidence >= SURE)
    return labelled, right, found, wrong


def test_an_enrolled_deck_raises_confidence_on_that_deck(real_templates: Templates) -> None:
    """Templates enrolled from the deck's own photos confirm the network: on the held-out top-down photos the
    combined reader is at least as sure of every card the network alone reads right, and surer on some."""
    alone, enrolled = IndexReader(), IndexReader(templates=real_templates)
    raised = 0
    photos = sorted((REAL_DATA / "images" / "test").glob("cam_image*.jpg"))
    assert photos
    for path in photos:
        frame = load_image(path)
        before = {read.code: read.confidence for read in alone.read_frame(frame)}
        after = {read.code: read.confidence for read in enrolled.read_frame(frame)}
        for code, confidence in before.items():
            if code in after:
                assert after[code] >= confidence
                raised += after[code] > confidence
    assert raised > 0


def test_bad_frames(reader: IndexReader) -> None:
    with pytest.raises(ImageError):
        reader.read_frame("not a frame")
    with pytest.raises(ImageError):
        reader.read_frame(np.zeros((0, 5, 3), dtype=np.uint8))
    assert reader.read_frame(np.zeros((8, 8, 3), dtype=np.uint8)) == []
    assert reader.read_frame(np.full((720, 1280), 255, dtype=np.uint8)) == []
    noise = np.random.default_rng(5).integers(0, 256, (720, 1280, 3), dtype=np.uint8)
    assert [read for read in reader.read_frame(noise) if read.confidence >= SURE] == []


def test_the_split_is_written_down_and_keeps_scenes_apart() -> None:
    """Every photo the network was trained or calibrated on is listed with its hash, and no webcam session has
    frames on both sides of the split."""
    sets = split.read(check=True)
    assert sets["train"] and sets["validation"] and sets["test"]
    sessions = {name: {p.name[13:18] for p in paths if p.name.startswith("WIN_")} for name, paths in sets.items()}
    assert not sessions["test"] & (sessions["train"] | sessions["validation"])
    assert not set(sets["test"]) & (set(sets["train"]) | set(sets["validation"]))
    webcam = {name: [path.as_posix() for path in paths if split.WEBCAM in str(path)] for name, paths in sets.items()}
    assert webcam["train"] and all("/images/train/" in path for path in webcam["train"])
    assert webcam["test"] and not any("/images/train/" in path for path in webcam["test"])
    assert not webcam["validation"]


def test_the_shipped_threshold_rests_on_the_validation_scenes_and_their_errors() -> None:
    """The shipped network's threshold is what `calibrate` sets by default: judged on the validation photos and
    `SCENES` composed validation scenes, above every wrong read there. A threshold set on the photos alone rests on
    about 70 reads and, for a network that misreads none of them, on nothing (the floor)."""
    meta = json.loads(DEFAULT_MODEL.with_suffix(".json").read_text())
    calibration = meta["calibration"]
    assert calibration["scenes"] == calibrate.SCENES >= 150
    assert calibration["reads"] > 5 * calibration["reads_in_photos"]  # the scenes, not the photos, hold most reads
    assert calibration["wrong_or_invented"] > 0 and calibration["threshold"] > calibrate.FLOOR
    assert meta["threshold"] == calibration["threshold"]


def test_a_read_on_an_index_a_scene_leaves_unlabelled_is_judged_neither_right_nor_wrong() -> None:
    """In a composed scene an index covered in part or cut by the frame's edge is not labelled (`HIDDEN`): a read
    grouping it with a labelled index of another card, as that index's card's other corner, is not judged (it was
    judged wrong, and set a candidate's threshold at the cap: docs/camera.md, *candidate P32*); a read on labelled
    indices alone is judged as before."""

    class Reads:
        def __init__(self, reads: list[CardRead]) -> None:
            self.reads = reads

        def read_frame(self, frame: object) -> list[CardRead]:
            return self.reads

    quad = np.zeros((4, 2), np.float32)
    grouped = CardRead("2", "C", 0.8, 0.8, 0.8, (0, 0, 150, 150), quad, None, ((0, 0, 50, 50), (100, 100, 50, 50)))
    alone = CardRead("2", "C", 0.8, 0.8, 0.8, (0, 0, 50, 50), quad, None, ((0, 0, 50, 50),))
    reader = cast(IndexReader, Reads([grouped, alone]))
    labelled_2s = ("2S", 25.0, 25.0)
    frames = [(np.zeros((8, 8, 3), np.uint8), [labelled_2s, (calibrate.HIDDEN, 125.0, 125.0)])]
    assert calibrate.leads(reader, frames) == [(1.0, "unjudged"), (1.0, "wrong")]
    assert calibrate.scene_leads(reader, frames) == [(1.0, "wrong")]
    frames_without = [(frames[0][0], [labelled_2s])]
    assert calibrate.leads(reader, frames_without) == [(1.0, "wrong"), (1.0, "wrong")]


def test_calibration_lists_the_errors_that_set_its_threshold_highest_first() -> None:
    """`calibrate --errors N`: the wrong and invented reads with the highest leads, each with the photo or composed
    scene it was made in; a right read is never listed, nor a read a scene does not judge (invented there)."""

    class Reads:
        def read_frame(self, frame: object) -> list[CardRead]:
            return reads[int(np.asarray(frame)[0, 0, 0])]

    quad = np.zeros((4, 2), np.float32)

    def read(code: str, confidence: float, x: int) -> CardRead:
        box = (x, 0, 50, 50)
        return CardRead(code[:-1], code[-1], confidence, confidence, confidence, box, quad, None, (box,))

    reads = [
        [read("2C", 0.4, 0), read("KH", 0.72, 200), read("7D", 0.8, 400)],  # wrong, invented, right
        [read("2C", 0.64, 0), read("9S", 0.76, 200)],  # wrong; invented, not judged in a scene
    ]
    truth = [("2S", 25.0, 25.0), ("7D", 425.0, 25.0)]
    photo = (np.zeros((8, 8, 3), np.uint8), truth)
    scene = (np.ones((8, 8, 3), np.uint8), truth)
    lines = calibrate.highest_errors(cast(IndexReader, Reads()), [("WIN_a.jpg", photo)], [scene], 2)
    assert lines == [
        "0.900 invented: KH on -, WIN_a.jpg, box (200, 0, 50, 50)",
        "0.800 wrong: 2C on 2S, scene 0 (seed 12), box (0, 0, 50, 50)",
    ]
    assert len(calibrate.highest_errors(cast(IndexReader, Reads()), [("WIN_a.jpg", photo)], [scene], 9)) == 3


def test_the_halves_risk_says_how_well_the_errors_pin_the_threshold_down() -> None:
    """`calibrate.halves_risk`: the share of random halves of the calibration's reads whose threshold lets a wrong
    read of the other half through. Errors at one lead pin it down; one error far above the rest does not."""
    right = [(0.95, "right")] * 200
    assert calibrate.halves_risk(right) == 0.0
    clustered = right + [(0.6, "wrong")] * 40
    assert calibrate.halves_risk(clustered) == 0.0  # any half holding one of them sets 0.62, above all of them
    lone_high = right + [(0.3 + 0.01 * k, "wrong") for k in range(20)] + [(0.9, "invented")]
    assert 0.4 < calibrate.halves_risk(lone_high) < 0.6  # the half without the 0.9 read lets it through
    assert calibrate.halves_risk(lone_high) == calibrate.halves_risk(lone_high)  # seeded
    shipped = json.loads(DEFAULT_MODEL.with_suffix(".json").read_text())["calibration"]
    assert 0.0 <= shipped["halves_risk"] <= 1.0


def _calibrations(figures: dict[float, tuple[float, int]], tried: list[float]) -> Callable[[float], dict[str, Any]]:
    """A stand-in for a calibration pass at a gate cut: its threshold and sure right reads from `figures`."""

    def at(cut: float) -> dict[str, Any]:
        tried.append(cut)
        threshold, sure = figures[round(cut, 4)]
        return {"threshold": threshold, "right_at_threshold": sure}

    return at


def test_the_gate_cut_is_raised_while_the_calibration_stays_as_good() -> None:
    """`calibrate` doubles the gate's trained cut as long as the threshold stays no higher and the sure right reads
    no fewer than at the trained cut less `loss` of them (`GATE_LOSS`: none); the first cut that costs more, or
    raises the threshold, stops it; never a cut of 1 or more."""
    tried: list[float] = []
    # as good at 0.1 and 0.2 (a lower threshold is better still), one sure read fewer at 0.4: within 1% of 511
    figures = {0.05: (0.84, 511), 0.1: (0.84, 511), 0.2: (0.83, 512), 0.4: (0.83, 510), 0.8: (0.83, 505)}
    cut, best = calibrate.raised_gate(0.05, _calibrations(figures, tried), loss=0.01)
    assert (cut, best["threshold"], best["right_at_threshold"]) == (0.4, 0.83, 510)
    assert tried == [0.05, 0.1, 0.2, 0.4, 0.8]  # 505 is more than 1% under 511: stopped
    # the losses add up against the trained cut's reads, not cut by cut
    tried = []
    figures = {0.05: (0.84, 500), 0.1: (0.84, 497), 0.2: (0.84, 494)}
    cut, _ = calibrate.raised_gate(0.05, _calibrations(figures, tried), loss=0.01)
    assert cut == 0.1 and tried == [0.05, 0.1, 0.2]
    # with no loss allowed (the default since 2026-12-07), one sure read fewer stops it
    tried = []
    figures = {0.05: (0.84, 511), 0.1: (0.84, 511), 0.2: (0.83, 512), 0.4: (0.83, 510)}
    cut, best = calibrate.raised_gate(0.05, _calibrations(figures, tried))
    assert calibrate.GATE_LOSS == 0.0
    assert (cut, best["right_at_threshold"]) == (0.2, 512) and tried == [0.05, 0.1, 0.2, 0.4]
    # a higher threshold stops it at once, even with more sure reads
    cut, _ = calibrate.raised_gate(0.05, _calibrations({0.05: (0.84, 511), 0.1: (0.85, 520)}, []))
    assert cut == 0.05
    # never as far as 1: 0.3 -> 0.6, and 1.2 is not tried
    tried = []
    cut, _ = calibrate.raised_gate(0.3, _calibrations({0.3: (0.84, 5), 0.6: (0.84, 5)}, tried))
    assert cut == 0.6 and tried == [0.3, 0.6]


def test_the_shipped_gate_cut_is_the_calibrated_one() -> None:
    """The shipped `.json` keeps the cut training chose and the one `calibrate` raised it to (a doubling of it)."""
    meta = json.loads(DEFAULT_MODEL.with_suffix(".json").read_text())
    trained, cut = meta["gate_trained_threshold"], meta["gate_threshold"]
    steps = np.log2(cut / trained)
    assert 0 <= steps <= calibrate.GATE_STEPS and abs(steps - round(steps)) < 1e-6 and cut < 1.0


def _card_read(code: str, confidence: float, box: tuple[int, int, int, int], rank_confidence: float | None = None
               ) -> CardRead:  # fmt: skip
    quad = np.zeros((4, 2), np.float32)
    rank, suit = (code[:-1], code[-1]) if not code.endswith("?") else (code[:-1], None)
    ranked = confidence if rank_confidence is None else rank_confidence
    return CardRead(rank, suit, confidence, ranked, confidence, box, quad)


def test_a_template_read_of_the_rank_alone_never_replaces_the_networks_card() -> None:
    """An enrolled deck's templates that read a card's rank but not its suit (`J?`, confidence 0: no card) leave the
    network's full code in place: the pit boss sees its guess, not a rank alone. The same rank confirms it as it is;
    another rank doubts it by the templates' rank confidence, so that a sure network read the deck's templates
    disagree with is no longer sure."""
    template_box = (80, 80, 200, 280)
    unsure = _card_read("JS", 0.6, (90, 90, 30, 30))
    sure = _card_read("KC", 0.9, (90, 90, 30, 30))
    [kept] = _combine([unsure], [_card_read("J?", 0.0, template_box, rank_confidence=0.85)])
    assert (kept.code, kept.confidence) == ("JS", 0.6)
    [confirmed] = _combine([sure], [_card_read("K?", 0.0, template_box, rank_confidence=0.85)])
    assert (confirmed.code, confirmed.confidence) == ("KC", 0.9)
    [doubted] = _combine([sure], [_card_read("Q?", 0.0, template_box, rank_confidence=0.85)])
    assert doubted.code == "KC" and doubted.confidence == pytest.approx(0.05) and doubted.confidence < SURE
    # a template read of a full code still overrides an unsure network read, as before
    [overridden] = _combine([unsure], [_card_read("JC", 0.9, template_box)])
    assert (overridden.code, overridden.confidence) == ("JC", 0.9)


def test_the_templates_never_overrule_the_network_with_a_card_it_found_implausible() -> None:
    """An enrolled deck's templates overrule an unsure network read only with a card the network itself found
    plausible on that card's indices: a 10D the network read at 0.644 that the templates read KD at 1.0 (seen on the
    studio deck's renders) stays the network's unsure 10D when the network gave KD under `PLAUSIBLE`; the same
    templates overrule it when the network gave KD more (the deck's pale ace of spades that it reads AC)."""
    template_box = (80, 80, 200, 280)
    network = _card_read("10D", 0.644, (90, 90, 30, 30))
    templates = [_card_read("KD", 1.0, template_box)]
    [kept] = _combine([network], templates, lambda read, code: {"10D": 0.9, "KD": 0.001}[code])
    assert (kept.code, kept.confidence) == ("10D", 0.644) and kept.confidence < SURE
    [overruled] = _combine([network], templates, lambda read, code: {"10D": 0.6, "KD": 0.2}[code])
    assert (overruled.code, overruled.confidence) == ("KD", 1.0)
    # a sure network read the templates disagree with is unsure either way, as before
    [doubted] = _combine([replace(network, confidence=0.9)], templates, lambda read, code: 0.001)
    assert doubted.confidence < SURE


def test_the_networks_likelihood_of_a_card_is_read_on_that_cards_own_indices(
    reader: IndexReader, cards: list[tuple[str, np.ndarray]]
) -> None:
    """`IndexReader._likelihood` judges a card by the votes of the indices the read was grouped from: the card it
    read surely is likely there, a card of another rank and colour is not; a read with no index of its own (a
    template read) casts no doubt."""
    frame, _ = studio_scene(cards, (1280, 720), 0, 0)
    indices = reader._indices(frame, squares(frame, ()))
    likelihood = reader._likelihood(indices)
    sure = [read for read in reader.read_frame(frame) if read.confidence >= SURE]
    assert sure
    for read in sure:
        other = ("2" if read.rank != "2" else "3") + ("H" if read.suit in "SC" else "S")
        assert likelihood(read, read.code) > 0.5 > PLAUSIBLE > likelihood(read, other)
    assert likelihood(replace(sure[0], indices=()), "2H") == 1.0


def test_two_corners_that_agree_combine_only_for_a_network_calibrated_so() -> None:
    """`both_corners` (a network's .json): a card whose two corners read the same code is surer than either corner;
    without it (the shipped network) a card is as sure as its best corner. A lone index is as sure as it is."""
    corners = [
        _Index("QH", 0.6, 0.7, Proposal(100, 100, 30), None),
        _Index("QH", 0.5, 0.6, Proposal(190, 230, 30), None),
    ]
    alone = [_Index("9S", 0.6, 0.7, Proposal(600, 100, 30), None)]
    same = [card.confidence for card in _cards(corners + alone, lambda lead: lead, both_corners=False)]
    combined = [card.confidence for card in _cards(corners + alone, lambda lead: lead, both_corners=True)]
    assert same == [0.6, 0.6]
    assert combined == [pytest.approx(0.8), 0.6]


def test_indices_of_one_code_are_one_card_only_along_a_card_diagonal() -> None:
    """Two indices of one code are the two corners of one card when they lie on a line along a card's diagonal (the
    angle the squares are turned by counts); side by side or one above the other they are two cards (an ace of clubs
    and an ace of spades misread as clubs must not make one surer card), and closer than two sides one index framed
    twice (one card, as sure as its surer reading)."""

    def grouped(a: Proposal, b: Proposal) -> list[float]:
        indices = [_Index("QH", 0.6, 0.7, a, None), _Index("QH", 0.5, 0.6, b, None)]
        return sorted(card.confidence for card in _cards(indices, lambda lead: lead, both_corners=True))

    assert grouped(Proposal(100, 100, 30), Proposal(190, 230, 30)) == [pytest.approx(0.8)]  # the diagonal
    assert grouped(Proposal(100, 100, 30), Proposal(190, 100, 30)) == [0.5, 0.6]  # side by side
    assert grouped(Proposal(100, 100, 30), Proposal(100, 230, 30)) == [0.5, 0.6]  # one above the other
    assert grouped(Proposal(100, 100, 30), Proposal(130, 100, 30)) == [0.6]  # one index twice
    turn = np.radians(30.0)  # the same card turned by 30 degrees: its squares turned with it
    dx, dy = 90 * np.cos(turn) - 130 * np.sin(turn), 90 * np.sin(turn) + 130 * np.cos(turn)
    turned = grouped(Proposal(100, 100, 30, -30.0), Proposal(100 + dx, 100 + dy, 30, -30.0))
    assert turned == [pytest.approx(0.8)]
    beside = grouped(
        Proposal(100, 100, 30, -30.0), Proposal(100 + 90 * np.cos(turn), 100 + 90 * np.sin(turn), 30, -30.0)
    )
    assert beside == [0.5, 0.6]  # two turned cards side by side


def test_a_read_lies_on_the_labelled_index_nearest_each_of_its_squares() -> None:
    """How the bench and `calibrate` judge a read: a square reaching over a touching index's centre lies on the index
    nearest its own centre only; a read by both corners lies on both; a square holding no labelled centre, on none."""
    quad = np.zeros((4, 2), np.float32)
    queen = CardRead("Q", "D", 0.9, 0.9, 0.9, (100, 100, 60, 60), quad, None, ((100, 100, 60, 60),))
    truth = [("QD", 128.0, 132.0), ("10D", 152.0, 150.0), ("QD", 400.0, 420.0)]
    assert calibrate.lies_on(queen, truth) == [("QD", 128.0, 132.0)]
    both = replace(queen, indices=((100, 100, 60, 60), (380, 400, 40, 40)))
    assert calibrate.lies_on(both, truth) == [("QD", 128.0, 132.0), ("QD", 400.0, 420.0)]
    assert calibrate.lies_on(replace(queen, indices=((600, 600, 40, 40),)), truth) == []


def test_the_crops_of_many_squares_at_once_are_those_of_each_square() -> None:
    squares = [Proposal(100.0, 80.0, 40.0, 0.0), Proposal(321.5, 17.25, 23.0, 137.0), Proposal(5.0, 600.0, 61.0, -90.0)]
    for angle, scale in ((0.0, 1.0), (180.0, 1.0), (0.0, 1.25), (33.0, 0.8)):
        together = crop_matrices(squares, 32, angle, scale)
        for square, matrix in zip(squares, together, strict=True):
            larger = Proposal(square.x, square.y, square.side * scale, square.angle)
            assert np.allclose(matrix, crop_matrix(larger, 32, angle), atol=1e-9)


@pytest.mark.parametrize("size", [32, 48])
def test_the_gate_reads_each_crop_as_the_mean_of_its_blocks(size: int) -> None:
    crops = np.random.default_rng(3).integers(0, 256, (7, size, size, 3), dtype=np.uint8)
    k = size // 16
    expected = crops.reshape(7, 16, k, 16, k, 3).astype(np.float64).mean(axis=(2, 4))
    small = gate_input(crops, 16)
    assert small.shape == (7, 16, 16, 3) and small.dtype == np.float32
    assert np.allclose(small, expected, atol=1e-4)
    assert np.array_equal(gate_input(np.full((2, size, size, 3), 255, np.uint8), 16), np.full((2, 16, 16, 3), 255.0))


def test_a_reader_whose_gate_does_not_divide_its_crops_is_refused(tmp_path: Path) -> None:
    for name in ("index_net.onnx", "index_gate.onnx"):
        (tmp_path / name).write_bytes((DEFAULT_MODEL.parent / name).read_bytes())
    meta = json.loads(DEFAULT_MODEL.with_suffix(".json").read_text())
    meta["gate_size"] = meta["size"] // 2 + 1  # no divisor of the crops' side
    (tmp_path / "index_net.json").write_text(json.dumps(meta))
    with pytest.raises(TemplatesError, match="does not divide"):
        IndexReader(tmp_path / "index_net.onnx")


def test_the_squares_that_vote_together_are_those_near_each_other() -> None:
    """`_vote` finds the squares of one index with the matrix of `_near_pairs`: it must say what `_near` says of
    every pair (squares of many sizes, some far apart, some on top of each other)."""
    rng = np.random.default_rng(3)
    squares = [Proposal(float(x), float(y), float(side)) for x, y, side in
               zip(rng.uniform(0, 300, 80), rng.uniform(0, 200, 80), rng.uniform(8, 90, 80), strict=True)]  # fmt: skip
    matrix = _near_pairs(squares, 0.5)
    expected = [[_near(a, b, 0.5) for b in squares] for a in squares]
    assert matrix.tolist() == expected
    assert 80 < matrix.sum() < 80 * 80  # some pairs near, some not


def test_each_index_is_read_in_the_one_square_the_gate_finds_likeliest() -> None:
    """Three squares on one index, two on another, one alone, and one the gate refused: one square read per index,
    the gate's likeliest of those that passed, whatever their order."""
    squares = [
        Proposal(100, 100, 30), Proposal(104, 98, 34), Proposal(97, 103, 28),  # one index
        Proposal(300, 100, 30), Proposal(306, 104, 30),  # another
        Proposal(500, 300, 40),  # alone
        Proposal(302, 98, 30),  # on the second index, likeliest of all, but refused by the gate
    ]  # fmt: skip
    likely = np.array([0.6, 0.9, 0.7, 0.5, 0.8, 0.4, 0.95], np.float32)
    passed = np.array([True] * 6 + [False])
    for order in ([0, 1, 2, 3, 4, 5, 6], [6, 5, 4, 3, 2, 1, 0], [3, 0, 6, 5, 1, 4, 2]):
        kept = _likeliest_per_index([squares[k] for k in order], likely[order], passed[order])
        assert sorted(np.array(order)[kept].tolist()) == [1, 4, 5]


@pytest.mark.parametrize("seed", range(20))
def test_the_squares_kept_per_index_follow_the_rule_whatever_the_frame(seed: int) -> None:
    """On random squares (clusters of several sizes, some refused by the gate): every square kept passed the gate,
    no two kept squares frame the same index, and every square that passed but was not kept frames the index of a
    kept square the gate finds at least as likely."""
    rng = np.random.default_rng(seed)
    centres = rng.uniform(0, 400, (12, 2))
    squares = [Proposal(float(x + dx), float(y + dy), float(side)) for (x, y), dx, dy, side in zip(
        centres[rng.integers(0, 12, 60)], rng.normal(0, 8, 60), rng.normal(0, 8, 60), rng.uniform(15, 45, 60),
        strict=True)]  # fmt: skip
    likely = rng.uniform(0, 1, 60).astype(np.float32)
    likely[rng.integers(0, 60, 10)] = 0.5  # ties
    passed = rng.uniform(0, 1, 60) < 0.7
    kept = _likeliest_per_index(squares, likely, passed)
    assert not (kept & ~passed).any()
    chosen = np.flatnonzero(kept).tolist()
    assert all(not _near(squares[a], squares[b], SAME_INDEX) for a in chosen for b in chosen if a < b)
    for other in np.flatnonzero(passed & ~kept).tolist():
        assert any(_near(squares[other], squares[k], SAME_INDEX) and likely[k] >= likely[other] for k in chosen)


def test_the_checks_are_asked_only_about_reads_above_the_reporting_floor(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The checks can only lower a confidence, so an index already under `MIN_REPORTED` (dropped as noise) is not
    asked about; an index the checks take under the floor is dropped too."""
    reader = IndexReader()
    floor = MIN_REPORTED * reader.threshold / SURE  # the lead that `_rescale`s to the floor
    leads = (("9C", floor * 0.9), ("9S", 0.9), ("9H", 0.6), ("2C", 0.3))
    found = [_Index(code, lead, 0.9, Proposal(40 + 50 * n, 100, 30), None) for n, (code, lead) in enumerate(leads)]
    asked: list[list[str]] = []

    def check(image: object, indices: list[_Index]) -> list[_Index]:
        asked.append([index.code for index in indices])
        return [replace(index, confidence=index.confidence * (0.5 if index.code == "2C" else 1.0)) for index in indices]

    monkeypatch.setattr(reader, "_gated", lambda crops, squares: np.ones(len(squares), dtype=bool))
    monkeypatch.setattr(reader_module, "_vote", lambda *args: found)
    monkeypatch.setattr(reader, "_confirm", lambda image, voted: voted)
    monkeypatch.setattr(reader, "_checked", check)
    image = np.full((200, 300, 3), 255, np.uint8)
    read = reader._indices(image, [(index.square, None) for index in found])
    assert asked == [["9S", "9H", "2C"]]  # the 9C under the floor is not asked about
    assert [index.code for index in read] == ["9S", "9H"]  # the 2C, halved by the check, fell under the floor


def test_a_frame_cuts_each_view_of_a_square_once_and_reads_as_if_cut_afresh(
    reader: IndexReader, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The checks read each index as framed and half a turn round at the network's size: views the gate and
    `_confirm` cut already. Each view of a square (its turn, scale and size) is cut once a frame, and the cards read
    are exactly those read when every view is cut whenever asked for."""
    frame = load_image(REAL_DATA / "images" / "test" / "cam_image4.jpg")
    views: list[tuple[Proposal, float, float, int | None]] = []
    real_crops = reader._crops

    def crops(image: np.ndarray, squares: list[Proposal], turn: float = 0.0, scale: float = 1.0,
              size: int | None = None) -> np.ndarray:  # fmt: skip
        views.extend((square, turn, scale, size or reader.size) for square in squares)
        return real_crops(image, squares, turn, scale, size)

    monkeypatch.setattr(reader, "_crops", crops)
    read = reader.read_frame(frame)
    checked = {view for view in views if view[1] == 180.0 and view[2] == 1.0}
    assert checked and len(views) == len(set(views))  # indices were checked, and no view was cut twice
    afresh = IndexReader()
    monkeypatch.setattr(afresh, "_cut", lambda image: (lambda squares, turn=0.0, scale=1.0, size=None:
                                                       real_crops(image, squares, turn, scale, size)))  # fmt: skip

    def summary(reads: list[CardRead]) -> list[tuple[str, float, tuple[int, ...]]]:
        return [(f"{card.rank}{card.suit}", card.confidence, card.box) for card in reads]

    assert summary(afresh.read_frame(frame)) == summary(read) and read


def _reading(*shares: tuple[int, float]) -> np.ndarray:
    """Card probabilities (52, summing to 1) with the given cards' shares and the rest spread evenly."""
    cards = np.zeros(52, np.float32)
    for code, share in shares:
        cards[code] = share
    cards[cards == 0] = (1 - cards.sum()) / (52 - len(shares))
    return cards


def test_an_index_is_as_sure_as_the_mean_of_its_vote_and_its_other_views() -> None:
    """`_confirm` averages an index's readings (its vote, the turned view, the larger view): views that read its
    card clearly lift a vote its squares disagreed on; one view reading another card takes its share of the lead
    away (it no longer wipes the index out, which lost a third of the studio cards not found); views that read
    another card outright leave nothing; and doubt that it is an index at all lowers the lead."""
    queen, king = 10, 11
    weak = _Index("QS", 0.1, 0.5, Proposal(100, 100, 30), None, _reading((queen, 0.5), (king, 0.4)), 0.9)
    agree = np.stack([_reading((queen, 0.95)), _reading((queen, 0.9))])
    lifted = _averaged(weak, queen, agree, np.array([0.95, 0.95], np.float32))
    assert lifted > 0.5 > weak.confidence
    strong = replace(weak, confidence=0.85, cards=_reading((queen, 0.9)))
    one_other = np.stack([_reading((king, 0.8)), _reading((queen, 0.95))])
    doubted = _averaged(strong, queen, one_other, np.array([0.95, 0.95], np.float32))
    confirmed = _averaged(strong, queen, agree, np.array([0.95, 0.95], np.float32))
    assert 0 < doubted < 0.5 < confirmed
    both_other = np.stack([_reading((king, 0.95)), _reading((king, 0.95))])
    assert _averaged(strong, queen, both_other, np.array([0.95, 0.95], np.float32)) == 0.0
    assert _averaged(strong, queen, agree, np.array([0.1, 0.1], np.float32)) < 0.5 * confirmed


def test_a_read_is_only_as_sure_as_the_checks_allow(monkeypatch: pytest.MonkeyPatch) -> None:
    """`_checked` lowers the confidence of a read by what each check gives its answer, the mean of its two views (as
    framed and half a turn round, cut once at the checks' size): the club-against-spade check asks about the black
    reads only, times its probability; the rank check about all, times its probability over `RANK_AGREES` (a rank
    check that gives the read's rank at least that agrees, and lowers nothing); a reader without the checks (as
    `calibrate` builds it) changes nothing."""
    reader = IndexReader()
    assert reader._club_spade is not None and reader._rank_check is not None  # the shipped reader has both
    club_spade, rank_check = reader._club_spade, reader._rank_check
    spade_chance = {0: 0.9, 1: 0.7}  # the club check's answer for the two black indices, both views
    rank_chance = {"9": (0.8, 0.6), "K": (0.1, 0.0)}  # the rank check's chance of a rank in the two views
    cut = []
    real_crops = reader._crops

    def crops(image: np.ndarray, squares: list[Proposal], turn: float = 0.0, scale: float = 1.0,
              size: int | None = None) -> np.ndarray:  # fmt: skip
        cut.append(size)
        return real_crops(image, squares, turn, scale, size)

    def forward(net: object, views: np.ndarray) -> np.ndarray:
        if net is club_spade.net:
            assert len(views) == 4 and views.shape[1:] == (club_spade.size,) * 2 + (3,)  # two black indices, 2 views
            chances = np.array([spade_chance[row % 2] for row in range(len(views))])
            return np.log(np.stack([1 - chances, chances], axis=1)).astype(np.float32)
        assert net is rank_check.net and len(views) == 6  # three indices, two views each
        assert views.shape[1:] == (rank_check.size,) * 2 + (3,)
        read = ["9", "9", "K"]
        rows = []
        for row in range(6):
            chance = rank_chance[read[row % 3]][row // 3]
            rank = rank_check.classes.index(read[row % 3])
            rest = (1 - chance) / (len(rank_check.classes) - 1)
            rows.append([chance if column == rank else rest for column in range(len(rank_check.classes))])
        return np.log(np.maximum(np.array(rows), 1e-9)).astype(np.float32)

    monkeypatch.setattr(reader_module, "_forward", forward)
    monkeypatch.setattr(reader, "_crops", crops)
    image = np.full((200, 200, 3), 255, np.uint8)
    found = [_Index(code, 0.9, 0.9, Proposal(50 + 40 * n, 100, 30), None) for n, code in enumerate(("9C", "9H", "KS"))]
    checked = reader._checked(reader._cut(image), found)
    assert cut == [48, 48]  # both checks read 48-pixel crops: cut once, as framed and half a turn round
    assert [index.code for index in checked] == ["9C", "9H", "KS"]
    eased = 0.7 / RANK_AGREES  # the 9's rank, 0.7 in the mean of the views, below the agreement
    assert checked[0].confidence == pytest.approx(0.9 * (1 - 0.9) * eased)  # a club the check finds a spade: unsure
    assert checked[1].confidence == pytest.approx(0.9 * eased)  # red: the rank check only
    assert checked[2].confidence == pytest.approx(0.9 * 0.7 * 0.05 / RANK_AGREES, rel=1e-3)  # a doubted rank: unsure
    rank_chance["9"] = (RANK_AGREES + 0.1, RANK_AGREES - 0.05)  # the rank check agrees: the 9s keep their confidence
    agreed = reader._checked(reader._cut(image), found)
    assert agreed[1].confidence == pytest.approx(0.9)
    assert agreed[0].confidence == pytest.approx(0.9 * (1 - 0.9))  # still the club check's doubt
    without = IndexReader(checks=False)  # as `calibrate` reads: the threshold is the network's own
    assert without._club_spade is None and without._rank_check is None
    assert without._checked(without._cut(image), found) == found


@pytest.mark.parametrize(("name", "content"), [("index_net.onnx", None), ("index_net.onnx", b"not a network"),
                                              ("index_gate.onnx", b"\x08\x07garbage")])  # fmt: skip
def test_a_reader_whose_network_cannot_be_loaded_is_refused(tmp_path: Path, name: str, content: bytes | None) -> None:
    """A missing or damaged network is a clear error naming the file, not an ONNX Runtime exception."""
    for shipped in ("index_net.onnx", "index_gate.onnx", "club_spade.onnx", "rank_check.onnx", "index_net.json"):
        (tmp_path / shipped).write_bytes((DEFAULT_MODEL.parent / shipped).read_bytes())
    if content is None:
        (tmp_path / name).unlink()
    else:
        (tmp_path / name).write_bytes(content)
    with pytest.raises(TemplatesError, match=r"cannot load the index (reader|gate)"):
        IndexReader(tmp_path / "index_net.onnx")


@pytest.mark.parametrize(("name", "size", "count"), [("index_net.onnx", 48, 27), ("index_gate.onnx", 16, 111),
                                                     ("club_spade.onnx", 48, 5),
                                                     ("rank_check.onnx", 48, 7)])  # fmt: skip
def test_the_networks_give_the_logits_opencv_gives_for_the_same_files(name: str, size: int, count: int) -> None:
    """ONNX Runtime runs the shipped networks (`load_network`, since 2026-12-07); OpenCV's own ONNX importer, which
    ran them before and which calibrated the shipped threshold, gives the same logits for the same crops: the two
    read the graphs alike, so the threshold and every figure measured before still hold."""
    crops = np.random.default_rng(5).integers(0, 256, (count, size, size, 3), dtype=np.uint8)
    logits = reader_module._forward(load_network(DEFAULT_MODEL.parent / name), crops)
    opencv = cv2.dnn.readNetFromONNX(str(DEFAULT_MODEL.parent / name))
    opencv.setInput(np.ascontiguousarray(crops.transpose(0, 3, 1, 2), dtype=np.float32) / np.float32(255) - 0.5)
    expected = np.asarray(opencv.forward(), dtype=np.float32)
    assert logits.shape == expected.shape == (count, expected.shape[1])
    assert np.allclose(logits, expected, atol=1e-4)
    assert float(np.ptp(logits, axis=0).max()) > 0.01  # crops that differ get logits that differ: not a constant


@pytest.mark.parametrize(("name", "what"), [("club_spade.onnx", "club-against-spade check"),
                                            ("rank_check.onnx", "rank check")])  # fmt: skip
def test_a_reader_whose_check_cannot_be_loaded_is_refused(tmp_path: Path, name: str, what: str) -> None:
    for shipped in ("index_net.onnx", "index_gate.onnx", "club_spade.onnx", "rank_check.onnx", "index_net.json"):
        (tmp_path / shipped).write_bytes((DEFAULT_MODEL.parent / shipped).read_bytes())
    (tmp_path / name).write_bytes(b"not a network")
    with pytest.raises(TemplatesError, match=f"cannot load the {what}"):
        IndexReader(tmp_path / "index_net.onnx")
    (tmp_path / name).unlink()
    with pytest.raises(TemplatesError, match=f"cannot load the {what}"):
        IndexReader(tmp_path / "index_net.onnx")


def test_a_rank_check_that_does_not_name_every_rank_is_refused(tmp_path: Path) -> None:
    """A rank check whose `.json` does not say which rank each of its classes is cannot veto anything: refused when
    the reader loads, not when a card is dealt."""
    for shipped in ("index_net.onnx", "index_gate.onnx", "club_spade.onnx", "rank_check.onnx"):
        (tmp_path / shipped).write_bytes((DEFAULT_MODEL.parent / shipped).read_bytes())
    meta = json.loads(DEFAULT_MODEL.with_suffix(".json").read_text())
    meta["rank_check_classes"] = meta["rank_check_classes"][:-1]
    (tmp_path / "index_net.json").write_text(json.dumps(meta))
    with pytest.raises(TemplatesError, match="rank_check_classes"):
        IndexReader(tmp_path / "index_net.onnx")
    del meta["rank_check_classes"]
    (tmp_path / "index_net.json").write_text(json.dumps(meta))
    with pytest.raises(TemplatesError, match="rank_check_classes"):
        IndexReader(tmp_path / "index_net.onnx")
    IndexReader(tmp_path / "index_net.onnx", checks=False)  # without its checks the reader needs neither
