"""The fixed train / validation / test split of the real photographs, written to `split.csv` (path + sha256).

Rules (reasons in docs/camera.md):
- roboflow-card-detection `WIN_*` webcam scenes are split by *session* (the minute groups of their timestamps), so
  that no held-out scene is a near-duplicate frame of a training one: 12:29-12:32, 12:52-12:54 and 17:04-17:06 are
  the held-out test scenes, 11:36-11:38 the validation scenes (threshold and temperature are calibrated there).
- `IMG_*` phone photos are split by image, by a hash of the file name: 15% test, 10% validation, the rest train.
- webcam-9-to-ace follows its source's own split: `images/train` (45 top-down photos, 95 cards) is trained on (its
  cards are laid into the synthetic training scenes, `compose.py`); `images/test` (7 top-down photos, 28 cards, and
  60 phone photos) is held out: the studio-frame renders and the top-down measure use it alone.

Usage: python -m drivers.camera.training.split [--data DIR]  (DIR: shared/data/cards; rewrites split.csv)
"""

from __future__ import annotations

import argparse
import csv
import hashlib
from pathlib import Path

HERE = Path(__file__).resolve().parent
SPLIT = HERE / "split.csv"
ROBOFLOW = "roboflow-card-detection"
WEBCAM = "webcam-9-to-ace"
TEST_SESSIONS = ("12_29", "12_30", "12_31", "12_32", "12_52", "12_53", "12_54", "17_04", "17_05", "17_06")
VALIDATION_SESSIONS = ("11_36", "11_37", "11_38")


def default_data() -> Path:
    for candidate in (HERE.parents[3] / ".." / "shared" / "data" / "cards", Path("/work/shared/data/cards")):
        if candidate.is_dir():
            return candidate.resolve()
    return Path("/work/shared/data/cards")


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def assign(name: str) -> str:
    if name.startswith("WIN_"):
        minute = name[13:18]  # WIN_20240627_HH_MM_SS_Pro.jpg
        if minute in TEST_SESSIONS:
            return "test"
        return "validation" if minute in VALIDATION_SESSIONS else "train"
    bucket = int(hashlib.sha256(name.encode()).hexdigest()[:8], 16) % 100
    return "test" if bucket < 15 else "validation" if bucket < 25 else "train"


def build(data: Path) -> list[dict[str, str]]:
    rows = []
    for image in sorted((data / ROBOFLOW / "images").glob("*.jpg")):
        rows.append({"path": f"{ROBOFLOW}/images/{image.name}", "sha256": sha256(image), "set": assign(image.name)})
    for image in sorted((data / WEBCAM / "images").rglob("*")):
        if image.is_file():
            relative = image.relative_to(data).as_posix()
            part = "train" if relative.startswith(f"{WEBCAM}/images/train/") else "test"
            rows.append({"path": relative, "sha256": sha256(image), "set": part})
    return rows


def read(data: Path | None = None, check: bool = False) -> dict[str, list[Path]]:
    """The split as absolute paths by set; with `check`, every file's sha256 must match."""
    data = data or default_data()
    sets: dict[str, list[Path]] = {"train": [], "validation": [], "test": []}
    with SPLIT.open(newline="") as handle:
        for row in csv.DictReader(handle):
            path = data / row["path"]
            if check and sha256(path) != row["sha256"]:
                raise ValueError(f"{path}: sha256 differs from split.csv: not the data the model was trained on")
            sets[row["set"]].append(path)
    return sets


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=None)
    args = parser.parse_args()
    rows = build(args.data or default_data())
    with SPLIT.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, ["path", "sha256", "set"])
        writer.writeheader()
        writer.writerows(rows)
    counts: dict[str, int] = {}
    for row in rows:
        key = f"{row['path'].split('/')[0]}:{row['set']}"
        counts[key] = counts.get(key, 0) + 1
    print(SPLIT, counts)


if __name__ == "__main__":
    main()
