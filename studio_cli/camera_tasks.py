"""The work of `studio camera` (see camera_command.py for the command line): enrollment and recognition."""

from __future__ import annotations

import argparse
import fnmatch
import json
from pathlib import Path
from typing import Any

import cv2

from drivers.camera.detect import Zone
from drivers.camera.enroll import Enrollment, enroll_boxes, enroll_folder, read_labels
from drivers.camera.errors import EnrollmentError, ImageError
from drivers.camera.image_io import load_image
from drivers.camera.reader import SURE, IndexReader
from drivers.camera.recognize import CardRead
from drivers.camera.templates import Templates


def run_enroll(args: argparse.Namespace) -> int:
    folder: Path = args.folder
    if not folder.is_dir():
        raise EnrollmentError(f"{folder}: not a folder of card photos")
    enrollment: Enrollment
    if args.labels is not None:
        labels: Path = args.labels
        if not labels.exists() and (folder / labels).exists():
            labels = folder / labels  # named relative to DIR
        boxes = read_labels(labels, folder)
        if args.include:
            boxes = [
                box
                for box in boxes
                if any(fnmatch.fnmatch(box.image.relative_to(folder).as_posix(), p) for p in args.include)
            ]
        if not boxes:
            raise EnrollmentError(f"{labels}: no labelled card matches {', '.join(args.include)}")
        enrollment = enroll_boxes(boxes)
        source = f"{labels.name} in {folder.name}" + (f" ({', '.join(args.include)})" if args.include else "")
    else:
        enrollment = enroll_folder(folder)
        source = folder.name
    templates = enrollment.templates(description=f"enrolled from {source}")
    try:
        written = templates.save(args.out)
    except OSError as error:
        raise EnrollmentError(f"{args.out}: cannot write the templates ({error.strerror or error})") from None
    summary = {
        "templates": str(written),
        "cards": enrollment.cards,
        "ranks": list(templates.ranks),
        "suits": list(templates.suits),
        "rank_samples": len(templates.rank_labels),
        "suit_samples": len(templates.suit_labels),
        "skipped": [{"photo": name, "reason": reason} for name, reason in enrollment.skipped],
    }
    if args.json:
        print(json.dumps(summary, indent=2))
        return 0
    print(
        f"{written}: {enrollment.cards} cards enrolled; ranks {' '.join(templates.ranks) or '-'}; "
        f"suits {' '.join(templates.suits) or '-'} ({len(templates.rank_labels)} rank and "
        f"{len(templates.suit_labels)} suit samples)"
    )
    for name, reason in enrollment.skipped:
        print(f"  skipped {name}: {reason}")
    return 0


def reader_for_args(templates: Path | None) -> IndexReader:
    """The shipped reader, with an enrolled deck's templates when given."""
    return IndexReader(templates=Templates.load(templates) if templates is not None else None)


def run_recognize(args: argparse.Namespace) -> int:
    reader = reader_for_args(args.templates)
    minimum = getattr(args, "min_confidence", SURE)
    results = []
    for path in args.images:
        image = load_image(path)
        try:
            reads = reader.read_frame(image, [Zone(name, box) for name, box in args.zone])
        except cv2.error as error:  # an image OpenCV cannot work on, however it decoded
            raise ImageError(f"{path}: cannot be read for cards ({str(error).strip().splitlines()[-1]})") from None
        results.append({
            "image": str(path),
            "cards": [card_json(read) for read in reads if read.confidence >= minimum],
            "unsure": [card_json(read) for read in reads if read.confidence < minimum],
        })  # fmt: skip
    if args.json:
        print(json.dumps(results, indent=2))
    else:
        print(as_table(results))
    return 0


def card_json(read: CardRead) -> dict[str, Any]:
    entry: dict[str, Any] = {"code": read.code, "confidence": round(read.confidence, 4), "box": list(read.box)}
    if read.zone is not None:
        entry["zone"] = read.zone
    return entry


def as_table(results: list[dict[str, Any]]) -> str:
    lines = []
    for result in results:
        cards, unsure = result["cards"], result.get("unsure", [])
        lines.append(f"{result['image']}: {len(cards)} card{'s' if len(cards) != 1 else ''}, {len(unsure)} unsure")
        for card, kind in [(c, "") for c in cards] + [(c, "  UNSURE") for c in unsure]:
            x, y, w, h = card["box"]
            zone = f"  in {card['zone']}" if "zone" in card else ""
            lines.append(
                f"  {card['code']:<4} confidence {card['confidence']:.2f}  at x={x} y={y} ({w}x{h}){zone}{kind}"
            )
    return "\n".join(lines)
