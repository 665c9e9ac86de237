"""The shipped recognizer: corner indices found anywhere and read by a small learned classifier, no enrollment.

1. `squares.squares` gives squares where an index may be: glyph pairs from the frame's ink (`indices.propose`: no card
   outline needed, for touching cards and pale tables) and the index corners of every whole card outline found.
2. A tiny gate network drops the squares that are clearly not indices (its cut, the `.json`'s `gate_threshold`, set
   end to end by `training/calibrate.py`) and, of the squares framing one index, keeps the one it finds likeliest
   (`_likeliest_per_index`).
3. Each square is cut out of the full-resolution frame at the network's size (48 x 48) and the network
   (`data/index_net.onnx`, run by ONNX Runtime on one thread: `load_network`; trained by `training/train.py`) gives
   the probability of each of the 52 cards and of "not an index". It has seen indices turned every way, so a 6 and
   a 9 are told apart by where the suit is.
4. Squares framing one index vote (`_vote`; with a gate each index has one square left, without one all vote): their
   card probabilities (after the temperature fitted on the validation crops) are averaged, and the index's
   confidence is the lead of the best card over the runner-up, times how sure the most card-like square is that it
   frames an index at all: readings that disagree are unsure.
5. Each index is read again half a turn round, in its square and in one 1.1 times larger (`_confirm`), and its three
   readings are averaged: its confidence is the lead of its card in the mean, so a view that reads another card
   takes its share away and views that agree make it surer. Then the checks (`_checked`), small networks that each
   read one thing: an index read as a club or a spade is asked of one that tells only those two apart
   (`data/club_spade.onnx`), every index of one that reads only the rank (`data/rank_check.onnx`), and its
   confidence is multiplied by the probability the suit check gives its suit and by the rank check's probability of
   its rank over `RANK_AGREES` (at most 1): vetoes, as the threshold is calibrated without them.
6. The indices of one card are grouped: the same code, 2 to `CARD_SPAN` index sizes apart on a line along a card's
   diagonal (`_opposite_corners`: the two corners of a card, not two cards side by side).
   The card's confidence is its best index's; for a network whose `.json` says `"both_corners": true` (trained by
   the current `training/train.py`, and calibrated so), 1 - (1 - lead1)(1 - lead2) when both corners read it.
7. Confidences are rescaled so that the threshold calibrated end to end on the validation photos and scenes
   (`training/calibrate.py`: no confident wrong or invented card there) is `SURE` = 0.8, the default
   `min_confidence` of `CameraSource`: below it a read is a misread, not a card.

With a deck's templates (`studio camera enroll`), the template recognizer (`recognize.py`) reads the card outlines
too, and the two are combined per card (`_combine`): the same code keeps the higher confidence; on a disagreement
the deck's templates win unless the network is sure of another card (then the read is unsure) or found theirs
implausible on the card's indices (then the network's unsure read stands); a card only one of them reads is kept as
it is.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt
import onnxruntime
from onnxruntime.capi import onnxruntime_pybind11_state as onnx_errors

from drivers.camera.detect import Box, Zone
from drivers.camera.errors import TemplatesError
from drivers.camera.image_io import Image, check_frame
from drivers.camera.indices import Proposal, crop_matrices
from drivers.camera.memory import keep_frame_buffers
from drivers.camera.recognize import CardRead, Recognizer
from drivers.camera.squares import squares
from drivers.camera.templates import Templates

DEFAULT_MODEL = Path(__file__).with_name("data") / "index_net.onnx"
SURE = 0.8  # the rescaled confidence at the calibrated threshold
MIN_PROBABILITY = 0.3  # squares read as a card less likely than this are dropped, not even unsure
# Reads whose confidence (rescaled) is below this are dropped as noise (a pip, a court figure), not reported as
# unsure: an unsure read becomes a misread that suspends the table, and noise must not.
MIN_REPORTED = 0.2
SAME_INDEX = 0.5  # squares whose centres are closer than this many sides frame the same index
CARD_SPAN = 7.0  # two indices of one code at most this many index sizes apart may be the two corners of one card
TWICE = 2.0  # two indices of one code closer than this many sides are one index framed twice
DIAGONAL = (25.0, 75.0)  # and the line between them this many degrees off each index's vertical (40-63 measured)
BATCH = 256  # squares per forward pass
# What ONNX Runtime raises for a file that is missing or not a network it can run (its errors derive from Exception).
LOAD_ERRORS = (OSError, onnx_errors.NoSuchFile, onnx_errors.InvalidProtobuf, onnx_errors.InvalidGraph,
               onnx_errors.InvalidArgument, onnx_errors.NotImplemented, onnx_errors.RuntimeException,
               onnx_errors.Fail)  # fmt: skip
# The other views each index is read in before it is trusted: (turn in degrees, scale of its square). Half a turn, and
# half a turn in a square 1.1 times larger: of the views compared (docs/camera.md, "The reader's rules around the
# network"), these read the most validation indices surely with no confident wrong read on the training cards' renders.
CHECKS = ((180.0, 1.0), (180.0, 1.1))
# The rank check agrees with a read when it gives the read's rank at least this; below, the read's confidence is
# scaled by its chance / RANK_AGREES. On every choice set (the training cards' renders, the new printed cards) this
# read more cards surely than the plain product with no more confident wrong ones; 0.5 let a 2C for a 7C through.
# The club-against-spade check stays a plain product: eased alike, it let a JC for a JS through (docs/camera.md,
# "The rank check agrees at 0.75").
RANK_AGREES = 0.75
MAX_READ = 64  # squares read per frame (per zone set) at most: 64 x about 0.07 ms on one core
# An enrolled deck's templates overrule an unsure network read only with a card the network found at least this
# likely on that card's indices. On renders of the studio deck's training cards (docs/camera.md, "Touching cards cut
# apart for the templates, and who is right when the two disagree") the templates' wrong reads at 1.0 were cards
# the network gave 0.0000 to 0.0025, their right ones 0.0024 to 0.45, all but one above 0.02.
PLAUSIBLE = 0.01


@dataclass(frozen=True, slots=True)
class _Index:
    code: str
    confidence: float
    probability: float
    square: Proposal
    zone: str | None
    # the vote it came from: the 52 cards' probabilities (summing to 1), and how sure its most card-like square is
    # that it frames an index at all (`_confirm` averages them with its other views')
    cards: npt.NDArray[np.float32] = field(default_factory=lambda: np.zeros(0, np.float32))
    mass: float = 1.0


class IndexReader:
    """Reads frames with the shipped network; `templates` (an enrolled deck) confirms or overrides it."""

    def __init__(self, model: Path | str = DEFAULT_MODEL, templates: Templates | None = None,
                 checks: bool = True) -> None:  # fmt: skip
        """`checks=False` reads without the checks (club against spade, rank), as `calibrate` does: the threshold
        is the network's own, so that a check can only make a read less sure, never let one through."""
        path = Path(model)
        try:
            meta = json.loads(path.with_suffix(".json").read_text())
            self._net = load_network(path)
        except (ValueError, *LOAD_ERRORS) as error:
            raise TemplatesError(f"{path}: cannot load the index reader ({error})") from None
        self.classes: list[str] = list(meta["classes"])
        self.size = int(meta["size"])
        self.temperature = float(meta["temperature"])
        self.threshold = float(meta["threshold"])
        self.both_corners = bool(meta.get("both_corners", False))
        self._none = self.classes.index("none")
        self._cards = [code for code in self.classes if code != "none"]  # the order of `_Index.cards`
        # The optional first stage: a tiny network that drops most proposals that are not indices.
        self._gate = None
        self.gate_threshold = 0.0
        if "gate" in meta:
            try:
                self._gate = load_network(path.with_name(meta["gate"]))
            except LOAD_ERRORS as error:
                raise TemplatesError(f"{path}: cannot load the index gate ({error})") from None
            self.gate_threshold = float(meta["gate_threshold"])
            self._gate_size = int(meta.get("gate_size", self.size // 2))
            if self.size % self._gate_size:
                raise TemplatesError(f"{path}: the gate's size {self._gate_size} does not divide {self.size}")
        # The optional checks, second networks that each read one thing about an index (`training/check.py`;
        # `_checked`): the club-against-spade check of the black indices and the rank check of every index.
        self._club_spade = _load_check(path, meta, "club_spade", "club-against-spade check") if checks else None
        self._rank_check = _load_check(path, meta, "rank_check", "rank check") if checks else None
        if self._rank_check is not None and not {code[:-1] for code in self._cards} <= set(self._rank_check.classes):
            raise TemplatesError(f"{path}: the rank check's classes (rank_check_classes) do not name every rank")
        self.templates = Recognizer(templates) if templates is not None else None
        keep_frame_buffers()  # frame-sized arrays reused from frame to frame: a third of a frame's proposal time

    def read_frame(self, frame: object, zones: Sequence[Zone] = ()) -> list[CardRead]:
        """Every card read in the frame (in the zones, if given), sure or not: compare `confidence` with `SURE`."""
        image = check_frame(frame)
        indices = self._indices(image, squares(image, zones))
        cards = _cards(indices, self._rescale, self.both_corners)
        if self.templates is not None:
            cards = _combine(cards, self.templates.read_frame(image, zones), self._likelihood(indices))
        return cards

    def _likelihood(self, indices: list[_Index]) -> Callable[[CardRead, str], float]:
        """How likely the network found `code` on the indices of its card `read`: the mean of their votes."""
        by_box = {_square_box(index.square): index for index in indices}

        def likelihood(read: CardRead, code: str) -> float:
            votes = [by_box[box].cards for box in read.indices if box in by_box and len(by_box[box].cards)]
            if not votes or code not in self._cards:
                return 1.0  # nothing to judge by: no doubt cast
            return float(np.mean([vote[self._cards.index(code)] for vote in votes]))

        return likelihood

    def _indices(self, image: Image, squares: list[tuple[Proposal, str | None]]) -> list[_Index]:
        if not squares:
            return []
        cut = self._cut(image)
        crops = cut([square for square, _ in squares])
        if self._gate is not None:
            passed = self._gated(crops, [square for square, _ in squares])
            crops = crops[passed]
            squares = [square for square, keep in zip(squares, passed.tolist(), strict=True) if keep]
            if not squares:
                return []
        probabilities = _softmax(_forward(self._net, crops), self.temperature)
        # Every index voted is read again, even one whose vote is weak: views that agree may make it sure.
        voted = _vote(probabilities, self._none, self.classes, squares)
        # The checks only ever lower a confidence, so indices already below the floor are not asked (a third of
        # their crops on the held-out webcam scenes in zones).
        return self._reported(self._checked(cut, self._reported(self._confirm(cut, voted))))

    def _reported(self, indices: list[_Index]) -> list[_Index]:
        """The indices at or above the reporting floor (`MIN_REPORTED`, after rescaling); the rest is noise."""
        return [index for index in indices if self._rescale(index.confidence) >= MIN_REPORTED]

    def _gated(self, crops: npt.NDArray[np.uint8], squares: list[Proposal]) -> npt.NDArray[np.bool_]:
        """Which squares the network reads: those the gate passes, the likeliest of each index, `MAX_READ` at most."""
        if self._gate is None:
            return np.ones(len(squares), dtype=bool)
        likely = _softmax(_forward(self._gate, gate_input(crops, self._gate_size)), 1.0)[:, 1]
        passed = _likeliest_per_index(squares, likely, likely >= self.gate_threshold)
        if passed.sum() > MAX_READ:  # bounded work per frame: the squares the gate finds most index-like
            passed &= likely >= np.sort(likely[passed])[-MAX_READ]
        return passed

    def squares_read(self, frame: object, zones: Sequence[Zone] = ()) -> list[tuple[Proposal, bool]]:
        """Every square found in the frame and whether the network reads it (the gate passes it): for measuring
        where a card is lost (`bench/reader_losses.py`), not for reading."""
        image = check_frame(frame)
        found = [square for square, _ in squares(image, zones)]
        if not found:
            return []
        return list(zip(found, self._gated(self._crops(image, found), found).tolist(), strict=True))

    def _confirm(self, cut: _Cut, found: list[_Index]) -> list[_Index]:
        """Each index read again in the `CHECKS` views of its square (half a turn, twice), and its readings averaged
        (test-time augmentation): its vote's card probabilities and each view's (as shares of the view's card mass).
        Its confidence is the lead of its card over the runner-up in that mean, times the mean of how sure each
        reading is that it frames an index: a view that reads another card takes its share of the lead away; a view
        that reads the card clearly lifts an index read weakly. (Until 2026-12-04 the least lead over the views: one
        view reading another card dropped the index even as a misread; docs/camera.md.)"""
        if not found:
            return found
        squares = [index.square for index in found]
        crops = np.stack([cut(squares, turn, scale) for turn, scale in CHECKS], axis=1)
        probabilities = _softmax(_forward(self._net, crops.reshape(-1, *crops.shape[2:])),
                                 self.temperature)  # fmt: skip
        probabilities = probabilities.reshape(len(found), len(CHECKS), -1)
        index_mass = 1.0 - probabilities[:, :, self._none]
        views = np.delete(probabilities, self._none, axis=2)
        views /= np.maximum(views.sum(axis=2, keepdims=True), 1e-6)
        return [replace(index, confidence=_averaged(index, self._cards.index(index.code), cards, mass))
                for index, cards, mass in zip(found, views, index_mass, strict=True)]  # fmt: skip

    def _checked(self, cut: _Cut, found: list[_Index]) -> list[_Index]:
        """Each index's confidence times what each check gives its read, the mean of two views (its square as framed
        and half a turn round, cut at the check's own size). The club-against-spade check is asked about the indices
        read as a club or a spade, which the network confuses more than any other cards, and on decks it never saw
        surely: times its probability of the suit read. The rank check about every index, as on new decks most sure
        wrong reads are a wrong rank: times its probability of the rank read over `RANK_AGREES`, at most 1.
        The threshold is calibrated without the checks, so that they are vetoes: they can only make a read less sure
        (docs/camera.md, "The club-against-spade check" and "The rank check")."""
        if not found:
            return found
        squares = [index.square for index in found]

        def crops(size: int) -> npt.NDArray[np.uint8]:
            """Every index's two views at `size`, 2 x N x size x size x 3."""
            return np.stack([cut(squares, size=size), cut(squares, 180.0, size=size)])

        agree = np.ones(len(found))
        black = np.array([index.code[-1] in "CS" for index in found])
        if self._club_spade is not None and black.any():
            spade = self._club_spade.chances(crops(self._club_spade.size)[:, black])[:, 1]
            read_spade = np.array([index.code[-1] == "S" for index in found])[black]
            agree[black] *= np.where(read_spade, spade, 1.0 - spade)
        if self._rank_check is not None:
            ranks = self._rank_check.chances(crops(self._rank_check.size))
            read = [self._rank_check.classes.index(index.code[:-1]) for index in found]
            agree *= np.minimum(1.0, ranks[np.arange(len(found)), read] / RANK_AGREES)
        return [replace(index, confidence=index.confidence * chance)
                for index, chance in zip(found, agree.tolist(), strict=True)]  # fmt: skip

    def _crops(self, image: Image, squares: list[Proposal], turn: float = 0.0, scale: float = 1.0,
               size: int | None = None) -> npt.NDArray[np.uint8]:  # fmt: skip
        """The squares cut out of the full-resolution frame at `size` x `size` (the network's, unless given; turned
        by `turn` more, `scale` times larger), as N x size x size x 3."""
        size = size or self.size
        crops = np.empty((len(squares), size, size, 3), dtype=np.uint8)
        for row, matrix in enumerate(crop_matrices(squares, size, turn, scale)):
            cv2.warpAffine(image, matrix, (size, size), crops[row], flags=cv2.INTER_AREA,
                           borderMode=cv2.BORDER_REPLICATE)  # fmt: skip
        return crops

    def _cut(self, image: Image) -> _Cut:
        """The frame's crops, each cut once by `_crops`."""
        return _Cut(image, self._crops, self.size)

    def _rescale(self, margin: float) -> float:
        """Margin in [0, 1] -> confidence, `threshold` -> `SURE`, linear on each side."""
        if margin < self.threshold:
            return round(SURE * margin / self.threshold, 4)
        return round(SURE + (1 - SURE) * (margin - self.threshold) / max(1 - self.threshold, 1e-6), 4)


class _Cut:
    """One frame's crops, each square's view (turn, scale, size) cut once however often it is asked for: the checks
    read every index as framed and half a turn round at the network's size, views the gate and `_confirm` have cut
    already: 23 of the 149 crops a zones frame of the held-out webcam scenes cut before (2026-12-07)."""

    def __init__(self, image: Image, cut: Callable[..., npt.NDArray[np.uint8]], size: int) -> None:
        self._image, self._cut, self._size = image, cut, size
        self._kept: dict[tuple[Proposal, float, float, int], npt.NDArray[np.uint8]] = {}

    def __call__(self, squares: list[Proposal], turn: float = 0.0, scale: float = 1.0,
                 size: int | None = None) -> npt.NDArray[np.uint8]:  # fmt: skip
        """N x size x size x 3, as `IndexReader._crops` (the network's size unless given)."""
        size = size or self._size
        if not squares:
            return np.empty((0, size, size, 3), dtype=np.uint8)
        keys = [(square, turn, scale, size) for square in squares]
        missing = [key for key in keys if key not in self._kept]
        if missing:
            fresh = self._cut(self._image, [key[0] for key in missing], turn, scale, size)
            self._kept.update(zip(missing, fresh, strict=True))
            if len(missing) == len(keys):
                return fresh  # every view cut now, in order: no copy
        return np.stack([self._kept[key] for key in keys])


def _averaged(index: _Index, code: int, views: npt.NDArray[np.float32], views_mass: npt.NDArray[np.float32]) -> float:
    """The confidence of `index` (card number `code`) with its other views: the lead of its card over the runner-up
    in the mean of its vote and the views' card probabilities (each row summing to 1), times the mean of their index
    masses; never below 0."""
    mean = (index.cards + views.sum(axis=0)) / (1 + len(views))
    others = mean.copy()
    others[code] = -np.inf  # the runner-up: the best of the other cards
    lead = float(mean[code] - others.max())
    return max(0.0, lead * (index.mass + float(views_mass.sum())) / (1 + len(views)))


@dataclass(frozen=True, slots=True)
class _Check:
    """One of the reader's checks: its network, the side of its crops and the names of its classes."""

    net: onnxruntime.InferenceSession
    size: int
    classes: tuple[str, ...]

    def chances(self, views: npt.NDArray[np.uint8]) -> npt.NDArray[np.float32]:
        """Each index's class probabilities, the mean over its views (V x N x size x size x 3 -> N x classes)."""
        probabilities = _softmax(_forward(self.net, views.reshape(-1, *views.shape[2:])), 1.0)
        return np.asarray(probabilities.reshape(*views.shape[:2], -1).mean(axis=0), dtype=np.float32)


def _load_check(path: Path, meta: dict[str, Any], key: str, what: str) -> _Check | None:
    """The check the reader's `.json` names under `key`, if it names one; a file that cannot be loaded is refused."""
    if key not in meta:
        return None
    try:
        net = load_network(path.with_name(meta[key]))
    except LOAD_ERRORS as error:
        raise TemplatesError(f"{path}: cannot load the {what} ({error})") from None
    return _Check(net, int(meta.get(f"{key}_size", meta["size"])), tuple(meta.get(f"{key}_classes", ())))


def load_network(path: Path) -> onnxruntime.InferenceSession:
    """One of the reader's networks, run by ONNX Runtime on the calling thread alone: a camera reads on one core, as the
    benchmark times it (a studio host runs a camera per core). Until 2026-12-07 `cv2.dnn` ran them: the same logits
    within 1e-5, in about half the time (docs/camera.md, "ONNX Runtime in place of cv2.dnn")."""
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.log_severity_level = 3  # errors only: its warnings are not the studio's
    return onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


def _forward(net: onnxruntime.InferenceSession, crops: npt.NDArray[np.uint8] | npt.NDArray[np.float32]
             ) -> npt.NDArray[np.float32]:  # fmt: skip
    """Logits for N x H x W x 3 crops (0..255, BGR), fed as the network was trained: N x 3 x H x W in -0.5..0.5.
    Scaled straight into the network's layout in one pass: a float copy, then a transposed one, took five times as
    long (0.7 ms for a frame's 66 gate crops)."""
    blob = np.empty((len(crops), 3, *crops.shape[1:3]), dtype=np.float32)
    np.multiply(crops.transpose(0, 3, 1, 2), np.float32(1 / 255.0), out=blob)
    blob -= np.float32(0.5)
    name = net.get_inputs()[0].name
    logits = [np.asarray(net.run(None, {name: blob[start : start + BATCH]})[0], dtype=np.float32)
              for start in range(0, len(blob), BATCH)]  # fmt: skip
    return np.concatenate(logits)


def gate_input(crops: npt.NDArray[np.uint8], gate_size: int) -> npt.NDArray[np.float32]:
    """The reader's crops (N x size x size x 3) shrunk to what the gate reads: the mean of each k x k block, k = size
    / `gate_size` (training shrinks its crops with this too). By OpenCV's area resize of the crops stacked one above
    the other (blocks never straddle two crops: k divides size), the same means as summing the blocks in NumPy in a
    third of its time."""
    count, size = crops.shape[:2]
    stacked = crops.reshape(count * size, size, 3).astype(np.float32)
    small = cv2.resize(stacked, (gate_size, count * gate_size), interpolation=cv2.INTER_AREA)
    return np.asarray(small, dtype=np.float32).reshape(count, gate_size, gate_size, 3)


def _softmax(logits: npt.NDArray[np.float32], temperature: float) -> npt.NDArray[np.float32]:
    z = logits / temperature
    z -= z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return np.asarray(e / e.sum(axis=1, keepdims=True), dtype=np.float32)


def _vote(probabilities: npt.NDArray[np.float32], none: int, classes: list[str],
          squares: list[tuple[Proposal, str | None]]) -> list[_Index]:  # fmt: skip
    """One reading per index. The squares framing the same place (centres within `SAME_INDEX` sides of the most
    card-like one) vote: their card probabilities are averaged, each weighted by how much it says "an index" at
    all. The index's confidence is the lead of the best card over the runner-up in that vote, times how sure the
    most card-like square is that it is an index: squares that disagree make it unsure."""
    cards = np.delete(probabilities, none, axis=1)
    labels = [label for k, label in enumerate(classes) if k != none]
    index_mass = 1.0 - probabilities[:, none]
    best = cards.max(axis=1)
    free = np.ones(len(squares), dtype=bool)
    near = _near_pairs([square for square, _ in squares], SAME_INDEX)
    found: list[_Index] = []
    for seed in np.argsort(-best).tolist():
        if not free[seed] or best[seed] < MIN_PROBABILITY:
            continue
        square, zone = squares[seed]
        group = np.flatnonzero(free & near[seed])
        free[group] = False
        weights = index_mass[group]
        vote = (cards[group] * weights[:, None]).sum(axis=0) / max(float(weights.sum()), 1e-6)
        vote = vote / max(float(vote.sum()), 1e-6)
        second, first = np.argsort(vote)[-2:]
        mass = float(index_mass[seed])
        margin = float(vote[first] - vote[second]) * mass
        found.append(_Index(labels[first], margin, float(vote[first]), square, zone, vote.astype(np.float32), mass))
    return found


def _likeliest_per_index(squares: list[Proposal], likely: npt.NDArray[np.float32], passed: npt.NDArray[np.bool_]
                         ) -> npt.NDArray[np.bool_]:  # fmt: skip
    """Of the squares that passed the gate, the one the gate finds likeliest among those framing the same index
    (centres within `SAME_INDEX` sides of it). An index is proposed several times (glyph pairs at two scales, its
    card's outline): reading only the likeliest square read more indices surely than averaging the readings of all
    of them (on the validation photos and scenes, and held out: docs/camera.md, "The reader's rules around the
    network"), and the network reads half as many squares. No two squares kept are near each other."""
    keep = np.zeros(len(squares), dtype=bool)
    candidates = np.flatnonzero(passed)  # only squares the gate passed are ever kept or keep another out
    candidates = candidates[np.argsort(-likely[candidates], kind="stable")]
    near = _near_pairs([squares[k] for k in candidates.tolist()], SAME_INDEX)
    free = np.ones(len(candidates), dtype=bool)
    for row, seed in enumerate(candidates.tolist()):
        if free[row]:
            keep[seed] = True
            free &= ~near[row]
    return keep


def _near(a: Proposal, b: Proposal, sides: float) -> bool:
    return bool(np.hypot(a.x - b.x, a.y - b.y) < sides * max(a.side, b.side))


def _near_pairs(squares: list[Proposal], sides: float) -> npt.NDArray[np.bool_]:
    """`_near` of every pair of squares at once, as an N x N matrix."""
    x, y, side = np.array([(s.x, s.y, s.side) for s in squares], dtype=np.float64).reshape(-1, 3).T
    distance = np.hypot(x[:, None] - x[None, :], y[:, None] - y[None, :])
    return np.asarray(distance < sides * np.maximum(side[:, None], side[None, :]))


def _cards(indices: list[_Index], rescale: Callable[[float], float], both_corners: bool = False) -> list[CardRead]:
    """Indices grouped into cards: the same code, placed as the two corners of a card (`_opposite_corners`). An index's
    confidence is its lead (before `rescale`); a card's is its best index's or, with `both_corners`, when both its
    corners read the same card, 1 - (1 - lead1)(1 - lead2): two corners that agree are surer than either (the
    threshold of such a network is calibrated on these card confidences)."""
    groups: list[list[_Index]] = []
    for index in sorted(indices, key=lambda i: -rescale(i.confidence)):
        if any(g[0].code == index.code and _near(index.square, other.square, TWICE) for g in groups for other in g):
            continue  # one index framed twice: its surer reading stands
        group = next((g for g in groups if g[0].code == index.code and len(g) < 2
                      and _opposite_corners(index.square, g[0].square)), None)  # fmt: skip
        if group is None:
            groups.append([index])
        else:
            group.append(index)
    return [_card(group, rescale, both_corners) for group in groups]


def _opposite_corners(a: Proposal, b: Proposal) -> bool:
    """Whether two index squares may be the two printed corners of one card: `TWICE` to `CARD_SPAN` index sides apart
    (closer, they frame one index twice), on a line along the card's diagonal, `DIAGONAL` degrees off each index's
    vertical. Two cards side by side, or one above the other, have their indices on a line square to the indices.
    The range was set on renders of the training cards at 0-50° off vertical; on renders of the held-out cards
    (docs/camera.md) 128 of 129 pairs of one card's corners pass it (the other frames one index twice), and none of
    363 pairs of neighbouring cards' indices."""
    dx, dy = b.x - a.x, b.y - a.y
    if not TWICE * max(a.side, b.side) <= np.hypot(dx, dy) < CARD_SPAN * max(a.side, b.side):
        return False
    line = np.degrees(np.arctan2(dy, dx))
    off = [(line + square.angle) % 180.0 for square in (a, b)]
    return all(DIAGONAL[0] <= min(angle, 180.0 - angle) <= DIAGONAL[1] for angle in off)


def _card(group: list[_Index], rescale: Callable[[float], float], both_corners: bool) -> CardRead:
    best = group[0]
    lead = best.confidence
    if both_corners:
        lead = 1.0 - float(np.prod([1.0 - min(index.confidence, 1.0) for index in group]))
    confidence = rescale(lead)
    x0 = min(i.square.x - i.square.side / 2 for i in group)
    y0 = min(i.square.y - i.square.side / 2 for i in group)
    x1 = max(i.square.x + i.square.side / 2 for i in group)
    y1 = max(i.square.y + i.square.side / 2 for i in group)
    box: Box = (round(x0), round(y0), round(x1 - x0), round(y1 - y0))
    quad = np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]], dtype=np.float32)
    indices = tuple(_square_box(index.square) for index in group)
    return CardRead(best.code[:-1], best.code[-1], confidence, confidence, confidence, box, quad, best.zone,
                    indices)  # fmt: skip


