"""Simulated rounds per second through the full procedure engine, in memory.

Run as `.venv/bin/python bench/engine_bench.py`; prints one JSON object. Whole seeded 8-deck shoes are dealt by the
scripted dealer of `studio.simulation` through `TableService` (decide, encode, hash-chain and append to the in-memory
store, evolve). Target: at least 5,000 rounds/s.
"""

from __future__ import annotations

import json
import random
import time
from datetime import UTC, datetime

from studio.simulation import seeded_shoe, simulation
from studio.store_memory import MemoryEventStore

SHOES = 20
TARGET_ROUNDS_PER_SECOND = 5_000


def main() -> None:
    rng = random.Random(7)
    shoes = [seeded_shoe(8, rng) for _ in range(SHOES)]
    store = MemoryEventStore()
    sim = simulation(store, datetime(2026, 1, 1, tzinfo=UTC))
    start = time.perf_counter()
    rounds = sum(1 for shoe in shoes for line in sim.deal_shoe(shoe) if "round" in line)
    elapsed = time.perf_counter() - start
    events = store.last_seq("SIM")
    print(json.dumps({
        "shoes": SHOES,
        "rounds": rounds,
        "events": events,
        "seconds": round(elapsed, 3),
        "rounds_per_second": round(rounds / elapsed),
        "events_per_second": round(events / elapsed),
        "target_rounds_per_second": TARGET_ROUNDS_PER_SECOND,
    }))  # fmt: skip


if __name__ == "__main__":
    main()
