"""Train the corner-index reader and write it as package data (run in the training venv; see docs/camera.md).

    scripts/train-camera            # = .venv-train/bin/python -m drivers.camera.training.train
    scripts/train-camera --printed 8 --scenes 2000 --skip-baseline   # the shipped network (since 2026-12-06)

Steps, all seeded (SEED): build the crops of the TRAIN and VALIDATION photos of `split.csv` (checked by sha256), and
of `--scenes` synthetic studio scenes composed from the TRAIN photos (`compose.py`; with `--drawn` and `--printed`,
drawn cards and printed decks' cards among them); train a small CNN with torch on one thread; fit a temperature on
the validation crops (honest probabilities) and pick the confidence threshold there; train HOG + linear SVM (cv2.ml)
on the same crops for the comparison; write `data/index_net.onnx` and `data/index_net.json` (classes, input size,
temperature, threshold, the figures), or `--out` elsewhere, to compare with the shipped network before replacing it.
The test photos are never read here. The shipped reader then gets its threshold (`calibrate.py`) and its
club-against-spade veto (`club_spade.py`, which rebuilds these crops with `training_crops`).
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

from drivers.camera.reader import gate_input
from drivers.camera.squares import NEWEST, RULES
from drivers.camera.training.compose import build_scenes, card_pieces, roboflow_pieces
from drivers.camera.training.dataset import CLASSES, NONE, RANKS, SIZE, build
from drivers.camera.training.drawn import FONTS, drawn_pieces, font_glyphs
from drivers.camera.training.printed import DECKS, printed_pieces
from drivers.camera.training.split import WEBCAM, default_data, read

SEED = 11
WIDTH = 16  # the reader's first convolution's channels
GATE_SIZE = 16  # the gate reads every crop shrunk to this, whatever the reader's size
BASELINE_CROPS = 12000
DATA = Path(__file__).resolve().parents[1] / "data"
PRINTED_CACHE = Path(__file__).resolve().parents[3] / "artifacts" / "printed-decks"
ARRAY = npt.NDArray[Any]


def network(size: int = SIZE, width: int = WIDTH) -> Any:
    """The reader: a small CNN on `size` x `size` crops (a multiple of 8), `width` channels in its first convolution
    (twice and four times that in the next two), with two heads, the rank (13 ranks or "not an index") and the suit,
    so that every rank learns from the crops of its four suits and every suit from its thirteen ranks. Its output is
    the log probability of each of the 52 cards (rank's plus suit's) and of "not an index", in `CLASSES` order: the
    file `reader.py` runs needs no knowledge of the heads."""
    import torch  # noqa: PLC0415 - torch exists only in the training venv
    from torch import nn  # noqa: PLC0415

    class Reader(nn.Module):  # type: ignore[misc]
        def __init__(self) -> None:
            super().__init__()
            self.trunk = nn.Sequential(*trunk_layers(size, width))
            self.rank = nn.Linear(128, len(RANKS) + 1)
            self.suit = nn.Linear(128, 4)

        def heads(self, x: Any) -> tuple[Any, Any]:
            features = self.trunk(x)
            return self.rank(features), self.suit(features)

        def forward(self, x: Any) -> Any:
            rank, suit = self.heads(x)
            rank, suit = torch.log_softmax(rank, dim=1), torch.log_softmax(suit, dim=1)
            cards = (rank[:, : len(RANKS), None] + suit[:, None, :]).reshape(-1, 4 * len(RANKS))
            return torch.cat([cards, rank[:, len(RANKS) :]], dim=1)

    return Reader()


def trunk_layers(size: int, width: int = WIDTH) -> list[Any]:
    """The reader's trunk, as a list of layers: three convolution blocks (`width`, twice and four times that many
    channels, each halving the crop) and 128 features; `network` puts its heads on it, `club_spade.py` its own."""
    from torch import nn  # noqa: PLC0415 - torch exists only in the training venv

    def block(a: int, b: int) -> list[Any]:
        return [nn.Conv2d(a, b, 3, padding=1), nn.BatchNorm2d(b), nn.ReLU(), nn.MaxPool2d(2)]

    return [*block(3, width), *block(width, 2 * width), *block(2 * width, 4 * width), nn.Flatten(),
            nn.Linear(4 * width * (size // 8) ** 2, 128), nn.ReLU(), nn.Dropout(0.2)]  # fmt: skip


def two_head_loss(model: Any, x: Any, y: Any) -> Any:
    """Rank (or "not an index") and suit cross-entropies; the suit only for crops of an index."""
    import torch  # noqa: PLC0415
    import torch.nn.functional as f  # noqa: PLC0415

    rank, suit = model.heads(x)
    index = y != NONE
    rank_target = torch.where(index, torch.div(y, 4, rounding_mode="floor"), torch.full_like(y, len(RANKS)))
    loss = f.cross_entropy(rank, rank_target, label_smoothing=0.05)
    if bool(index.any()):
        loss = loss + f.cross_entropy(suit[index], y[index] % 4, label_smoothing=0.05)
    return loss


# a reader's `.json` without `"squares"` had its crops proposed with these rules (`squares.RULES`)
EARLIER_SQUARES = "2026-12-06"


@dataclass(frozen=True)
class Recipe:
    """What a reader's training crops are made of (its `.json` records each)."""

    views: int
    scenes: int
    scene_views: int
    drawn: int
    printed: int
    printed_cache: Path = PRINTED_CACHE
    squares: str = NEWEST  # how its squares were found: a name in `squares.RULES`

    @classmethod
    def of(cls, settings: Any) -> Recipe:
        """From `train.py`'s options or a trained reader's `.json` (as a namespace)."""
        return cls(settings.views, settings.scenes, settings.scene_views, settings.drawn, settings.printed,
                   getattr(settings, "printed_cache", PRINTED_CACHE),
                   getattr(settings, "squares", EARLIER_SQUARES))  # fmt: skip


