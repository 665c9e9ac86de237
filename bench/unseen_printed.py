"""Is the shipped reader's confidence honest on cards it never saw? (issue 11, point 6) Scenes of printed cards the
network's training did not draw, judged read by read.

    .venv/bin/python bench/unseen_printed.py [--scenes 300] [--seed 99] [--model PATH] [--also PATH ...]
    .venv/bin/python bench/unseen_printed.py --designs new [--scenes 300] [--seed 99] [--model PATH]

The training lays `printed` cards of each code among its scenes' pieces, each drawn from one of 22 printed deck
designs (`training/printed.py`; the count and the seed are in the network's `.json`). Every other card of those
decks whose indices are found is one the network never saw, printed in a design it learned from other cards:
`printed.unseen_pieces` (619 cards for the shipped network). `--scenes` studio scenes are composed from them as
`calibrate` composes its validation scenes (`calibrate.composed_frames`: cloth, overlap, a camera up to 50 degrees
off vertical, glare, blur, noise; 1280 x 720), and every read lying on a labelled index is judged right or wrong
as `calibrate` judges (`calibrate.lies_on`). Reported: the reads, the right ones, those at or above the network's
threshold (*sure*), every confident wrong read with its code and the card under it, and the threshold these scenes
alone would set by `calibrate`'s rule. A measure of how far the threshold calibrated on the validation photos holds
on new cards, and a check of choices made on the validation sets (docs/camera.md, "Figures"); no threshold is set on
it. Networks trained on different draws (another `--printed` count or seed) left out different cards: `--also`
names the others, and all are then measured on the cards none of them drew.

`--designs new` measures the same on whole deck designs no training used (`training/unseen_designs.py`: Adrian
Kennard's and Chris Aguilar's, all 52 cards of each, fetched once from the npm registry and checked by SHA-256), each
design in its own `--scenes` scenes: how far the reader and its threshold hold on a deck it never saw.

Needs the printed decks' renders in `artifacts/printed-decks/` (`scripts/train-camera --printed 8` installs the
Debian packages and renders them), or for `--designs new` `rsvg-convert` (librsvg2-bin) and the npm registry once;
about 47 s for 300 scenes on one core (90 s a design of `--designs new`, whose cards are all in view).
Prints one JSON object.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from pathlib import Path
from typing import Any

import cv2

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from drivers.camera.reader import DEFAULT_MODEL, SURE, IndexReader  # noqa: E402
from drivers.camera.training.calibrate import HIDDEN, Frame, composed_frames, lies_on, threshold_of  # noqa: E402
from drivers.camera.training.printed import unseen_pieces  # noqa: E402
from drivers.camera.training.train import PRINTED_CACHE, printed_draw_seed  # noqa: E402
from drivers.camera.training.unseen_designs import DESIGNS, design_pieces  # noqa: E402


def judged(reader: IndexReader, frames: list[Frame]) -> list[dict[str, Any]]:
    """Every read lying on labelled indices only: its lead (the confidence before rescaling), its code, the codes it
    lies on, how many of its corners were read, the side of its largest index square (pixels), and the scene. Reads
    on an unlabelled index or on none are left out, as `calibrate` leaves them. The reader is built with threshold 1,
    as `calibrate` builds it."""
    reads = []
    for number, (frame, truth) in enumerate(frames):
        for card in reader.read_frame(frame):
            under = sorted({label[0] for label in lies_on(card, truth)})
            if under and HIDDEN not in under:
                side = card.index_side or card.box[2]  # the reader's reads all have indices
                reads.append({"lead": card.confidence / SURE, "code": card.code, "on": under, "scene": number,
                              "corners": len(card.indices), "side": side})  # fmt: skip
    return reads


SIDES = (24, 32, 40, 52)  # bands of index squares' sides (px) the figures are split by: 40 px tall is about 52


def by_side(reads: list[dict[str, Any]], threshold: float) -> dict[str, dict[str, int]]:
    """The reads' sure right and confident wrong ones in bands of their largest index square's side: where on the
    table (how large its indices are filmed) a sure read can be trusted."""
    edges = (0, *SIDES, None)
    bands = {}
    for low, high in itertools.pairwise(edges):
        name = f"{low}-{high}" if high else f"{low}+"
        band = [read for read in reads if read["side"] >= low and (high is None or read["side"] < high)]
        sure = [read for read in band if read["lead"] >= threshold]
        right = sum(1 for read in sure if read["code"] in read["on"])
        bands[name] = {"reads": len(band), "sure_right": right, "confident_wrong": len(sure) - right}
    return bands


def summary(reads: list[dict[str, Any]], threshold: float) -> dict[str, Any]:
    wrong = [read for read in reads if read["code"] not in read["on"]]
    confident = sorted((read for read in wrong if read["lead"] >= threshold), key=lambda read: -read["lead"])
    return {
        "reads": len(reads),
        "right": len(reads) - len(wrong),
        "sure_right": sum(1 for read in reads if read["code"] in read["on"] and read["lead"] >= threshold),
        "confident_wrong": len(confident),
        "confident_wrong_reads": [
            {
                "read": read["code"],
                "on": read["on"],
                "lead": round(read["lead"], 3),
                "corners": read["corners"],
                "side": read["side"],
                "scene": read["scene"],
            }
            for read in confident
        ],
        "highest_wrong_leads": sorted((round(read["lead"], 3) for read in wrong), reverse=True)[:5],
        "by_side_px": by_side(reads, threshold),
        "threshold": threshold,
        "threshold_these_scenes_set": threshold_of([read["lead"] for read in wrong]),
    }


def _printed_draw(model: Path) -> tuple[int, int]:
    """The printed cards drawn per code and the draw's seed of the training that made `model` (its `.json`)."""
    meta = json.loads(model.with_suffix(".json").read_text())
    if not meta.get("printed"):
        sys.exit(f"{model}: trained without printed decks: every printed card is unseen, none is 'left over'")
    return int(meta["printed"]), printed_draw_seed(int(meta["seed"]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenes", type=int, default=300)
    parser.add_argument("--seed", type=int, default=99, help="of the scenes (the cards are the training's leftovers)")
    parser.add_argument("--model", type=Path, default=DEFAULT_MODEL, help="the reader's ONNX file (and its .json)")
    also = "another network's ONNX file: leave out the cards its training drew too (repeatable)"
    parser.add_argument("--also", type=Path, action="append", default=[], metavar="MODEL", help=also)
    designs = "cards of the training's designs it did not draw (training), or designs no training used (new)"
    parser.add_argument("--designs", choices=("training", "new"), default="training", help=designs)
    args = parser.parse_args()
    cv2.setNumThreads(1)
    if args.designs == "new":
        print(json.dumps(new_designs(args.model, args.scenes, args.seed), indent=1))
        return
    draw, *others = (_printed_draw(model) for model in (args.model, *args.also))
    pieces = unseen_pieces(*draw, PRINTED_CACHE, also=others)
    reader = IndexReader(args.model)
    threshold, reader.threshold = reader.threshold, 1.0  # confidences then come out as SURE x lead
    result = {"cards": len(pieces), "scenes": args.scenes} | summary(
        judged(reader, composed_frames(pieces, args.scenes, args.seed)), threshold
    )
    result["command"] = f"python bench/unseen_printed.py --scenes {args.scenes} --seed {args.seed}" + "".join(
        f" --also {model}" for model in args.also
    )
    print(json.dumps(result, indent=1))


def new_designs(model: Path, scenes: int, seed: int) -> dict[str, Any]:
    """Each design no training used, measured alone in its own scenes, and the designs together."""
    reader = IndexReader(model)
    threshold, reader.threshold = reader.threshold, 1.0
    result: dict[str, Any] = {}
    every: list[dict[str, Any]] = []
    for name in DESIGNS:
        pieces = design_pieces([name])
        reads = judged(reader, composed_frames(pieces, scenes, seed))
        every += reads
        result[name] = {"cards": len(pieces), "scenes": scenes} | summary(reads, threshold)
    result["all"] = {key: value for key, value in summary(every, threshold).items() if key != "confident_wrong_reads"}
    result["command"] = f"python bench/unseen_printed.py --designs new --scenes {scenes} --seed {seed}"
    return result


if __name__ == "__main__":
    main()
