"""Where the shipped reader loses the cards of the studio renders (issue 11): the stage, card by card.

    .venv/bin/python bench/reader_losses.py [--cards train] [--size 1280x720] [--frames 60] [--model PATH]

Renders the studio frames exactly as `bench/camera_bench.py` does (`studio_scene`, tilts 0 to 50 degrees, seeds
5000+ at 1280 x 720 and 7000+ at 1920 x 1080), reads them with the shipped reader and scores every card as the
benchmark does (`camera_bench._outcome` on `scenes.owners`: right, confident wrong, unsure right, unsure wrong,
not found). Each card *not found* is then traced back:

- `covered`: neither of its printed corners is uppermost (a later card lies on both indices);
- `not_framed`: no square the reader reads frames an uncovered index as training counts a positive
  (`dataset.matches`: centred within a fifth of its side, of its size within a factor 1.45);
- `gate`: some square frames it, but the gate passes none of them (below its cut, or another square of the same
  place found likelier, or beyond `MAX_READ`);
- `read_dropped`: the network reads a framing square, and the vote, the confirming views or the reporting floor
  drop it (no read lies on the card).

An index's place on the card is the median of 307 indices of the studio deck's training cards found by shape
(docs/camera.md, "outline squares at the usual printed place"): centre 0.090 of the width and 0.146 of the height
from the corner, square side 0.251 of the height; the corner opposite too. Judge a change on `--cards train` (the
default: the training photos' cards, never the held-out ones); `--cards test` is for the report. Prints one JSON
object: the counts in all, and by rank (`by_rank`: each rank's outcomes and losses, e.g. `not_found:gate`).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # for tests.camera.scenes, the renders the benchmark and the tests use

from bench.camera_bench import HELD_OUT_TOP_DOWN, REAL, STUDIO_SEEDS, TRAIN_TOP_DOWN, _outcome  # noqa: E402
from drivers.camera.indices import Proposal  # noqa: E402
from drivers.camera.reader import DEFAULT_MODEL, IndexReader  # noqa: E402
from drivers.camera.squares import USUAL_INDEX  # noqa: E402
from drivers.camera.training.dataset import RANKS, matches  # noqa: E402
from tests.camera.scenes import Card, card_images, owners, studio_scene, uppermost_at  # noqa: E402

# where the index is printed: its centre as fractions of the card's width and height from the corner, its square's
# side as a fraction of the card's height (the reader frames an outline's index there when its shape is not found)
INDEX_CENTRE, INDEX_SIDE = USUAL_INDEX[:2], USUAL_INDEX[2]
OUTCOMES = ("right", "confident_wrong", "unsure_right", "unsure_wrong")
LOSSES = ("covered", "not_framed", "gate", "read_dropped")


def printed_indices(card: Card) -> list[Proposal]:
    """The squares of the card's two printed indices in the frame (top-left and bottom-right of the upright card),
    the camera's perspective taken as affine across one card."""
    corners = card.polygon.astype(np.float64)  # clockwise from the top-left of the upright card
    squares = []
    for corner, across, down in ((0, 1, 3), (2, 3, 1)):
        width, height = corners[across] - corners[corner], corners[down] - corners[corner]
        centre = corners[corner] + INDEX_CENTRE[0] * width + INDEX_CENTRE[1] * height
        side = INDEX_SIDE * float(np.hypot(*height))
        squares.append(Proposal(float(centre[0]), float(centre[1]), side))
    return squares


def loss(placed: list[Card], number: int, read: list[tuple[Proposal, bool]]) -> str:
    """Why card `number`, on which no read lies, was lost (`LOSSES`)."""
    squares = printed_indices(placed[number])
    visible = [square for square in squares if uppermost_at(placed, (square.x, square.y)) == number]
    if not visible:
        return "covered"
    framing = [passed for square, passed in read if any(matches(square, index) for index in visible)]
    if not framing:
        return "not_framed"
    return "read_dropped" if any(framing) else "gate"


def losses(reader: IndexReader, cards: list[tuple[str, npt.NDArray[np.uint8]]], size: tuple[int, int],
           frames: int) -> dict[str, Any]:  # fmt: skip
    """Every card of `frames` renders: its outcome, and for each card not found, its loss; in all and by rank."""
    tally: Counter[str] = Counter()
    by_rank: dict[str, Counter[str]] = {}
    for index in range(frames):
        tilt = 50.0 * index / max(frames - 1, 1)
        frame, placed = studio_scene(cards, size, STUDIO_SEEDS[size] + index, tilt)
        reads = reader.read_frame(frame)
        owned = owners(reads, placed)
        squares = reader.squares_read(frame)
        for number, card in enumerate(placed):
            outcome = _outcome(card.code, [read for read, mine in zip(reads, owned, strict=True) if number in mine])
            outcome = outcome if outcome != "not_found" else f"not_found:{loss(placed, number, squares)}"
            tally[outcome] += 1
            by_rank.setdefault(card.code[:-1], Counter())[outcome] += 1
    total = sum(tally.values())
    return {
        "frames": frames,
        "cards": total,
        "outcomes": {key: tally[key] for key in OUTCOMES},
        "not_found": {key: tally[f"not_found:{key}"] for key in LOSSES},
        "read_right": round(tally["right"] / max(total, 1), 4),
        # outcomes and losses of each rank's cards, the ones that happened: a rank the reader loses stands out
        "by_rank": {rank: dict(sorted(by_rank[rank].items())) for rank in sorted(by_rank, key=RANKS.index)},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--cards",
        default="train",
        choices=["train", "test"],
        help="render the training photos' cards (to judge a change) or the held-out ones (to report)",
    )
    parser.add_argument("--size", default="1280x720", choices=["1280x720", "1920x1080"])
    parser.add_argument("--frames", type=int, default=60, help="renders (six cards each)")
    parser.add_argument("--model", type=Path, default=DEFAULT_MODEL, help="the reader's ONNX file (and its .json)")
    args = parser.parse_args()
    cv2.setNumThreads(1)
    width, height = (int(value) for value in args.size.split("x"))
    cards = card_images(REAL, TRAIN_TOP_DOWN if args.cards == "train" else HELD_OUT_TOP_DOWN)
    result = losses(IndexReader(args.model), cards, (width, height), args.frames) | {
        "cards_from": args.cards,
        "size": args.size,
        "command": f"python bench/reader_losses.py --cards {args.cards} --size {args.size} --frames {args.frames}",
    }
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