def training_crops(recipe: Recipe, size: int, negatives: int, scene_negatives: int, log: Any
                   ) -> tuple[tuple[ARRAY, ARRAY], tuple[ARRAY, ARRAY]]:  # fmt: skip
    """The training crops and classes (the train photos' and `recipe.scenes` composed scenes') and the validation
    ones, `size` pixels a side, with `negatives` far proposals a photo (`scene_negatives` a scene), all seeded by
    `SEED`: the same arguments give the same crops."""
    sets = read(check=True)
    roboflow = [path for path in sets["train"] if "roboflow" in str(path)]
    validation = [path for path in sets["validation"] if "roboflow" in str(path)]
    rules = RULES[recipe.squares]
    x, y = build(roboflow, SEED, recipe.views, negatives, size, rules)
    if recipe.scenes:
        cards = {path for path in sets["train"] if WEBCAM in str(path) and path.suffix.lower() == ".jpg"}
        pieces = roboflow_pieces(roboflow) + card_pieces(default_data() / WEBCAM, cards)
        if recipe.drawn:
            pieces += drawn_pieces(font_glyphs(), recipe.drawn, SEED + 3)
        if recipe.printed:
            pieces += printed_pieces(recipe.printed, printed_draw_seed(SEED), recipe.printed_cache)
        xs, ys = build_scenes(pieces, SEED + 2, recipe.scenes, recipe.scene_views, scene_negatives, size,
                              rules)  # fmt: skip
        indices = int((ys != NONE).sum())
        log(f"scenes: {recipe.scenes} from {len(pieces)} pieces, {len(xs)} crops ({indices} of indices)")
        x, y = np.concatenate([x, xs]), np.concatenate([y, ys])
    return (x, y), build(validation, SEED + 1, 4, negatives, size, rules)


def printed_draw_seed(seed: int) -> int:
    """The seed of the printed decks' draw (`printed.printed_pieces`) in a training seeded `seed` (its `.json`'s
    `seed`); `printed.unseen_pieces` with it gives the cards that training left out."""
    return seed + 4


def gate_network() -> Any:
    """The cheap first stage: index or not, from the crop shrunk to 16 x 16 (about 130 thousand multiply-adds, a
    twentieth of the reader), so that the reader runs only on the few proposals that may be indices."""
    from torch import nn  # noqa: PLC0415

    return nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(8, 16, 3, padding=1),
                         nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(16 * 16, 2))  # fmt: skip


def shrink(crops: ARRAY) -> ARRAY:
    """The reader's crops -> the gate's `GATE_SIZE` x `GATE_SIZE`, exactly as `reader.py` shrinks them."""
    return np.concatenate([gate_input(crops[i : i + 4096], GATE_SIZE) for i in range(0, len(crops), 4096)])


