"""`studio roads`: the scoreboards of a sequence of round results (contract: DESIGN.md §6)."""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterable, Sequence
from typing import Any

from studio.domain.roads import DERIVED_ROADS, ROWS, Ask, Position, Roads, compute_roads, parse_results

HELP = "bead plate, big road, big eye boy, small road, cockroach pig and ask road for a sequence of results"
EPILOG = """\
SEQ is the shoe's results, oldest first: B (Banker win), P (Player win), T (tie), in any case.

examples:
  studio roads --results BPPPB             the roads as grids
  studio roads --results bbppbtpb --json   the roads as JSON (DESIGN.md §6)

in the text grids the big road shows B or P with the number of ties counted on the cell (B2: a Banker win followed
by two ties); the derived roads show r for red and b for blue."""

ROAD_TITLES = {"big_eye_boy": "Big eye boy", "small_road": "Small road", "cockroach_pig": "Cockroach pig"}


def register(commands: Any) -> None:
    parser = commands.add_parser(
        "roads", help=HELP, description=HELP, epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--results", required=True, metavar="SEQ", help="results oldest first, each B, P or T")
    parser.add_argument("--json", action="store_true", help="print JSON instead of grids")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    roads = compute_roads(parse_results(args.results))
    if args.json:
        print(json.dumps(roads.to_json(), indent=2))
    else:
        print(as_text(roads))
    return 0


def as_text(roads: Roads) -> str:
    counts = roads.counts
    lines = [
        f"{counts.rounds} rounds: Banker {counts.banker}, Player {counts.player}, Tie {counts.tie}",
        "",
        "Bead plate",
        *_grid(zip(roads.bead_plate_grid, roads.bead_plate, strict=True), width=1),
        "",
        "Big road (B2: a Banker win with 2 ties counted on it)",
        *_grid(
            (
                (position, f"{cell.winner}{cell.ties if cell.ties else ''}")
                for column, positions in zip(roads.big_road, roads.big_road_grid, strict=True)
                for cell, position in zip(column, positions, strict=True)
            ),
            width=max((len(str(cell.ties)) + 1 for column in roads.big_road for cell in column), default=1),
        ),
    ]
    for name, _ in DERIVED_ROADS:
        marks = roads.derived(name)
        lines += ["", f"{ROAD_TITLES[name]} ({len(marks)} marks; r red, b blue)"]
        lines += _grid(zip(roads.derived_grid(name), (mark[0] for mark in marks), strict=True), width=1)
    lines += ["", f"Ask Banker: {_ask(roads.ask_banker)}", f"Ask Player: {_ask(roads.ask_player)}"]
    return "\n".join(lines)


def _grid(cells: Iterable[tuple[Position, str]], width: int) -> list[str]:
    """Rows of a 6-row grid, each cell `width` characters wide, `.` where empty; `(empty)` for no cells at all."""
    placed = dict(cells)
    if not placed:
        return ["  (empty)"]
    columns = max(column for column, _ in placed) + 1
    return [
        "  " + " ".join(placed.get((column, row), ".").ljust(width) for column in range(columns)).rstrip()
        for row in range(ROWS)
    ]


def _ask(ask: Ask) -> str:
    marks: Sequence[tuple[str, str | None]] = (
        ("big eye boy", ask.big_eye_boy),
        ("small road", ask.small_road),
        ("cockroach pig", ask.cockroach_pig),
    )
    return ", ".join(f"{title} {mark or '-'}" for title, mark in marks)
