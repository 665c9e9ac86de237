"""How many labelled corner indices the camera's proposals frame (issue 11): the finding stage alone, no network.

    .venv/bin/python bench/proposal_recall.py [--scenes 60] [--seed 21] [--size 1280x720] [--sets validation]

Prints one JSON object. An index is *framed* when some square the reader reads (`squares.squares`: the glyph pairs
of `indices.propose` and the corners of card outlines) matches it as training counts a positive (`dataset.matches`:
centred within a fifth of its side, of its size within a factor 1.45): a square the reader can read. Measured on

- `webcam_scenes`: the roboflow webcam frames (`WIN_*`) of the given sets of `split.csv` at 1280 x 720, every
  labelled index (the label errata corrected);
- `composed_scenes`: `--scenes` studio scenes of `--size` composed (`compose.scene`, seed `--seed`) from the roboflow
  photos of those sets: pieces of real photos on cloth of any colour, indices of 24 to 72 pixels at 720 rows (in
  proportion at other sizes), any turn, a camera 0 to 50 degrees off vertical; their index squares are exact (they
  go through the pixels' transforms).

Judge a change on `--sets validation` (the default); `--sets test` is for the report. Each gives the recall overall
and by the index's side in pixels, the recall of the glyph pairs alone, the squares per frame and the median time of
finding them (one thread). No target: the reader cannot read what is not framed, so this bounds every read-right
figure of `camera_bench.py`, and a change to `indices.py` or `squares.py` should raise it without many more squares.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from drivers.camera.indices import Proposal, propose
from drivers.camera.squares import outline_squares
from drivers.camera.training import split
from drivers.camera.training.compose import roboflow_pieces, scene
from drivers.camera.training.dataset import labels, load, matches

SIZES = ((0, 24), (24, 36), (36, 48), (48, 72), (72, 10_000))  # index side buckets, pixels


def bucket(side: float) -> str:
    low, high = next((low, high) for low, high in SIZES if low <= side < high)
    return f"{low}+" if high == 10_000 else f"{low}-{high}"


def recall(frames: list[tuple[np.ndarray, list[Proposal]]]) -> dict[str, Any]:
    """The framed share of the frames' labelled indices, overall and by side."""
    framed: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    pairs_only = 0
    times, counts = [], []
    for frame, truths in frames:
        start = time.perf_counter()
        pairs = propose(frame)
        outlines = [square for square, _ in outline_squares(frame)]
        times.append((time.perf_counter() - start) * 1000)
        counts.append(len(pairs) + len(outlines))
        for truth in truths:
            by_pair = any(matches(square, truth) for square in pairs)
            pairs_only += by_pair
            hit = int(by_pair or any(matches(square, truth) for square in outlines))
            for key in ("all", bucket(truth.side)):
                framed[key][0] += hit
                framed[key][1] += 1
    by_side = {key: {"framed": hit, "indices": total, "recall": round(hit / total, 4)}
               for key, (hit, total) in sorted(framed.items()) if key != "all"}  # fmt: skip
    hit, total = framed["all"]
    return {
        "frames": len(frames),
        "indices": total,
        "recall": round(hit / max(total, 1), 4),
        "recall_glyph_pairs_only": round(pairs_only / max(total, 1), 4),
        "by_side_px": by_side,
        "squares_per_frame": round(statistics.mean(counts), 1) if counts else 0,
        "squares_ms_median": round(statistics.median(times), 2) if times else 0,
    }


def webcam_frames(paths: list[Path]) -> list[tuple[np.ndarray, list[Proposal]]]:
    frames = []
    for path in paths:
        image = load(path)  # 1280 x 720, un-stretched
        frames.append((image, [square for _, square in labels(path, image.shape[1], image.shape[0])]))
    return frames


def composed_frames(paths: list[Path], scenes: int, seed: int,
                    size: tuple[int, int]) -> list[tuple[np.ndarray, list[Proposal]]]:  # fmt: skip
    pieces = roboflow_pieces(paths)
    rng = np.random.default_rng(seed)
    frames = []
    for _ in range(scenes):
        frame, truths = scene(pieces, rng, size)
        frames.append((frame, [square for _, square in truths]))
    return frames


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenes", type=int, default=60, help="composed studio scenes")
    parser.add_argument("--seed", type=int, default=21, help="the composed scenes' seed")
    parser.add_argument("--size", default="1280x720", help="the composed scenes' size, WIDTHxHEIGHT")
    parser.add_argument(
        "--sets",
        nargs="+",
        default=["validation"],
        choices=["train", "validation", "test"],
        help="the sets of split.csv whose photos are used: validation to judge a change, test to report it",
    )
    args = parser.parse_args()
    width, height = (int(value) for value in args.size.lower().split("x"))
    size = (width, height)
    cv2.setNumThreads(1)
    sets = split.read(check=True)
    paths = [path for name in args.sets for path in sets[name] if "roboflow" in str(path)]
    webcam = [path for path in paths if path.name.startswith("WIN_")]
    result = {
        "sets": args.sets,
        "webcam_scenes": recall(webcam_frames(webcam)),
        "composed_scenes": recall(composed_frames(paths, args.scenes, args.seed, size))
        | {"seed": args.seed, "size": args.size},
        "command": f"python bench/proposal_recall.py --scenes {args.scenes} --seed {args.seed} --size {args.size}"
        f" --sets {' '.join(args.sets)}",
    }
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
