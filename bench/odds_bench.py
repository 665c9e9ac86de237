"""Time the exact analysis of every bet (studio.domain.analysis.analyse: both distributions of
studio.domain.odds, then the EV, RTP and house edge of each bet of the standard pay table) for a full 8-deck shoe
and for depleted shoes.

Run as `.venv/bin/python bench/odds_bench.py [--repeats 15] [--shoes 8]`; prints one JSON object (milliseconds). Each
figure is the best and the median of several repeats on the same shoe; the depleted figures pool the repeats over
several seeded-random shoes (8 decks minus 60 cards each).

`pybaccarat`: PyBaccarat's odds calculator (`ComputeBaccaratOdds(8)`, the `bench` extra) on the full 8-deck shoe in
the same run, and how many times the time of `analyse` it takes; reported as unavailable, with the reason, when the
installed PyBaccarat has none (the release that installs on Linux, 0.12, has none: `bench/pybaccarat_reference.py`).
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import statistics
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from studio.domain.analysis import analyse
from studio.domain.cards import Card, remove_cards, shoe_composition
from studio.domain.paytable import PayTable
from studio.settings import load_pay_table

sys.path.insert(0, str(Path(__file__).resolve().parent))
import pybaccarat_reference  # beside this script

FULL_TARGET_MS = 500.0
DEPLETED_TARGET_MS = 50.0
REPEATS = 15
DEPLETED_SHOES = 8
REMOVED_CARDS = 60
SEED = 20240601


def time_kernel(shoe: Counter[Card], pay_table: PayTable, repeats: int) -> list[float]:
    """Milliseconds per full analysis, one figure per repeat."""
    timings = []
    for _ in range(repeats):
        start = time.perf_counter()
        analyse(shoe, pay_table)
        timings.append((time.perf_counter() - start) * 1000.0)
    return timings


def pybaccarat_odds(repeats: int, ours_ms: float) -> dict[str, Any]:
    """PyBaccarat's odds calculator on a full 8-deck shoe (it computes as it is made), best of `repeats` runs."""
    try:
        calculator = pybaccarat_reference.odds_calculator()
    except ImportError as error:
        return {"available": False, "reason": str(error), "full_8_decks_ms": None, "times_studio": None}
    timings = []
    for _ in range(repeats):
        start = time.perf_counter()
        calculator(8)
        timings.append((time.perf_counter() - start) * 1000.0)
    return {"available": True, "version": pybaccarat_reference.version(), "full_8_decks_ms": round(min(timings), 3),
            "times_studio": round(min(timings) / ours_ms, 1)}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--repeats", type=int, default=REPEATS, help=f"timings per shoe (default: {REPEATS})")
    parser.add_argument("--shoes", type=int, default=DEPLETED_SHOES, help=f"depleted shoes (default: {DEPLETED_SHOES})")
    args = parser.parse_args()
    if args.repeats < 1 or args.shoes < 1:
        parser.error("--repeats and --shoes: at least 1")
    full = shoe_composition(8)
    pay_table = load_pay_table("standard")
    analyse(full, pay_table)  # warm up (imports, caches of the interpreter)
    full_ms = time_kernel(full, pay_table, args.repeats)

    rng = random.Random(SEED)
    cards = list(full.elements())
    depleted_ms: list[float] = []
    per_shoe_best: list[float] = []
    for _ in range(args.shoes):
        shoe = remove_cards(full, rng.sample(cards, REMOVED_CARDS))
        timings = time_kernel(shoe, pay_table, args.repeats)
        depleted_ms.extend(timings)
        per_shoe_best.append(min(timings))

    report = {
        "python": platform.python_version(),
        "repeats": args.repeats,
        "full_8_decks_ms": {
            "best": round(min(full_ms), 3),
            "median": round(statistics.median(full_ms), 3),
            "target": FULL_TARGET_MS,
        },
        "depleted_ms": {
            "shoes": args.shoes,
            "removed_cards": REMOVED_CARDS,
            "best": round(min(depleted_ms), 3),
            "median": round(statistics.median(depleted_ms), 3),
            "worst": round(max(depleted_ms), 3),
            "worst_shoe_best": round(max(per_shoe_best), 3),
            "target": DEPLETED_TARGET_MS,
        },
        "pybaccarat": pybaccarat_odds(min(args.repeats, 3), min(full_ms)),
        "within_targets": statistics.median(full_ms) < FULL_TARGET_MS
        and statistics.median(depleted_ms) < DEPLETED_TARGET_MS,
    }
    print(json.dumps(report))


if __name__ == "__main__":
    main()
