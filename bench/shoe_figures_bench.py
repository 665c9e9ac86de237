"""The live shoe figures (dealer_ui/shoe_figures.py): what one card's figures cost, and whether computing them slows
the table's writer.

Run as `.venv/bin/python bench/shoe_figures_bench.py [--shoes 1] [--pace-ms 100]`; prints one JSON object. Seeded 8-deck
shoes are dealt card by card through `TableService` on a SQLite file (WAL, synchronous=FULL), as the studio's table
writer does, three ways:

- `paced_off` / `paced_on`: one card every `--pace-ms` (100 ms: ten times faster than a dealer), without and with the
  `ShoeFigures` worker following the log as it does in the studio (the observer only queues the records): the
  writer's latency (card command -> durable, p50 / p99 / max, ms) side by side; `figures_lag_ms` is the time from a
  card's return (durable) to its figures being there, p50 / p99.
- `back_to_back_off` / `back_to_back_on`: the cards with no pause at all (the worker always behind and always
  computing): the worst case for the writer sharing the machine with the worker.

`per_card_ms`: the exact analysis of each composition of the shoe, one after the other (median, p99), which is what
the worker spends per card. Targets: the writer's p99 with the figures stays within the engine's target (5 ms), and
a card's figures are there within 50 ms at p99 when paced.
"""

from __future__ import annotations

import argparse
import json
import logging
import platform
import random
import statistics
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from dealer_ui.shoe_figures import ShoeFigures, analyse_here
from studio.clock import SystemClock
from studio.domain import commands as c
from studio.domain.cards import ALL_CARDS, Card
from studio.domain.procedure import Phase
from studio.domain.procedure_config import ProcedureConfig
from studio.domain.roles import Actor, Machine, Role
from studio.settings import load_table_config
from studio.simulation import seeded_shoe
from studio.store_sql import SqlEventStore
from studio.table_service import TableService

SHOES = 1
PACE_MS = 100.0
SEED = 20261201
DEALER = Actor(Role.DEALER, "bench")
SHOE = Actor(Machine.DEVICE, "bench-shoe")


def percentiles(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    return {"p50": round(ordered[len(ordered) // 2], 3), "p99": round(ordered[int(len(ordered) * 0.99)], 3),
            "max": round(ordered[-1], 3), "n": len(ordered)}  # fmt: skip


def deal(shoes: list[list[Card]], with_figures: bool, pace_ms: float) -> dict[str, Any]:
    config = load_table_config()
    config = replace(config, procedure=ProcedureConfig(allow_early_close=True))
    writer: list[float] = []
    lags: list[float] = []
    with tempfile.TemporaryDirectory() as folder, SqlEventStore(f"sqlite:///{Path(folder) / 'cards.db'}") as store:
        table = TableService("BENCH", store, SystemClock(), config.procedure)
        figures = ShoeFigures(store, {"BENCH": config}) if with_figures else None
        if figures is not None:
            figures.start()
        try:
            for cards in shoes:
                start_of_shoe: tuple[c.Command, ...] = (c.ConfirmShuffle(DEALER), c.PlaceCutCard(DEALER))
                for command in start_of_shoe:
                    logged = table.handle(command)
                    if figures is not None:
                        figures.observe("BENCH", logged)
                position = 0
                while table.state.phase is not Phase.AWAITING_SHUFFLE:
                    if table.state.phase is Phase.READY:
                        betting: tuple[c.Command, ...] = (c.OpenBetting(DEALER), c.CloseBetting(DEALER))
                        for command in betting:
                            logged = table.handle(command)
                            if figures is not None:
                                figures.observe("BENCH", logged)
                        continue
                    if position == table.state.cut_position:
                        table.handle(c.ReportCutCard(SHOE, "shoe"))
                    start = time.perf_counter()
                    logged = table.handle(c.DrawCard(SHOE, c.CardRead(cards[position], "bench-shoe", position + 1)))
                    durable = time.perf_counter()
                    writer.append((durable - start) * 1000)
                    position += 1
                    if figures is not None:
                        figures.observe("BENCH", logged)
                    if pace_ms and figures is not None:
                        figures.wait_for("BENCH", logged[-1].record.seq, timeout=10)
                        lags.append((time.perf_counter() - durable) * 1000)
                    if pace_ms:
                        left = pace_ms / 1000 - (time.perf_counter() - start)
                        if left > 0:
                            time.sleep(left)
            if figures is not None:
                start = time.perf_counter()
                assert figures.wait_for("BENCH", table.seq, timeout=600)
                behind = (time.perf_counter() - start) * 1000
        finally:
            if figures is not None:
                figures.stop()
    answer: dict[str, Any] = {"writer_card_to_durable_ms": percentiles(writer)}
    if figures is not None:
        answer["analyses"] = figures.computed
        answer["analysis_mean_ms"] = round(figures.compute_seconds / max(1, figures.computed) * 1000, 3)
        answer["behind_at_the_end_ms"] = round(behind, 1)
    if lags:
        answer["figures_lag_ms"] = percentiles(lags)
    return answer


def per_card(cards: list[Card]) -> dict[str, float]:
    """The analysis of each composition of one shoe, in the order the cards come out."""
    config = load_table_config()
    index = {card: i for i, card in enumerate(ALL_CARDS)}
    seen = [0] * len(ALL_CARDS)
    timings = []
    for card in cards[: config.procedure.shoe_size - config.procedure.cut_card_from_back]:
        seen[index[card]] += 1
        start = time.perf_counter()
        analyse_here(tuple(seen), config)
        timings.append((time.perf_counter() - start) * 1000)
    return {"median": round(statistics.median(timings), 3), **percentiles(timings)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--shoes", type=int, default=SHOES, help=f"seeded 8-deck shoes per run (default: {SHOES})")
    parser.add_argument("--pace-ms", type=float, default=PACE_MS, help=f"ms between paced cards (default: {PACE_MS})")
    args = parser.parse_args()
    logging.getLogger("dealer_ui.shoe_figures").setLevel(logging.ERROR)  # the alerts a seeded shoe raises: not news
    rng = random.Random(SEED)
    shoes = [seeded_shoe(8, rng) for _ in range(args.shoes)]
    report = {
        "benchmark": "shoe_figures",
        "machine": platform.processor() or platform.machine(),
        "python": platform.python_version(),
        "per_card_ms": per_card(shoes[0]),
        "paced_off": deal(shoes, False, args.pace_ms),
        "paced_on": deal(shoes, True, args.pace_ms),
        "back_to_back_off": deal(shoes, False, 0),
        "back_to_back_on": deal(shoes, True, 0),
        "pace_ms": args.pace_ms,
        "target_writer_p99_ms": 5.0,
        "target_figures_lag_p99_ms": 50.0,
    }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
