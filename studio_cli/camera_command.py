"""`studio camera`: learn a deck's templates from photos, and read the cards in images (contract: DESIGN.md §6).

Only the command line is defined here; the work (and OpenCV) is imported when a camera command runs, so that every
other `studio` command starts without loading it."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from studio.domain.cards import parse_cards
from studio.domain.errors import StudioError

HELP = "learn a deck's rank and suit templates, and read the cards in images"
EPILOG = """\
examples:
  studio camera enroll photos/ --out deck.npz       photos/ holds QH.jpg, 10S.png, ... one card each
  studio camera recognize table.jpg --json          read every card in table.jpg with the shipped reader
  studio camera recognize --templates deck.npz --zone player=80,300,400,300 frame.png
  studio camera check 0 --frames 100 --zone player=80,300,400,300 --zone banker=700,300,400,300
  studio camera check 0 --frames 60 --expect 9C,AS,10H,KD   four cards laid: fails if any other card is read surely

Without --templates, recognize and check use the shipped reader, a network trained on many decks: no enrollment is
needed. With --templates (a deck enrolled with `studio camera enroll`), the deck's templates confirm or override it."""

ENROLL_HELP = "learn rank and suit templates from photos of a deck"
ENROLL_EPILOG = """\
DIR holds one photo per card, each showing that card alone and named by its code (QH.jpg, 10S.png; QH_2.jpg for a
second photo of the same card), or at least one per rank and per suit. With --labels, DIR holds larger photos and the
CSV (a path, or a name in DIR) gives each card's box: columns image, code, xmin, ymin, xmax, ymax, image paths
relative to DIR."""

RECOGNIZE_HELP = "find and read the cards in images"
CHECK_HELP = "read a folder of frames or a live camera and print, per frame and zone, what the camera would report"
CHECK_EPILOG = """\
INPUT is a folder of images, a video file, an RTSP/HTTP URL or a camera index (0). Each of the first N frames is read
and its cards printed with their confidence (sure ones as cards, the others as unsure: misreads that would suspend
the table); at the end, what CameraSource would have reported (a card once read alike and surely in --stable frames in
a row, a misread otherwise) and how many frames it would not have read again (unchanged since the frame read before
them: few on a table left still mean a noisy or flickering picture). With --expect, the cards laid before the
camera: every sure read and every report is judged against them, and the check fails (exit status 1) if any sure
read is a card not laid. Exit status 1 too if the input cannot be opened."""


def register(commands: Any) -> None:
    parser = commands.add_parser(
        "camera", help=HELP, description=HELP, epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    actions = parser.add_subparsers(title="actions", metavar="ACTION", required=True)

    enroll = actions.add_parser(
        "enroll",
        help=ENROLL_HELP,
        description=ENROLL_HELP,
        epilog=ENROLL_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    enroll.add_argument("folder", type=Path, metavar="DIR", help="photos of the deck's cards")
    enroll.add_argument("--out", type=Path, required=True, metavar="TEMPLATES", help="templates file (.npz) or folder")
    enroll.add_argument("--labels", type=Path, metavar="CSV", help="boxes and codes of the cards in DIR's photos")
    enroll.add_argument(
        "--include",
        action="append",
        default=[],
        metavar="PATTERN",
        help="with --labels, only photos whose path matches this pattern (repeatable), e.g. 'images/train/cam_*'",
    )
    enroll.add_argument("--json", action="store_true", help="print a JSON summary instead of text")
    enroll.set_defaults(run=_run_enroll)

    recognize = actions.add_parser("recognize", help=RECOGNIZE_HELP, description=RECOGNIZE_HELP)
    recognize.add_argument("images", type=Path, nargs="+", metavar="IMAGE", help="image files")
    recognize.add_argument(
        "--templates", type=Path, metavar="TEMPLATES", help="templates from `studio camera enroll` (default: shipped)"
    )
    recognize.add_argument(
        "--zone",
        action="append",
        default=[],
        type=_zone,
        metavar="NAME=X,Y,W,H",
        help="read cards only in this box (repeatable); without zones, anywhere",
    )
    recognize.add_argument(
        "--min-confidence",
        type=_fraction,
        default=0.8,
        metavar="C",
        help="reads below this are listed as unsure (default 0.8, CameraSource's default)",
    )
    recognize.add_argument("--json", action="store_true", help="print JSON instead of a table")
    recognize.set_defaults(run=_run_recognize)

    check = actions.add_parser("check", help=CHECK_HELP, description=CHECK_HELP, epilog=CHECK_EPILOG,
                               formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    check.add_argument("input", metavar="INPUT", help="folder of images, video file, URL or camera index")
    check.add_argument("--frames", type=int, default=30, metavar="N", help="frames to read (default 30)")
    check.add_argument("--templates", type=Path, metavar="TEMPLATES", help="an enrolled deck (optional)")
    check.add_argument(
        "--zone",
        action="append",
        default=[],
        type=_zone,
        metavar="NAME=X,Y,W,H",
        help="read cards only in this box (repeatable)",
    )
    check.add_argument("--min-confidence", type=_fraction, default=0.8, metavar="C", help="as for recognize")
    check.add_argument("--stable", type=int, default=3, metavar="K", help="frames a card must be read alike (3)")
    check.add_argument(
        "--expect",
        type=_cards,
        metavar="CARDS",
        help="the cards laid before the camera, e.g. 9C,AS,10H: a sure read of any other card fails the check",
    )
    check.add_argument("--json", action="store_true", help="print JSON lines (one per frame, then the summary)")
    check.set_defaults(run=_run_check)


def _zone(text: str) -> tuple[str, tuple[int, int, int, int]]:
    name, _, box = text.partition("=")
    try:
        x, y, w, h = (int(value) for value in box.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not NAME=X,Y,W,H with whole numbers") from None
    if not name or w <= 0 or h <= 0:
        raise argparse.ArgumentTypeError(f"{text!r}: a zone needs a name and a positive width and height")
    return name, (x, y, w, h)


def _cards(text: str) -> list[str]:
    try:
        cards = [card.code for card in parse_cards(text)]
    except StudioError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    if not cards:
        raise argparse.ArgumentTypeError("--expect needs at least one card code, e.g. 9C,AS,10H")
    return cards


def _fraction(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"{text!r}: a confidence is between 0 and 1")
    return value


def _run_check(args: argparse.Namespace) -> int:
    from studio_cli import camera_check  # noqa: PLC0415 - OpenCV loads only for camera commands

    return camera_check.run_check(args)


def _run_enroll(args: argparse.Namespace) -> int:
    from studio_cli import camera_tasks  # noqa: PLC0415 - OpenCV loads only for camera commands

    return camera_tasks.run_enroll(args)


def _run_recognize(args: argparse.Namespace) -> int:
    from studio_cli import camera_tasks  # noqa: PLC0415 - OpenCV loads only for camera commands

    return camera_tasks.run_recognize(args)
