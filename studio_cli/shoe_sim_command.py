"""`studio shoe-sim`: a simulated smart shoe or card scanner on a pseudo-terminal, for demos and for testing drivers."""

from __future__ import annotations

import argparse
import random
import time
from pathlib import Path
from typing import Any

from drivers.simulator.pty_device import PtyDevice
from drivers.simulator.shoe_sim import PROTOCOLS, Faults, ShoeSimulator
from studio.domain.cards import parse_cards
from studio.domain.errors import InvalidShoe, StudioError
from studio.simulation import seeded_shoe

HELP = "run a simulated shoe or card scanner on a pseudo-terminal and print its device path"
EPILOG = """\
The host opens the printed path with pyserial like any serial device (e.g. the url of a [[sources]] entry).

examples:
  studio shoe-sim --seed 7                                a smart shoe, one card every 2 s
  studio shoe-sim --protocol line --baud 9600 --seed 7    a line card scanner at 9600 baud
  studio shoe-sim --shoe shoe.txt --link /tmp/shoe0 --faults garbage=0.05,drop=0.02,corrupt=0.02,unplug_after=30

faults: garbage, drop, duplicate, corrupt (probabilities per frame), delay (seconds), unplug_after (cards),
unplug_seconds."""


def register(commands: Any) -> None:
    parser = commands.add_parser(
        "shoe-sim", help=HELP, description=HELP, epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--protocol", choices=PROTOCOLS, default="smart-shoe")
    order = parser.add_mutually_exclusive_group()
    order.add_argument("--shoe", type=Path, metavar="FILE", help="card codes in draw order")
    order.add_argument("--seed", type=int, help="a seeded shuffle (default: random)")
    parser.add_argument("--decks", type=int, default=8, help="decks in a seeded shoe (default: 8)")
    parser.add_argument(
        "--cut-card", type=int, metavar="N", help="cards in front of the cut card (default: all but 52)"
    )
    parser.add_argument("--baud", type=int, help="emulate this baud rate (default: as fast as the pty goes)")
    parser.add_argument("--interval", type=float, default=2.0, help="seconds between cards (default: 2)")
    parser.add_argument("--link", type=Path, help="also make this path a link to the device, kept across unplugs")
    parser.add_argument("--faults", type=_faults, default=Faults(), help="faults to inject, e.g. drop=0.05")
    parser.set_defaults(run=run)


def _faults(text: str) -> Faults:
    try:
        return Faults.parse(text)
    except StudioError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def run(args: argparse.Namespace) -> int:
    if args.shoe is not None:
        cards = parse_cards(args.shoe.read_text(encoding="utf-8"))
    else:
        if args.decks < 1:
            raise InvalidShoe(f"a shoe holds a whole, positive number of decks, not {args.decks}")
        cards = seeded_shoe(args.decks, random.Random(args.seed))
    cut = args.cut_card if args.cut_card is not None else max(0, len(cards) - 52)
    sim = ShoeSimulator(
        cards, args.protocol, device=PtyDevice(link=args.link, baud=args.baud), faults=args.faults,
        seed=args.seed or 0, cut_card_at=cut,
    )  # fmt: skip
    path = sim.start()
    print(f"{args.protocol} on {path} ({len(cards)} cards, cut card after {cut}); Ctrl-C to stop", flush=True)
    try:
        while sim.remaining:
            time.sleep(args.interval)
            sim.draw()
        time.sleep(1.0)  # let the last frame be acknowledged
    finally:
        sim.stop()
    return 0