def as_input(crops: ARRAY) -> ARRAY:
    """N x size x size x 3 uint8 BGR -> N x 3 x size x size float32 in [-0.5, 0.5] (what `reader.py` feeds it)."""
    return (crops.astype(np.float32) / 255.0 - 0.5).transpose(0, 3, 1, 2).copy()


def train_cnn(x: ARRAY, y: ARRAY, epochs: int, log: Any, make: Any = None, width: int = WIDTH) -> Any:
    """Train the network `make()` builds (default: `network`), built after seeding so that its first weights are
    the same in every run."""
    import torch  # noqa: PLC0415

    torch.manual_seed(SEED)
    torch.set_num_threads(1)
    model = make() if make else network(x.shape[1], width)
    inputs, targets = torch.from_numpy(as_input(x)), torch.from_numpy(y)
    optimiser = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=1e-4)
    steps = epochs * ((len(x) + 127) // 128)
    schedule = torch.optim.lr_scheduler.OneCycleLR(optimiser, max_lr=3e-3, total_steps=steps)
    generator = torch.Generator().manual_seed(SEED)
    for epoch in range(epochs):
        model.train()
        order = torch.randperm(len(x), generator=generator)
        total, right = 0.0, 0
        for start in range(0, len(x), 128):
            batch = order[start : start + 128]
            out = model(inputs[batch])
            if hasattr(model, "heads"):
                loss = two_head_loss(model, inputs[batch], targets[batch])
            else:
                loss = torch.nn.functional.cross_entropy(out, targets[batch], label_smoothing=0.05)
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            schedule.step()
            total += float(loss.detach()) * len(batch)
            right += int((out.argmax(1) == targets[batch]).sum())
        log(f"epoch {epoch + 1}/{epochs}: loss {total / len(x):.3f}, train accuracy {right / len(x):.3f}")
    model.eval()
    return model


def logits_of(model: Any, x: ARRAY) -> ARRAY:
    import torch  # noqa: PLC0415

    with torch.no_grad():
        return np.concatenate(
            [model(torch.from_numpy(as_input(x[i : i + 512]))).numpy() for i in range(0, len(x), 512)]
        )


def softmax(logits: ARRAY, temperature: float) -> ARRAY:
    z = logits / temperature
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return np.asarray(e / e.sum(axis=1, keepdims=True))


def fit_temperature(logits: ARRAY, y: ARRAY) -> float:
    """The temperature minimising the validation log-loss (a grid: one number, no need for an optimiser)."""
    best = min(
        np.arange(0.5, 4.01, 0.05), key=lambda t: -np.log(softmax(logits, t)[np.arange(len(y)), y] + 1e-9).mean()
    )
    return float(best)


def confidence(probabilities: ARRAY) -> tuple[ARRAY, ARRAY]:
    """The class read and its confidence: its probability less the runner-up's (as `reader.py` computes it)."""
    order = np.argsort(probabilities, axis=1)
    top, second = order[:, -1], order[:, -2]
    rows = np.arange(len(probabilities))
    return top, probabilities[rows, top] - probabilities[rows, second]


def threshold(top: ARRAY, sure: ARRAY, y: ARRAY) -> float:
    """The lowest threshold under which no validation crop of an index is read as another card (nor a non-index as
    a card) with confidence at or above it; at least 0.5, and a margin of 0.05 above the worst confident error."""
    wrong = (top != y) & (top != NONE)
    worst = float(sure[wrong].max()) if wrong.any() else 0.0
    return round(min(0.99, max(0.5, worst + 0.05)), 3)


def summary(top: ARRAY, sure: ARRAY, y: ARRAY, limit: float) -> dict[str, Any]:
    index = y != NONE
    return {
        "index_crops": int(index.sum()),
        "read_right": round(float((top[index] == y[index]).mean()), 4),
        "read_right_confident": round(float(((top[index] == y[index]) & (sure[index] >= limit)).mean()), 4),
        "confident_wrong": int((((top != y) & (top != NONE)) & (sure >= limit)).sum()),
        "non_index_called_card": round(float((top[~index] != NONE).mean()), 4),
    }


def hog_svm(x: ARRAY, y: ARRAY, xv: ARRAY, yv: ARRAY) -> dict[str, Any]:
    """The classical baseline on the same crops: HOG of the grey crop plus the mean redness, a linear SVM
    (cv2.ml) over the 52 cards, trained and judged on crops of indices only (on all crops, with "not an index" as a
    53rd class, the SVM answers "not an index" for nearly everything)."""
    size = x.shape[1]
    hog = cv2.HOGDescriptor((size, size), (16, 16), (8, 8), (8, 8), 9)

    def features(crops: ARRAY) -> ARRAY:
        rows = []
        for crop in crops:
            grey = cv2.cvtColor(crop, cv2.COLOR_BGR2GRAY)
            b, g, r = cv2.split(crop.astype(np.float32))
            red = float(np.mean(np.maximum(r - np.maximum(g, b), 0))) / 64
            rows.append(np.append(np.asarray(hog.compute(grey)).ravel(), red))
        return np.array(rows, dtype=np.float32)

    start = time.perf_counter()
    index, index_v = y != NONE, yv != NONE
    x, y, xv, yv = x[index], y[index], xv[index_v], yv[index_v]
    pick = np.random.default_rng(SEED).permutation(len(x))[:BASELINE_CROPS]  # an SVM on all crops takes too long
    x, y = x[pick], y[pick]
    svm = cv2.ml.SVM_create()  # type: ignore[attr-defined]
    svm.setType(cv2.ml.SVM_C_SVC)
    svm.setKernel(cv2.ml.SVM_LINEAR)
    svm.setC(1.0)
    svm.setTermCriteria((cv2.TERM_CRITERIA_MAX_ITER + cv2.TERM_CRITERIA_EPS, 2000, 1e-4))
    svm.train(features(x), cv2.ml.ROW_SAMPLE, y.astype(np.int32))
    _, predicted = svm.predict(features(xv))
    top = predicted.ravel().astype(np.int64)
    return {
        "index_crops": len(yv),
        "read_right": round(float((top == yv).mean()), 4),
        "train_crops": len(x),
        "train_seconds": round(time.perf_counter() - start, 1),
    }


def baseline_only() -> None:
    """`--baseline-only`: the HOG + SVM comparison alone, on the same crops (same seeds) as the reader."""
    sets = read(check=True)
    x, y = build([p for p in sets["train"] if "roboflow" in str(p)], SEED, 8, 60)
    xv, yv = build([p for p in sets["validation"] if "roboflow" in str(p)], SEED + 1, 4, 60)
    print(json.dumps(hog_svm(x, y, xv, yv)))


def gate_threshold(probabilities: ARRAY, y: ARRAY) -> float:
    """The gate's cut: the probability of "index" that 99.5% of the validation index crops reach."""
    return round(float(np.quantile(probabilities[y != NONE], 0.005)), 4)


def export(model: Any, path: Path, size: int = SIZE) -> None:
    import torch  # noqa: PLC0415

    torch.onnx.export(
        model,
        (torch.zeros(1, 3, size, size),),
        str(path),
        input_names=["crops"],
        output_names=["logits"],
        dynamic_axes={"crops": {0: "n"}, "logits": {0: "n"}},
        opset_version=13,
        dynamo=False,
    )


def main() -> None:
    global SEED  # noqa: PLW0603 - the one seed every step draws from, set once before any of them
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=14)
    parser.add_argument("--views", type=int, default=8, help="augmented views per labelled webcam index")
    parser.add_argument("--negatives", type=int, default=60, help="negative proposals per photo")
    parser.add_argument("--scenes", type=int, default=1000, help="synthetic studio scenes (compose.py); 0: none")
    parser.add_argument("--scene-views", type=int, default=2, help="augmented views per index in a scene")
    parser.add_argument("--scene-negatives", type=int, default=30, help="negative proposals per scene")
    parser.add_argument("--drawn", type=int, default=0, help="drawn cards (drawn.py) per code among the scenes' pieces")
    parser.add_argument("--printed", type=int, default=0,
                        help="cards of printed decks (printed.py) per code among the scenes' pieces")  # fmt: skip
    parser.add_argument("--printed-cache", type=Path, default=PRINTED_CACHE, help="where printed.py keeps its renders")
    parser.add_argument("--out", type=Path, default=DATA / "index_net.onnx")
    parser.add_argument("--skip-baseline", action="store_true", help="do not train the HOG + SVM comparison")
    parser.add_argument("--gate-only", action="store_true", help="train only the gate; keep the reader's files")
    parser.add_argument("--gate-epochs", type=int, default=6)
    parser.add_argument("--baseline-only", action="store_true", help="only the HOG + SVM comparison")
    parser.add_argument("--size", type=int, default=SIZE, help="the reader's crops, pixels a side (16, 32, 48...)")
    parser.add_argument("--width", type=int, default=WIDTH, help="the reader's first convolution's channels")
    parser.add_argument("--seed", type=int, default=SEED, help="the seed of everything random (default %(default)s)")
    parser.add_argument("--squares", default=NEWEST, choices=sorted(RULES),
                        help="the rules the crops' squares are found with (squares.RULES; default the reader's, "
                             "%(default)s)")  # fmt: skip
    args = parser.parse_args()
    SEED = args.seed
    cv2.setNumThreads(1)
    if args.baseline_only:
        baseline_only()
        return
    started = time.perf_counter()

    def log(text: str) -> None:
        print(f"[{time.perf_counter() - started:6.0f} s] {text}", flush=True)

    if args.size % GATE_SIZE:
        parser.error(f"--size must be a multiple of {GATE_SIZE}")
    (x, y), (xv, yv) = training_crops(Recipe.of(args), args.size, args.negatives, args.scene_negatives, log)
    log(f"crops: {len(x)} train ({int((y != NONE).sum())} of indices), {len(xv)} validation")
    gate_path = args.out.with_name(args.out.stem.replace("_net", "_gate") + ".onnx")
    gate = train_cnn(shrink(x), (y != NONE).astype(np.int64), args.gate_epochs, log, gate_network)
    gate_probabilities = softmax(logits_of(gate, shrink(xv)), 1.0)[:, 1]
    gate_cut = gate_threshold(gate_probabilities, yv)
    passed = float((gate_probabilities[yv == NONE] >= gate_cut).mean())
    log(f"gate: cut {gate_cut}, lets through 99.5% of validation indices and {passed:.1%} of non-indices")
    export(gate, gate_path, GATE_SIZE)
    # `calibrate` raises the cut end to end from here ("gate_threshold"), keeping this one to start from
    gate_meta = {"gate": gate_path.name, "gate_size": GATE_SIZE, "gate_threshold": gate_cut,
                 "gate_trained_threshold": gate_cut, "gate_non_index_passed": round(passed, 4),
                 "gate_epochs": args.gate_epochs}  # fmt: skip
    meta_path = args.out.with_suffix(".json")
    if args.gate_only:
        meta_path.write_text(json.dumps(json.loads(meta_path.read_text()) | gate_meta, indent=2) + "\n")
        log(f"wrote {gate_path} and updated {meta_path.name}")
        return
    model = train_cnn(x, y, args.epochs, log, width=args.width)
    logits = logits_of(model, xv)
    temperature = fit_temperature(logits, yv)
    top, sure = confidence(softmax(logits, temperature))
    limit = threshold(top, sure, yv)
    cnn = summary(top, sure, yv, limit)
    log(f"CNN on validation: {cnn}; temperature {temperature:.2f}, threshold {limit}")
    export(model, args.out, args.size)
    baseline = None if args.skip_baseline else hog_svm(x, y, xv, yv)
    if baseline:
        log(f"HOG + linear SVM on validation: {baseline}")
    meta = {
        "classes": list(CLASSES),
        "size": args.size,
        "width": args.width,
        "temperature": round(temperature, 3),
        "threshold": limit,
        "both_corners": True,  # reader.py: two corners that read the same card combine (calibrate.py sets the cut)
        "seed": SEED,
        "epochs": args.epochs,
        "views": args.views,
        "negatives": args.negatives,
        "scenes": args.scenes,
        "scene_views": args.scene_views,
        "scene_negatives": args.scene_negatives,
        "drawn": args.drawn,
        "drawn_fonts": FONTS if args.drawn else {},
        "printed": args.printed,
        "printed_decks": {str(path): digest for path, digest in DECKS.items()} if args.printed else {},
        "squares": args.squares,
        "train_crops": len(x),
        "validation": {"cnn": cnn, "hog_svm": baseline},
        "train_seconds": round(time.perf_counter() - started),
    } | gate_meta
    meta_path.write_text(json.dumps(meta, indent=2) + "\n")
    log(f"wrote {args.out} ({args.out.stat().st_size // 1024} KB) and {args.out.with_suffix('.json').name}")


if __name__ == "__main__":
    main()
