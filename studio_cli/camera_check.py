"""`studio camera check`: what a camera would report, frame by frame and zone by zone, before going live."""

from __future__ import annotations

import argparse
import json
import statistics
from collections.abc import Sequence
from typing import Any

from drivers.camera.detect import Zone
from drivers.camera.errors import CameraError
from drivers.camera.frames import BadFrame, StreamFailed, reader_for
from drivers.camera.image_io import check_frame
from drivers.camera.recognize import CardRead
from drivers.camera.stability import Sighting, StabilityTracker
from drivers.camera.still import StillTable
from studio_cli.camera_tasks import reader_for_args

# Printed when no frame showed any card, sure or not: what the reader needs, so that a user whose camera or deck it
# cannot see knows what to change (docs/camera.md, "Limitations").
NOTHING_FOUND = (
    "no card found in any frame: the reader looks for corner indices printed dark on light card stock (a casino "
    "deck; a deck printed light on dark stock is not read), each index 25 pixels tall or more, lit without glare, "
    "inside the --zone boxes if given"
)
# Printed after the reports: how many frames the camera would not read again (unchanged since the frame it last read,
# docs/camera.md, "A still table read once"). Few on a still table mean a noisy or flickering picture, read in full.
STILL = (
    "still frames: {still} of {frames} (unchanged since the frame read before them: the camera would give them that "
    "reading's cards instead of reading them)"
)
# Printed when fewer than half the reads were sure: on a deck the network was not trained on most reads are unsure,
# and the few sure ones can be wrong (docs/camera.md, "Limitations": 2 of 4 when the white phone deck was left out
# of training); on the decks it was trained on, most reads are sure.
MOSTLY_UNSURE = (
    "most reads were unsure: the deck may be one the network was not trained on, where even a sure read can be "
    "wrong; enroll the deck (studio camera enroll) and check again, or frame the cards larger"
)
# Printed when the indices read in a zone are filmed small: the median of each read's largest index square under
# `SMALL_INDEX` pixels (a camera at an angle films the far zone smaller). On decks and cards the network never saw,
# every sure read that was wrong was of an index under 28 pixels square, and none of 8,780 sure reads at 32 or more
# (docs/camera.md, "Designs no training used").
SMALL_INDEX = 32
SMALL_INDICES = (
    "indices are filmed small in {zone} (a median of {median} px square, under {least}): on decks the network never "
    "saw, every card it read surely wrong was filmed this small; frame the cards larger (an index 40 pixels tall "
    "makes a square of about 52) and check again"
)
# Printed, and the check fails, when a sure read is a card that was not laid (--expect): a confident wrong read, which
# no misread or stability rule would stop (docs/camera.md, "Checking a camera before going live").
WRONG_CARDS = (
    "FAILED: the camera read cards surely that were not laid; do not go live with this deck and camera as they are: "
    "enroll the deck (studio camera enroll), frame the cards larger or light them better, and check again"
)


class _NoReading:
    """A reader that reads nothing: `StillTable` run beside the check only to count the frames the camera would not
    read again (the check itself reads every frame)."""

    def read_frame(self, frame: object, zones: Sequence[Zone] = ()) -> list[CardRead]:
        return []


