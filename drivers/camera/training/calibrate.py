"""Calibrate the shipped reader's threshold end to end on the VALIDATION photos of `split.csv` (never the test
ones), and write it into `data/index_net.json`. Runs in the studio's own venv (OpenCV and NumPy only):

    .venv/bin/python -m drivers.camera.training.calibrate

Every read of every validation photo (webcam scenes at 1280 x 720, phone photos at 640 x 640) is judged against the
labelled indices: right when it lies on an index of its code, wrong when it lies only on indices of other codes,
invented when it lies on none; so is every read on a labelled index of `SCENES` studio scenes composed from the
validation photos (`compose.py`). The threshold is the lowest lead (the reader's confidence before rescaling) above
every wrong or invented read, plus `MARGIN`: no validation read at or above it is a wrong card. The reads are the
network's without its checks (club against spade, `club_spade.py`; rank, `rank_check.py`), which the reader
applies on top as vetoes.
`--errors N` also prints the N wrong or invented reads with the highest leads, each with its photo or composed
scene: the reads that set the threshold, to look at before judging a candidate network by it.

The gate's cut is set end to end too (`raised_gate`): training cuts it where it keeps 99.5% of the validation index
crops, which lets half of the non-index crops through; the cut is doubled as long as the calibration stays as good
(the same threshold or lower, and no more than `GATE_LOSS` of the sure right reads lost: none since 2026-12-07), so
that the network reads fewer squares that are no index (in cluttered frames, about half as many: the slowest
frames' time, docs/camera.md).

The `.json` also records `halves_risk`: how often a threshold set on a random half of the judged reads lets a wrong
read of the other half through (0.505 for the shipped network, P32; 0.256 for A14 before it). Compare candidates on
it beside their sure reads: a candidate reading more surely on a threshold that few errors pin down may make a
confident error on new data (candidate C48 in docs/camera.md: 0.5, and one confident wrong read held out).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from drivers.camera.image_io import Image, load_image
from drivers.camera.reader import DEFAULT_MODEL, SURE, IndexReader
from drivers.camera.recognize import CardRead
from drivers.camera.training.compose import SHOWN, Piece, roboflow_pieces, scene_with_hidden
from drivers.camera.training.dataset import CODES, labels
from drivers.camera.training.split import read

MARGIN = 0.02
# Composed validation scenes (compose.py) and their seed: the 67 validation photos alone give about 70 reads, too
# few to hold a wrong one (a threshold at FLOOR); 150 scenes give about 600 reads at studio index sizes, with the
# suit confusions of small indices (2S read 2C, AC read AS) that the threshold must stay above (docs/camera.md).
SCENES, SEED = 150, 12
Labelled = tuple[Any, ...]  # (code, centre x, centre y, ...) of a labelled index
Frame = tuple[Image, list[tuple[str, float, float]]]  # a frame and its labelled index centres
HIDDEN = "?"  # the code of an index a composed scene shows in part but leaves unlabelled (`scene_frames`)
FLOOR = 0.3  # never below: a lead of less than this is no lead, whatever the validation photos say
HALVES = 2000  # random halves of the calibration's reads, each calibrating the other (`halves_risk`)
GATE_STEPS = 4  # the gate's cut tried at 2, 4, 8 and 16 times the trained one (below 1)
# A raised cut may cost at most this share of the sure right reads at the trained cut. None since 2026-12-07: the
# networks run by ONNX Runtime take half the time, and the cut that reads as many as the trained one (network P32:
# 0.137, 606 sure reads against 602 at 0.546) costs the zones no median time, only the cluttered frames (p90 +3 ms).
# From 2026-12-06 it was 0.01: a sure read in a hundred for a sixth of a frame's time in cv2.dnn (docs/camera.md).
GATE_LOSS = 0.0


def photo_frames(paths: list[Path]) -> list[Frame]:
    """The photos as the reader is judged on them, with their labelled index centres."""
    frames = []
    for path in paths:
        size = (1280, 720) if path.name.startswith("WIN_") else (640, 640)
        frame = np.asarray(cv2.resize(load_image(path), size, interpolation=cv2.INTER_CUBIC), dtype=np.uint8)
        frames.append((frame, [(CODES[label], square.x, square.y) for label, square in labels(path, *size)]))
    return frames


def scene_frames(paths: list[Path], scenes: int, seed: int) -> list[Frame]:
    """`scenes` studio scenes composed from the photos (`compose.py`; 1280 x 720), with their labelled index
    centres: many more reads than the photos give, at the index sizes and angles of a studio, so that the threshold
    rests on more than a few errors. Composed once (about 0.17 s and 2.8 MB a scene) and judged at every gate cut
    tried."""
    return composed_frames(roboflow_pieces(paths), scenes, seed)


def composed_frames(pieces: list[Piece], scenes: int, seed: int) -> list[Frame]:
    """`scenes` scenes composed from the pieces (`compose.scene_with_hidden`), with their labelled index centres and
    those of the indices they show in part, unlabelled (`HIDDEN`)."""
    rng = np.random.default_rng(seed)
    frames = []
    for _ in range(scenes):
        frame, truths, hidden = scene_with_hidden(pieces, rng, shown=SHOWN)
        labelled = [(CODES[label], square.x, square.y) for label, square in truths]
        frames.append((frame, labelled + [(HIDDEN, square.x, square.y) for square in hidden]))
    return frames


def leads(reader: IndexReader, frames: list[Frame]) -> list[tuple[float, str]]:
    """(lead, "right" | "wrong" | "invented") of every read of the frames."""
    return [judged for frame, truth in frames for judged in judge(reader, frame, truth)]


def lies_on(read: CardRead, truth: Sequence[Labelled]) -> list[Labelled]:
    """The labelled indices (code, centre x, centre y, ...) a read lies on: for each of its index squares (or its box),
    the labelled index nearest the square's centre, if the square holds it. Not every labelled index a square holds:
    a right read of an index touching another's reaches over the other's centre (docs/camera.md, "Figures")."""
    on = []
    for x, y, w, h in read.indices or (read.box,):
        held = [label for label in truth if x <= label[1] <= x + w and y <= label[2] <= y + h]
        if held:
            on.append(min(held, key=lambda label: (label[1] - x - w / 2) ** 2 + (label[2] - y - h / 2) ** 2))
    return on


def judge(reader: IndexReader, frame: object, truth: list[tuple[str, float, float]]) -> list[tuple[float, str]]:
    """(lead, "right" | "wrong" | "invented") of every read of one frame against its labelled index centres."""
    return [(lead, kind) for lead, kind, _, _ in judged_reads(reader, frame, truth)]


def judged_reads(reader: IndexReader, frame: object, truth: list[tuple[str, float, float]]
                 ) -> list[tuple[float, str, CardRead, list[str]]]:  # fmt: skip
    """`judge` with each read and the codes of the labelled indices it lies on."""
    judged = []
    for card in reader.read_frame(frame):
        on = sorted({label[0] for label in lies_on(card, truth)})
        kind = "unjudged" if HIDDEN in on else "right" if card.code in on else "wrong" if on else "invented"
        lead = card.confidence / SURE  # the reader was built with threshold 1: lead = confidence / SURE
        judged.append((lead, kind, card, on))
    return judged


def highest_errors(reader: IndexReader, photos: list[tuple[str, Frame]], scenes: list[Frame], count: int
                   ) -> list[str]:  # fmt: skip
    """The `count` wrong or invented reads of the calibration with the highest leads, highest first, one line each:
    the reads that pin the threshold down, and where to look at them (the photo, or the composed scene's number).
    In the scenes only wrong reads count, as in `scene_leads`."""
    found = []
    named_scenes = [(f"scene {number} (seed {SEED})", frame) for number, frame in enumerate(scenes)]
    for frames, counted in ((photos, ("wrong", "invented")), (named_scenes, ("wrong",))):
        for name, (frame, truth) in frames:
            for lead, kind, card, on in judged_reads(reader, frame, truth):
                if kind in counted:
                    found.append(
                        (lead, f"{lead:.3f} {kind}: {card.code} on {'/'.join(on) or '-'}, {name}, box {card.box}")
                    )
    return [line for _, line in sorted(found, key=lambda item: -item[0])[:count]]


def scene_leads(reader: IndexReader, frames: list[Frame]) -> list[tuple[float, str]]:
    """The same on the composed scenes, where only reads on labelled indices alone count (right or wrong): an index
    half covered by a later piece or cut by the frame's edge is not labelled, and a read of it, alone or grouped with
    a labelled index as a card's other corner, is judged neither right nor wrong (since 2026-12-06; before, a read
    on such an index and a labelled one of another card was judged wrong: docs/camera.md, *candidate P32*)."""
    return [(lead, kind) for lead, kind in leads(reader, frames) if kind not in ("invented", "unjudged")]


def threshold_of(errors: Sequence[float]) -> float:
    """The lead above every wrong or invented read (by `MARGIN`), between `FLOOR` and 0.99."""
    return round(min(0.99, max(FLOOR, max(errors, default=0.0) + MARGIN)), 3)


def halves_risk(judged: list[tuple[float, str]], halves: int = HALVES, seed: int = SEED) -> float:
    """How well the judged reads pin the threshold down: the share of random halves of them whose threshold lets
    a wrong or invented read of the other half through. A threshold resting on a few errors is often beaten by the
    next one: for the shipped network 0.25, for a candidate whose 11 errors lay far apart 0.5 (docs/camera.md,
    "Approaches compared"). Deterministic (seeded)."""
    if not judged:
        return 0.0
    leads = np.array([lead for lead, _ in judged])
    wrong = np.array([kind != "right" for _, kind in judged])
    rng = np.random.default_rng(seed)
    through = 0
    for _ in range(halves):
        half = rng.random(len(judged)) < 0.5
        threshold = threshold_of(leads[half & wrong].tolist())
        through += bool((leads[~half & wrong] >= threshold).any())
    return round(through / halves, 3)


def summarise(judged: list[tuple[float, str]], photos: int, reads_in_photos: int, scenes: int) -> dict[str, Any]:
    """The threshold the judged reads set (above every wrong or invented one), what it keeps, and how well the reads
    pin it down (`halves_risk`)."""
    errors = [lead for lead, kind in judged if kind != "right"]
    threshold = threshold_of(errors)
    right = [lead for lead, kind in judged if kind == "right"]
    return {
        "photos": photos,
        "scenes": scenes,
        "reads": len(judged),
        "reads_in_photos": reads_in_photos,
        "right": len(right),
        "right_at_threshold": sum(1 for lead in right if lead >= threshold),
        "wrong_or_invented": len(errors),
        "threshold": threshold,
        "halves_risk": halves_risk(judged),
    }


def raised_gate(trained: float, calibrated_at: Callable[[float], dict[str, Any]], loss: float = GATE_LOSS
                ) -> tuple[float, dict[str, Any]]:  # fmt: skip
    """The highest of the gate cuts `trained` x 2, 4, ... (up to `GATE_STEPS` doublings, below 1) at which the
    calibration (`calibrated_at(cut)`) stays as good: a threshold no higher than at the cut before, and no fewer sure
    right reads than at the trained cut less `loss` of them (`GATE_LOSS`; before 2026-12-06, as many as at the cut
    before). Returns the cut and its calibration."""
    cut, best = trained, calibrated_at(trained)
    floor = best["right_at_threshold"] * (1 - loss)
    for step in range(1, GATE_STEPS + 1):
        higher = trained * 2**step
        if higher >= 1.0:
            break
        tried = calibrated_at(higher)
        if tried["threshold"] > best["threshold"] or tried["right_at_threshold"] < floor:
            break
        cut, best = higher, tried
    return cut, best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, default=DEFAULT_MODEL, help="the ONNX file (its .json is updated)")
    parser.add_argument("--scenes", type=int, default=SCENES, help="studio scenes composed from the validation photos")
    parser.add_argument(
        "--errors",
        type=int,
        default=0,
        metavar="N",
        help="also print the N wrong or invented reads with the highest leads (what sets the threshold)",
    )
    args = parser.parse_args()
    cv2.setNumThreads(1)
    meta_path = Path(args.model).with_suffix(".json")
    meta = json.loads(meta_path.read_text())
    # without the checks (club against spade, rank): the threshold is the network's own, the checks vetoes on top
    # (calibrated with it, the threshold fell to 0.744 and a held-out render's QC read KC surely: docs/camera.md)
    reader = IndexReader(args.model, checks=False)
    reader.threshold = 1.0  # confidences then come out as SURE x lead
    validation = read(check=True)["validation"]
    photos = photo_frames(validation)
    scenes = scene_frames([path for path in validation if "roboflow" in str(path)], args.scenes, SEED)

    def calibrated_at(gate: float) -> dict[str, Any]:
        reader.gate_threshold = gate
        in_photos = leads(reader, photos)
        return summarise(in_photos + scene_leads(reader, scenes), len(validation), len(in_photos), args.scenes)

    if "gate" in meta:
        # the cut training chose (a network from before 2026-12-04 has only "gate_threshold", that cut)
        trained = float(meta.setdefault("gate_trained_threshold", meta["gate_threshold"]))
        gate, summary = raised_gate(trained, calibrated_at)
        meta["gate_threshold"] = gate
    else:
        summary = calibrated_at(0.0)
    meta["threshold"] = summary["threshold"]
    meta["calibration"] = summary | {"rule": "lowest lead above every wrong read + 0.02"}
    meta_path.write_text(json.dumps(meta, indent=2) + "\n")
    print(json.dumps(meta["calibration"] | {"gate_threshold": meta.get("gate_threshold")}, indent=2))
    if args.errors:
        reader.gate_threshold = float(meta.get("gate_threshold", 0.0))  # the cut chosen, not the last one tried
        named = [(path.name, frame) for path, frame in zip(validation, photos, strict=True)]
        print("\n".join(highest_errors(reader, named, scenes, args.errors)))


if __name__ == "__main__":
    main()
