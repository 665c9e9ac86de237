"""`studio odds`: the exact value of every bet for a full or depleted shoe (contract: DESIGN.md §6)."""

from __future__ import annotations

import argparse
import json
from fractions import Fraction
from pathlib import Path
from typing import Any

from studio.domain.analysis import ShoeAnalysis, analyse, as_json
from studio.domain.cards import parse_cards, remove_cards, shoe_composition
from studio.domain.errors import InvalidShoe
from studio.settings import load_pay_table

HELP = "exact odds, RTP and house edge of every bet for a full or depleted shoe"
EPILOG = """\
examples:
  studio odds                          every bet for a full 8-deck shoe
  studio odds --decks 6 --json         a 6-deck shoe, as JSON
  studio odds --removed dealt.txt      the shoe left after the cards in dealt.txt (codes like QH 10S AD)
  studio odds --pay-table no-commission"""


def register(commands: Any) -> None:
    parser = commands.add_parser(
        "odds", help=HELP, description=HELP, epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--decks", type=int, default=8, help="decks in the full shoe (default: 8)")
    parser.add_argument(
        "--removed", type=Path, metavar="FILE", help="file of card codes already drawn, separated by white space"
    )
    parser.add_argument(
        "--pay-table", default="standard", metavar="NAME", help="pay table name in config/paytables/ or a TOML file"
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    shoe = shoe_composition(args.decks)
    if args.removed is not None:
        try:
            text = args.removed.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            raise InvalidShoe(f"{args.removed}: not a text file of card codes") from None
        shoe = remove_cards(shoe, parse_cards(text))
    pay_table = load_pay_table(args.pay_table)
    analysis = analyse(shoe, pay_table)
    if args.json:
        print(json.dumps(as_json(args.decks, analysis, pay_table.name), indent=2))
    else:
        print(as_table(args.decks, analysis, pay_table.name))
    return 0


def _percent(value: Fraction) -> str:
    return f"{float(value) * 100:8.4f}"


def as_table(decks: int, analysis: ShoeAnalysis, pay_table: str) -> str:
    lines = [
        f"{decks}-deck shoe, {analysis.cards_remaining} cards remaining, pay table {pay_table!r}",
        "",
        f"  Banker wins {_percent(analysis.banker)} %   Player wins {_percent(analysis.player)} %   "
        f"Tie {_percent(analysis.tie)} %",
        "",
        f"  {'bet':<14}{'wins %':>10}{'pushes %':>10}{'RTP %':>10}{'edge %':>10}  EV per unit staked",
    ]
    for bet, value in analysis.bets.items():
        favourable = "  <- favours the player" if value.ev > 0 else ""
        lines.append(
            f"  {bet.value:<14}{_percent(value.win):>10}{_percent(value.push):>10}{_percent(value.rtp):>10}"
            f"{_percent(value.house_edge):>10}  {float(value.ev):+.6f}{favourable}"
        )
    return "\n".join(lines)
