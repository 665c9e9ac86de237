"""`studio simulate`: whole shoes through the real procedure engine (contract: DESIGN.md §6)."""

from __future__ import annotations

import argparse
import json
import random
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from studio.clock import SystemClock
from studio.domain.cards import parse_cards
from studio.domain.errors import InvalidShoe
from studio.domain.procedure_config import ProcedureConfig
from studio.ports import EventStore
from studio.settings import sqlite_url
from studio.simulation import ShoeSimulation, seeded_shoe, simulation
from studio.store_memory import MemoryEventStore

HELP = "deal whole shoes through the procedure engine, from a shoe file or seeded shuffles"
EPILOG = """\
examples:
  studio simulate --shoe shoe.txt --json             deal the cards in shoe.txt (first card drawn first)
  studio simulate --shoe shoe.txt --cut-card 300     the cut card with 300 cards in front of it
  studio simulate --decks 8 --seed 42 --shoes 3 --json

Without --json each round prints as one readable line. Burns are 6 after the shuffle; the cut card lies in front of
the last 52 cards unless --cut-card says otherwise; the round that draws the first card behind it is the last hand."""


def register(commands: Any) -> None:
    parser = commands.add_parser(
        "simulate", help=HELP, description=HELP, epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--shoe", type=Path, metavar="FILE", help="card codes in draw order, separated by white space")
    source.add_argument("--seed", type=int, help="shuffle seeded shoes instead (with --decks and --shoes)")
    parser.add_argument("--cut-card", type=int, metavar="N", help="cards in front of the cut card")
    parser.add_argument("--decks", type=int, default=8, help="decks per seeded shoe (default: 8)")
    parser.add_argument("--shoes", type=int, default=1, help="how many seeded shoes to deal (default: 1)")
    parser.add_argument("--table", default="SIM", help="table ID used in game numbers (default: SIM)")
    parser.add_argument(
        "--start", type=_utc_time, metavar="TIME", help="UTC start time, e.g. 2026-11-29T15:54:32Z (default: now)"
    )
    parser.add_argument(
        "--log", metavar="DB", help="log every event durably to this SQLite file (default: in memory, discarded)"
    )
    parser.add_argument("--json", action="store_true", help="one JSON object per line")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    if args.decks < 1:
        raise InvalidShoe(f"a shoe holds a whole, positive number of decks, not {args.decks}")
    if args.shoes < 1:
        raise InvalidShoe(f"--shoes must be at least 1, not {args.shoes}")
    config = ProcedureConfig(decks=args.decks)
    start = args.start or SystemClock().now().replace(microsecond=0)
    if args.log is None:
        store: EventStore = MemoryEventStore()
    else:
        from studio.store_sql import SqlEventStore  # noqa: PLC0415 - the database library loads only when used

        store = SqlEventStore(sqlite_url(args.log))
    last_seq = store.last_seq(args.table)
    for last in store.read(args.table, after=last_seq - 1):
        start = max(start, last.at)  # simulated time runs on from an earlier run logged in the same file
    try:
        _deal(args, simulation(store, start, config, args.table))
    finally:
        store.close()
    return 0


def _utc_time(text: str) -> datetime:
    try:
        at = datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an ISO-8601 time such as 2026-11-29T15:54:32Z") from None
    if at.tzinfo is None:
        raise argparse.ArgumentTypeError(f"{text!r} has no time zone; add Z for UTC")
    return at.astimezone(UTC)


def _deal(args: argparse.Namespace, sim: ShoeSimulation) -> None:
    if args.shoe is not None:
        try:
            cards = parse_cards(args.shoe.read_text(encoding="utf-8"))
        except UnicodeDecodeError:
            raise InvalidShoe(f"{args.shoe}: not a text file of card codes") from None
        shoes = [cards]
    else:
        rng = random.Random(args.seed)
        shoes = [seeded_shoe(args.decks, rng) for _ in range(args.shoes)]
    for cards in shoes:
        for line in sim.deal_shoe(cards, args.cut_card):
            print(json.dumps(line) if args.json else readable(line), flush=True)


def readable(line: dict[str, Any]) -> str:
    if "burn" in line:
        return f"burn ({line['reason']}): {' '.join(line['burn'])}"
    marks = [m for m in ("natural", "player_pair", "banker_pair", "last_hand") if line[m]]
    return (
        f"{line['game_id']}  P {' '.join(line['player']):<11} ({line['player_total']})  "
        f"B {' '.join(line['banker']):<11} ({line['banker_total']})  {line['winner']:<6} {' '.join(marks)}"
    )
