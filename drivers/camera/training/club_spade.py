"""Train the reader's club-against-spade check and add it to a trained reader (run in the training venv).

    .venv-train/bin/python -m drivers.camera.training.club_spade [--model PATH] [--size 48]

The reader's network tells a club from a spade worst of all, and on cards of designs it never saw it does so with a
confidence no threshold set on the validation photos catches (docs/camera.md, "Limitations"). This second, small
network reads only that: club or spade, from the black indices' crops of the reader's own training data (the same
photos, scenes and printed cards, rebuilt from its `.json` with the same seeds, without the crops of non-indices),
cut at 48 x 48 (`SIZE`): larger than the reader's 32, it tells more black indices apart (92.5% of the validation's
against 88.4% at 32), and as a veto it costs fewer sure reads. `reader.py` asks it about every index read as a club
or a spade and multiplies the read's confidence by the probability it gives that suit (`IndexReader._club_or_spade`).
`calibrate.py` sets the threshold without it, so it is a veto: it can only make a read less sure, and the threshold
does not change with it. Writes `club_spade.onnx` beside the reader (`--model`, default the shipped one) and names
it in the reader's `.json` (`club_spade`, `club_spade_size`), with its validation figures; about 13 minutes on one
core (8 to build the crops).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np

from drivers.camera.training import train
from drivers.camera.training.dataset import NONE

EPOCHS = 10
SIZE = 48  # the check's crops, pixels a side (a multiple of 8)
CLUB, SPADE = 0, 3  # suits in a class number's remainder by 4 (`dataset.CLASSES`: C, D, H, S)


def black_indices(x: train.ARRAY, y: train.ARRAY) -> tuple[train.ARRAY, train.ARRAY]:
    """The crops of clubs and spades, and 1 for a spade, 0 for a club."""
    keep = (y != NONE) & np.isin(y % 4, (CLUB, SPADE))
    return x[keep], (y[keep] % 4 == SPADE).astype(np.int64)


def network(size: int) -> Any:
    """The reader's trunk (`train.trunk_layers`) with one head of two classes: club, spade."""
    from torch import nn  # noqa: PLC0415 - torch exists only in the training venv

    return nn.Sequential(*train.trunk_layers(size), nn.Linear(128, 2))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, default=train.DATA / "index_net.onnx", help="the trained reader")
    parser.add_argument("--epochs", type=int, default=EPOCHS)
    parser.add_argument("--size", type=int, default=SIZE, help="the check's crops, pixels a side (a multiple of 8)")
    args = parser.parse_args()
    meta_path = args.model.with_suffix(".json")
    meta = json.loads(meta_path.read_text())
    started = time.perf_counter()

    def log(text: str) -> None:
        print(f"[{time.perf_counter() - started:6.0f} s] {text}", flush=True)

    train.SEED = int(meta["seed"])  # the reader's seeds, so that its own training photos and scenes are rebuilt
    size = args.size
    recipe = train.Recipe.of(SimpleNamespace(**meta))
    (x, y), (xv, yv) = (black_indices(*crops) for crops in train.training_crops(recipe, size, 0, 0, log))
    log(f"black index crops: {len(x)} train ({int(y.sum())} spades), {len(xv)} validation")
    model = train.train_cnn(x, y, args.epochs, log, lambda: network(size))
    probabilities = train.softmax(train.logits_of(model, xv), 1.0)
    read = probabilities.argmax(axis=1)
    figures = {
        "crops": len(yv),
        "read_right": round(float((read == yv).mean()), 4),
        "wrong_at_0.9_or_more": int(((read != yv) & (probabilities.max(axis=1) >= 0.9)).sum()),
    }
    log(f"on validation: {figures}")
    path = args.model.with_name("club_spade.onnx")
    train.export(model, path, size)
    meta |= {"club_spade": path.name, "club_spade_size": size, "club_spade_epochs": args.epochs,
             "club_spade_train_crops": len(x), "club_spade_validation": figures}  # fmt: skip
    meta_path.write_text(json.dumps(meta, indent=2) + "\n")
    log(f"wrote {path} and updated {meta_path.name}")


if __name__ == "__main__":
    main()
