"""The studio deck enrolled, judged without the test cards: a 2-fold split of its training photos (issue 11).

    .venv/bin/python bench/enrolled_split.py [--frames 80] [--seed-offset 20000]

The webcam-9-to-ace top-down photos of `images/train` (training data of the network; `images/test` is the report)
are split in two by the first byte of the SHA-256 of each photo's name (even, odd). For each half, the deck is
enrolled from that half's labelled cards (`enroll_boxes`, as `studio camera enroll --labels` does) and the studio
frames are rendered from the *other* half's cards exactly as `bench/camera_bench.py` renders them (`reader_studio`:
tilts 0 to 50 degrees, seeds `STUDIO_SEEDS` + the offset + 100 x the enrolled half), read by the shipped network with
those templates, and scored as the benchmark scores them. Every rule of how the templates and the network combine
(`reader._combine`) is judged here first; the held-out `studio_frames_enrolled` of the benchmark is the report
(docs/camera.md, "Touching cards cut apart for the templates, and who is right when the two disagree": 80 frames,
offset 20000). About 2.5 minutes at 80 frames; prints one JSON object, per size and summed over both halves.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import cv2

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # for tests.camera.scenes, the renders the benchmark and the tests use

from bench.camera_bench import REAL, STUDIO_SEEDS, TRAIN_TOP_DOWN, reader_studio  # noqa: E402
from drivers.camera.enroll import LabelledBox, enroll_boxes, read_labels  # noqa: E402
from drivers.camera.reader import DEFAULT_MODEL, IndexReader  # noqa: E402
from tests.camera.scenes import card_images  # noqa: E402

COUNTS = ("right", "confident_wrong", "unsure_right", "unsure_wrong", "not_found")


def half_of(image: str) -> int:
    """Which half a photo is in: the first byte of the SHA-256 of its file name, even (0) or odd (1)."""
    return hashlib.sha256(Path(image).name.encode()).digest()[0] % 2


def training_boxes() -> list[LabelledBox]:
    """The labelled cards of the studio deck's training top-down photos."""
    return [box for box in read_labels(REAL / "labels_rank_suit.csv") if TRAIN_TOP_DOWN in box.image.as_posix()]


def enrolled_split(frames: int, seed_offset: int, model: Path = DEFAULT_MODEL) -> dict[str, Any]:
    boxes = training_boxes()
    totals: dict[str, Counter[str]] = {f"{w}x{h}": Counter() for w, h in STUDIO_SEEDS}
    halves = {}
    for half in (0, 1):
        enrolled = enroll_boxes([box for box in boxes if half_of(box.image.name) == half])
        reader = IndexReader(model, templates=enrolled.templates(f"studio deck, half {half}"))
        cards = card_images(REAL, TRAIN_TOP_DOWN, keep=lambda image, half=half: half_of(image) != half)
        halves[half] = {"enrolled_cards": enrolled.cards, "rendered_cards": len(cards)}
        for (w, h), seed in STUDIO_SEEDS.items():
            scored = reader_studio(reader, cards, (w, h), frames, seed + seed_offset + 100 * half)
            totals[f"{w}x{h}"] += Counter({key: scored[key] for key in ("cards", "right", "confident_wrong")}
                                          | scored["errors"])  # fmt: skip
    return {
        "frames_per_size_and_half": frames,
        "seed_offset": seed_offset,
        "halves": halves,
        **{size: {key: tally[key] for key in ("cards", *COUNTS)}
           | {"read_right": round(tally["right"] / max(tally["cards"], 1), 4)}
           for size, tally in totals.items()},
    }  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=80, help="studio renders per size and half (default 80)")
    parser.add_argument("--seed-offset", type=int, default=20000, help="added to the benchmark's seeds")
    parser.add_argument("--model", type=Path, default=DEFAULT_MODEL, help="the reader's ONNX file (and its .json)")
    args = parser.parse_args()
    cv2.setNumThreads(1)
    print(json.dumps(enrolled_split(args.frames, args.seed_offset, args.model), indent=2))


if __name__ == "__main__":
    main()
