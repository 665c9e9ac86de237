"""Train one of the reader's checks: a small network beside the reader that reads one thing about an index (club or
spade, its rank) and vetoes the reader's reads it disagrees with (`club_spade.py`, `rank_check.py`).

A check learns from the index crops of the reader's own training data (the same photos, scenes and printed cards,
rebuilt from the reader's `.json` with the same seeds, without the crops of non-indices), cut at its own size. It is
written beside the reader as `<name>.onnx` and named in the reader's `.json` (`<name>`, `<name>_size`, ...) with its
validation figures; `reader.py` lowers a read's confidence by the probability the check gives the read's answer
(`IndexReader._checked`: the suit check's as it is, the rank check's below `reader.RANK_AGREES` only).
`calibrate.py` sets the threshold without the checks, so they are vetoes: they can only make a read less sure.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np

from drivers.camera.training import train
from drivers.camera.training.dataset import NONE

Select = Callable[[train.ARRAY, train.ARRAY], tuple[train.ARRAY, train.ARRAY]]


def arguments(description: str, epochs: int, size: int) -> argparse.Namespace:
    """A check's command line: the reader to add it to, its epochs and its crops' size."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--model", type=Path, default=train.DATA / "index_net.onnx", help="the trained reader")
    parser.add_argument("--epochs", type=int, default=epochs)
    parser.add_argument("--size", type=int, default=size, help="the check's crops, pixels a side (a multiple of 8)")
    return parser.parse_args()


def suit_pair(suits: str) -> Select:
    """A suit check's crops: those of indices of the two `suits` (as "CS"), labelled 0 for the first, 1 for the
    second (`dataset.CLASSES` lists each rank's suits in the order C, D, H, S)."""
    first, second = ("CDHS".index(suit) for suit in suits)

    def select(x: train.ARRAY, y: train.ARRAY) -> tuple[train.ARRAY, train.ARRAY]:
        keep = (y != NONE) & np.isin(y % 4, (first, second))
        return x[keep], (y[keep] % 4 == second).astype(np.int64)

    return select


def network(size: int, classes: int) -> Any:
    """The reader's trunk (`train.trunk_layers`) with one head of `classes` classes."""
    from torch import nn  # noqa: PLC0415 - torch exists only in the training venv

    return nn.Sequential(*train.trunk_layers(size), nn.Linear(128, classes))


def train_check(name: str, select: Select, classes: Sequence[str], args: argparse.Namespace) -> None:
    """Train the check `name` on the crops `select` keeps and labels (a number in `classes`), write `<name>.onnx`
    beside the reader `args.model` and name it, its size and its classes in the reader's `.json`."""
    meta_path = args.model.with_suffix(".json")
    meta = json.loads(meta_path.read_text())
    started = time.perf_counter()

    def log(text: str) -> None:
        print(f"[{time.perf_counter() - started:6.0f} s] {text}", flush=True)

    train.SEED = int(meta["seed"])  # the reader's seeds, so that its own training photos and scenes are rebuilt
    size = args.size
    recipe = train.Recipe.of(SimpleNamespace(**meta))
    (x, y), (xv, yv) = (select(*crops) for crops in train.training_crops(recipe, size, 0, 0, log))
    log(f"{name} crops: {len(x)} train, {len(xv)} validation")
    model = train.train_cnn(x, y, args.epochs, log, lambda: network(size, len(classes)))
    probabilities = train.softmax(train.logits_of(model, xv), 1.0)
    read = probabilities.argmax(axis=1)
    figures = {
        "crops": len(yv),
        "read_right": round(float((read == yv).mean()), 4),
        "wrong_at_0.9_or_more": int(((read != yv) & (probabilities.max(axis=1) >= 0.9)).sum()),
    }
    log(f"on validation: {figures}")
    path = args.model.with_name(f"{name}.onnx")
    train.export(model, path, size)
    meta = json.loads(meta_path.read_text())  # read again: another check may have been added meanwhile
    meta |= {name: path.name, f"{name}_size": size, f"{name}_classes": list(classes), f"{name}_epochs": args.epochs,
             f"{name}_train_crops": len(x), f"{name}_validation": figures}  # fmt: skip
    meta_path.write_text(json.dumps(meta, indent=2) + "\n")
    log(f"wrote {path} and updated {meta_path.name}")
