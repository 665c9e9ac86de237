"""Train the reader's rank check and add it to a trained reader (run in the training venv).

    .venv-train/bin/python -m drivers.camera.training.rank_check [--model PATH] [--size 48]

A second opinion on the rank alone: 13 classes (2 to A), learned from every index crop of the reader's own training data
(`check.train_check`), cut at 48 x 48 (`SIZE`). On printed decks the reader never saw, its confident wrong reads are
mostly a wrong rank with the right suit (a JC for a JS aside, 9C for 8C, 2C for 7C; docs/camera.md, "The rank check"),
which the club-against-spade check cannot see. `reader.py` multiplies every read's confidence by the probability this
check gives the read's rank over `reader.RANK_AGREES`, at most 1 (`IndexReader._checked`). `calibrate.py` sets the
threshold without it, so it is a veto. Writes `rank_check.onnx` beside the reader (`--model`, default the shipped one)
and names it in the reader's `.json` (`rank_check`, `rank_check_size`, `rank_check_classes`, ...), with its validation
figures; about 21 minutes on one core beside another training (11 to build the crops).
"""

from __future__ import annotations

import numpy as np

from drivers.camera.training import train
from drivers.camera.training.check import arguments, train_check
from drivers.camera.training.dataset import NONE, RANKS

EPOCHS = 8
SIZE = 48  # the check's crops, pixels a side (a multiple of 8)


def ranked_indices(x: train.ARRAY, y: train.ARRAY) -> tuple[train.ARRAY, train.ARRAY]:
    """The crops of indices, and their rank's number in `RANKS` (a class number divided by 4: C, D, H, S)."""
    keep = y != NONE
    return x[keep], (y[keep] // 4).astype(np.int64)


def main() -> None:
    train_check("rank_check", ranked_indices, RANKS, arguments(__doc__.splitlines()[0], EPOCHS, SIZE))


if __name__ == "__main__":
    main()