def run_check(args: argparse.Namespace) -> int:
    if args.frames < 1 or args.stable < 1:
        raise CameraError("--frames and --stable must be at least 1")
    source: str | int = int(args.input) if args.input.isdigit() else args.input
    reader = reader_for_args(args.templates)
    zones = [Zone(name, box) for name, box in args.zone]
    frames = reader_for(source)
    try:
        frames.open()
    except StreamFailed as error:
        raise CameraError(str(error)) from None
    tracker: StabilityTracker[None] = StabilityTracker(args.stable, args.min_confidence)
    # what `CameraSource` would do with these frames: read them, or give them the last reading's cards (unchanged)
    still = StillTable(_NoReading(), zones, first_readings=args.stable)
    reports: list[dict[str, Any]] = []
    wrong_sure: list[dict[str, Any]] = []  # with --expect: sure reads of cards not laid
    read_count = sure_count = 0
    # by zone ("frame" without zones): each read's `index_side` (reads of indices only)
    index_sides: dict[str, list[int]] = {}
    try:
        for number in range(1, args.frames + 1):
            try:
                frame = frames.read()
            except StreamFailed as error:
                _emit(args, {"frame": number, "error": str(error)})
                break
            if frame is None:
                break
            if isinstance(frame, BadFrame):
                _emit(args, {"frame": number, "error": frame.reason})
                continue
            image = check_frame(frame, f"frame {number}")
            reads = reader.read_frame(image, zones)
            still.read_frame(image)
            shown = [{"code": r.code, "confidence": round(r.confidence, 4), "zone": r.zone, "box": list(r.box),
                      "sure": r.confidence >= args.min_confidence} for r in reads]  # fmt: skip
            read_count += len(shown)
            for read in reads:
                if read.index_side is not None:
                    index_sides.setdefault(read.zone or "frame", []).append(read.index_side)
            sure_count += sum(read["sure"] for read in shown)
            if args.expect:
                wrong_sure += [{"frame": number, "code": read["code"], "confidence": read["confidence"]}
                               for read in shown if read["sure"] and read["code"] not in args.expect]  # fmt: skip
            _emit(args, {"frame": number, "reads": shown})
            sightings: list[Sighting[None]] = [Sighting(r.code, r.confidence, r.box, r.zone) for r in reads]
            for decision in tracker.update(sightings):
                reports.append({"frame": number, "report": "card" if decision.confirmed else "misread",
                                "code": decision.code, "confidence": round(decision.confidence, 4),
                                "detail": decision.detail})  # fmt: skip
    finally:
        frames.close()
    expected = _judged(args.expect, reports, wrong_sure) if args.expect else None
    failed = 1 if expected and expected["wrong_sure_reads"] else 0
    sides = {zone: {"median": int(statistics.median(found)), "smallest": min(found)}
             for zone, found in sorted(index_sides.items())}  # fmt: skip
    if args.json:
        summary = {
            "reports": reports,
            "reads": read_count,
            "sure_reads": sure_count,
            "index_square_px": sides,
            "still_frames": still.frames_still,
        }
        print(json.dumps(summary | ({"expected": expected} if expected else {})))
        return failed
    print("would report:" if reports else "would report nothing")
    for report in reports:
        print(f"  frame {report['frame']}: {report['report']} {report['code']} "
              f"(confidence {report['confidence']:.2f}) {report['detail']}")  # fmt: skip
    print(STILL.format(still=still.frames_still, frames=still.frames_still + still.frames_read_again))
    if not read_count:
        print(NOTHING_FOUND)
        return 0
    print(f"reads: {read_count}, sure: {sure_count} ({sure_count / read_count:.0%})")
    if sides:
        print(
            "index squares (median, smallest): "
            + "; ".join(f"{zone} {size['median']} px, {size['smallest']} px" for zone, size in sides.items())
        )
    if sure_count * 2 < read_count:
        print(MOSTLY_UNSURE)
    for zone, size in sides.items():
        if size["median"] < SMALL_INDEX:
            print(SMALL_INDICES.format(zone=zone, median=size["median"], least=SMALL_INDEX))
    if expected:
        _print_judged(expected)
    return failed


def _judged(expect: list[str], reports: list[dict[str, Any]], wrong_sure: list[dict[str, Any]]) -> dict[str, Any]:
    """The reports and the sure reads against the cards laid (`expect`): which were reported as cards, which only as
    misreads, which not at all; the cards reported that were not laid; every sure read of a card not laid."""
    cards = {report["code"] for report in reports if report["report"] == "card"}
    misread = {report["code"] for report in reports if report["report"] == "misread"}
    return {
        "laid": expect,
        "reported": [code for code in expect if code in cards],
        "misread_only": [code for code in expect if code not in cards and code in misread],
        "not_reported": [code for code in expect if code not in cards and code not in misread],
        "wrong_reports": sorted(cards - set(expect)),
        "wrong_sure_reads": wrong_sure,
    }


def _print_judged(expected: dict[str, Any]) -> None:
    laid = expected["laid"]
    print(f"laid {len(laid)}: {len(expected['reported'])} reported as cards, "
          f"{len(expected['misread_only'])} only as misreads, {len(expected['not_reported'])} not reported"
          + "".join(f"; {key.replace('_', ' ')}: {', '.join(expected[key])}"
                    for key in ("misread_only", "not_reported", "wrong_reports") if expected[key]))  # fmt: skip
    if not expected["wrong_sure_reads"]:
        print("no sure read of a card not laid")
        return
    for read in expected["wrong_sure_reads"]:
        print(f"  frame {read['frame']}: {read['code']} read surely ({read['confidence']:.2f}), not laid")
    print(WRONG_CARDS)


def _emit(args: argparse.Namespace, line: dict[str, Any]) -> None:
    if args.json:
        print(json.dumps(line))
        return
    if "error" in line:
        print(f"frame {line['frame']}: unusable ({line['error']})")
        return
    by_zone: dict[str, list[str]] = {}
    for read in line["reads"]:
        text = f"{read['code']} {read['confidence']:.2f}" + ("" if read["sure"] else " (unsure)")
        by_zone.setdefault(read["zone"] or "frame", []).append(text)
    parts = [f"{zone}: {', '.join(texts)}" for zone, texts in sorted(by_zone.items())] or ["no card"]
    print(f"frame {line['frame']}: " + "; ".join(parts))