def _square_box(square: Proposal) -> Box:
    half = square.side / 2
    return (round(square.x - half), round(square.y - half), round(square.side), round(square.side))


def _inside(read: CardRead, box: Box) -> bool:
    x, y = read.box[0] + read.box[2] / 2, read.box[1] + read.box[3] / 2
    return box[0] <= x <= box[0] + box[2] and box[1] <= y <= box[1] + box[3]


def _combine(net: list[CardRead], enrolled: list[CardRead],
             likelihood: Callable[[CardRead, str], float] = lambda read, code: 1.0) -> list[CardRead]:  # fmt: skip
    """The network's cards with the enrolled deck's. A template read of the card an index lies on confirms it (the
    higher confidence) or overrides it: the deck's own templates are trusted over the network on that deck, unless
    the network is sure of another card, when the read is unsure (the surer, less the other's confidence), or finds
    the templates' card implausible (`likelihood` of it on the card's indices below `PLAUSIBLE`), when the network's
    unsure read stands. A template read of the rank alone (suit not told: no card) never replaces the network's full
    code: it confirms the network's rank, or doubts it by its rank's confidence. Cards only one of them reads are
    kept as they are."""
    result: list[CardRead] = []
    used: set[int] = set()
    for read in net:
        match = next((k for k, other in enumerate(enrolled) if k not in used and _inside(read, other.box)), None)
        if match is None:
            result.append(read)
            continue
        used.add(match)
        other = enrolled[match]
        if other.code == read.code:
            best = read if read.confidence >= other.confidence else replace(other, zone=read.zone)
            result.append(replace(best, indices=read.indices))
        elif other.suit is None:
            doubt = 0.0 if other.rank == read.rank else other.rank_confidence
            sure = round(max(0.0, read.confidence - doubt), 4)
            result.append(replace(read, confidence=sure, rank_confidence=min(read.rank_confidence, sure)))
        elif read.confidence < SURE and likelihood(read, other.code) < PLAUSIBLE:
            result.append(read)
        elif read.confidence < SURE:
            result.append(replace(other, zone=read.zone))
        else:
            surer, weaker = (read, other) if read.confidence >= other.confidence else (other, read)
            sure = round(max(0.0, surer.confidence - weaker.confidence), 4)
            result.append(replace(surer, confidence=sure, rank_confidence=sure, suit_confidence=sure))
    return result + [other for k, other in enumerate(enrolled) if k not in used]
