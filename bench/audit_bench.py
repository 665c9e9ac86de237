"""`studio log verify` on a generated log: events per second of the audit (hash chain + replay + result checks).

Run as `.venv/bin/python bench/audit_bench.py [--shoes 743] [--keep PATH]`; prints one JSON object. Seeded 8-deck
shoes are dealt through `TableService` into the in-memory store (as `engine_bench.py` does), copied into a SQLite file
in batches, then `studio log verify FILE` runs in a fresh process and is timed from start to exit (start-up
included). 743 shoes are 440,096 events, about a tenth of a table-year (one table, 24 hours a day, a year: about 4.4
million events, 7,433 shoes); the log is held in memory while it is made, about 2.5 KB an event. Target: >= 200,000
events/s.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from engine_bench import service_with_log

from studio.domain.records import NewRecord
from studio.simulation import seeded_shoe
from studio.store_memory import MemoryEventStore
from studio.store_sql import SqlEventStore

SHOES = 743
TARGET_EVENTS_PER_SECOND = 200_000


def make_log(path: Path, shoes: int) -> int:
    """Write a log of `shoes` seeded shoes for table BENCH to the SQLite file at `path`; the number of events."""
    rng = random.Random(7)
    memory = MemoryEventStore()
    service_with_log([seeded_shoe(8, rng) for _ in range(shoes)], memory)
    records = [NewRecord(r.at, r.actor, r.kind, r.data, r.raw) for r in memory.read("BENCH")]
    with SqlEventStore(f"sqlite:///{path}") as store:
        for start in range(0, len(records), 5_000):
            store.append("BENCH", records[start : start + 5_000], start)
    return len(records)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--shoes", type=int, default=SHOES, help=f"seeded 8-deck shoes in the log (default: {SHOES})")
    parser.add_argument("--keep", type=Path, help="write the log to this file and keep it (default: a temporary one)")
    args = parser.parse_args()
    if args.shoes < 1:
        parser.error("--shoes: at least 1")
    with tempfile.TemporaryDirectory() as folder:
        path = args.keep or Path(folder) / "audit.db"
        started = time.perf_counter()
        events = make_log(path, args.shoes)
        generated = time.perf_counter() - started
        command = [sys.executable, "-m", "studio_cli.main", "log", "verify", str(path)]
        started = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"studio log verify failed ({done.returncode}): {done.stdout}{done.stderr}")
    print(json.dumps({
        "shoes": args.shoes, "events": events, "generate_seconds": round(generated, 1),
        "verify": {"seconds": round(seconds, 2), "events_per_second": round(events / seconds),
                   "output": done.stdout.strip()},
        "target_events_per_second": TARGET_EVENTS_PER_SECOND, "load_average": os.getloadavg()[0],
    }))  # fmt: skip


if __name__ == "__main__":
    main()
