"""How much a still table's frames differ, and how much a changed card changes them (the camera's `StillTable`).

    .venv/bin/python bench/still_levels.py [--sets validation] [--scenes 30] [--seed 3]

`StillTable` (drivers/camera/still.py) reads a frame again only when some 8 x 8 pixel cell of its zones moved by more
than `CHANGED` grey levels since the frame last read. This measures both sides of that level at 1280 x 720, whole
frames compared, on the roboflow webcam scenes (`WIN_*`) of the given sets of `split.csv` and on `--scenes` studio
scenes composed from those sets' photos (`compose.scene`, as `proposal_recall.py` composes them, seeded by `--seed`:
indices of 24 to 72 pixels at 720 rows, any turn, 0 to 50 degrees off vertical):

- `noise_largest_cell_change`: two frames of one still scene, each with its own sensor noise and JPEG compression
  (`render.filmed`), for each camera of `CAMERAS`: the largest cell change over the scenes (at or below the level,
  the still frames are not read again);
- `index_swapped`: each labelled corner index replaced by the next index of its scene that shows another card
  (`render.index_swapped`: a card changed under the camera), both frames at the least noise (a change must show
  without noise's help): the five smallest largest-cell changes and the sides of those indices, and how many the
  level does not see (`not_seen`: of indices of any side, and of 20 pixels or more, the smallest the reader reads).

Judge the level on `--sets validation` (the default); `--sets test` is for the report. Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # for tests.camera.render, the webcam stream the tests and the benchmark use

from drivers.camera.indices import Proposal  # noqa: E402
from drivers.camera.still import CHANGED, cells, largest_change  # noqa: E402
from drivers.camera.training import split  # noqa: E402
from drivers.camera.training.compose import roboflow_pieces, scene  # noqa: E402
from drivers.camera.training.dataset import labels, load  # noqa: E402
from tests.camera.render import filmed, index_swapped  # noqa: E402

# (sensor noise sigma, JPEG quality): a good camera's stream to a poor webcam's
CAMERAS = ((2.0, 90), (4.0, 80), (6.0, 70), (8.0, 60))


def change(a: np.ndarray, b: np.ndarray) -> int:
    """The largest change of an 8 x 8 cell's mean between two whole frames, as `StillTable` compares them."""
    return largest_change(cells(a), cells(b))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", nargs="+", default=["validation"], choices=["train", "validation", "test"])
    parser.add_argument("--scenes", type=int, default=30, help="composed studio scenes")
    parser.add_argument("--seed", type=int, default=3, help="the composed scenes' and the noise's seed")
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    sets = split.read(check=True)
    paths = sorted(path for name in args.sets for path in sets[name] if "roboflow" in str(path))
    webcam = [(load(path), path) for path in paths if path.name.startswith("WIN_")]  # 1280 x 720, un-stretched
    pieces = roboflow_pieces(paths)
    composing = np.random.default_rng(args.seed)
    frames = {
        "webcam_scenes": [(image, labels(path, image.shape[1], image.shape[0])) for image, path in webcam],
        "composed_scenes": [scene(pieces, composing, (1280, 720)) for _ in range(args.scenes)],
    }
    print(json.dumps({
        "sets": args.sets, "size": "1280x720", "level": CHANGED,
        **{name: levels(found, rng) for name, found in frames.items()},
        "command": f"python bench/still_levels.py --sets {' '.join(args.sets)} --scenes {args.scenes}"
                   f" --seed {args.seed}",
    }, indent=1))  # fmt: skip


def levels(frames: list[tuple[np.ndarray, list[tuple[int, Proposal]]]], rng: np.random.Generator) -> dict[str, Any]:
    """Both sides of the level on these frames and their labelled indices."""
    noise = {f"sigma {sigma:g}, quality {quality}": 0 for sigma, quality in CAMERAS}
    swaps = []
    for frame, indices in frames:
        for (sigma, quality), key in zip(CAMERAS, noise, strict=True):
            noise[key] = max(noise[key], change(filmed(frame, rng, sigma, quality), filmed(frame, rng, sigma, quality)))
        still = filmed(frame, rng, *CAMERAS[0])
        for (code, square), (other_code, other) in zip(indices, indices[1:] + indices[:1], strict=True):
            if code == other_code:
                continue  # the same card's other corner, or the same card twice: nothing the reader must see
            at = (square.x, square.y, square.side)
            changed = index_swapped(frame, at, (other.x, other.y, other.side))
            if changed is not None:
                swaps.append((change(still, filmed(changed, rng, *CAMERAS[0])), round(at[2])))
    swaps.sort()
    return {
        "frames": len(frames),
        "noise_largest_cell_change": noise,
        "index_swapped": {"swaps": len(swaps), "smallest_changes": [change for change, _ in swaps[:5]],
                          "their_index_sides_px": [side for _, side in swaps[:5]],
                          "index_sides_px": [swaps and min(side for _, side in swaps),
                                             swaps and max(side for _, side in swaps)],
                          # changes the level lets pass (caught at the next `reread_every`), of indices of any
                          # side, and of 20 pixels or more (the smallest the reader reads at all: docs/camera.md)
                          "not_seen": sum(change <= CHANGED for change, _ in swaps),
                          "not_seen_20px_or_more": sum(change <= CHANGED and side >= 20 for change, side in swaps)},
    }  # fmt: skip


if __name__ == "__main__":
    main()
