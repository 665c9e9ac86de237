"""`studio log verify` on a table-year's log: events per second of the audit (hash chain + replay + result checks).

    .venv/bin/python bench/audit_bench.py [--events 4400000] [--cache DIR] [--fresh]

Prints one JSON object. One table dealing 24 hours a day for a year logs about 4.4 million events (7,433 shoes of
about 592 events). Seeded 8-deck shoes are dealt through `TableService` by the simulation's scripted dealer until the
log holds at least `--events` events, and the log is written to a SQLite file; then `studio log verify FILE` runs in
a fresh process and is timed from start to exit (start-up included). The file is read once beforehand, so that the
figure is the audit's and not the disk's first read of 1.7 GB. Target: >= 200,000 events/s.

Making the log takes minutes (about 13,000 events/s: the table service, the engine and the sealing of every record),
so it is made once and kept under `--cache` (default `artifacts/bench/audit-logs/`), named by what it is made of (the
event count, the seed and the generator's version below); `--fresh` makes it again. Records are sealed onto the chain
exactly as the SQL store seals them, and written in transactions of 20,000 rows with `synchronous=OFF` (a file that is
remade if it is lost: only the audit of it is measured).
"""

from __future__ import annotations

import argparse
import json
import random
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from studio.domain.chain import canonical_json, format_at, seal
from studio.domain.records import GENESIS_HASH, NewRecord, Record
from studio.simulation import seeded_shoe, simulation
from studio.store_sql import SqlEventStore

EVENTS = 4_400_000  # a table-year
SEED = 7
GENERATOR = 1  # bump when the log this script makes changes, so that cached logs are made again
TABLE = "BENCH"
BATCH = 20_000
TARGET_EVENTS_PER_SECOND = 200_000
ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / "artifacts" / "bench" / "audit-logs"


class SpoolingStore:
    """The `EventStore` the generator's table writes to: each append sealed as `SqlEventStore` seals it (chain.seal,
    the same row), the rows written to the file in large transactions. Nothing else reads it while it is made."""

    def __init__(self, connection: sqlite3.Connection) -> None:
        self._connection = connection
        self._seq, self._hash = 0, GENESIS_HASH
        self._rows: list[tuple[Any, ...]] = []

    def append(self, stream: str, records: Sequence[NewRecord], expected_seq: int) -> list[Record]:
        assert stream == TABLE and expected_seq == self._seq, (stream, expected_seq, self._seq)
        sealed = []
        for new in records:
            record = seal(stream, self._seq + 1, new, self._hash)
            sealed.append(record)
            self._rows.append((stream, record.seq, format_at(record.at), record.actor, record.kind,
                               canonical_json(record.data), record.raw, record.prev_hash, record.hash))  # fmt: skip
            self._seq, self._hash = record.seq, record.hash
        if len(self._rows) >= BATCH:
            self.flush()
        return sealed

    def flush(self) -> None:
        with self._connection:
            self._connection.executemany("INSERT INTO event_log VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", self._rows)
        self._rows.clear()

    def read(self, stream: str, after: int = 0) -> Iterator[Record]:
        assert after >= self._seq, "the generator's table reads nothing back once it has started"
        return iter(())

    def last_seq(self, stream: str) -> int:
        return self._seq

    def streams(self) -> list[str]:
        return [TABLE] if self._seq else []

    def close(self) -> None:
        self.flush()


def make_log(path: Path, events: int) -> int:
    """Write a log of at least `events` events of seeded shoes for table BENCH to a new SQLite file at `path`."""
    SqlEventStore(f"sqlite:///{path}").close()  # the studio database's schema, made by its migrations
    connection = sqlite3.connect(path)
    connection.execute("PRAGMA synchronous = OFF")
    store = SpoolingStore(connection)
    rng = random.Random(SEED)
    sim = simulation(store, datetime(2026, 1, 1, tzinfo=UTC), table_id=TABLE)
    started, shoes = time.monotonic(), 0
    while store.last_seq(TABLE) < events:
        for _ in sim.deal_shoe(seeded_shoe(8, rng)):
            pass
        shoes += 1
        if shoes % 200 == 0:
            done = store.last_seq(TABLE)
            rate = done / (time.monotonic() - started)
            print(f"making the log: {done:,}/{events:,} events, {rate:,.0f}/s", file=sys.stderr, flush=True)
    store.close()
    connection.close()
    return store.last_seq(TABLE)


def cached_log(folder: Path, events: int, fresh: bool) -> tuple[Path, float | None]:
    """The log for `events` (made now if it is not in `folder`, or if `fresh`); the seconds it took to make, if made."""
    path = folder / f"audit-log-{events}-events-seed{SEED}-v{GENERATOR}.db"
    if path.exists() and not fresh:
        return path, None
    folder.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".partial")  # renamed once complete: an interrupted run never leaves a log half made
    for stale in (partial, Path(f"{partial}-wal"), Path(f"{partial}-shm")):
        stale.unlink(missing_ok=True)
    started = time.perf_counter()
    make_log(partial, events)
    partial.replace(path)
    return path, time.perf_counter() - started


def read_through(path: Path) -> None:
    with path.open("rb") as file:
        while file.read(1 << 24):
            pass


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--events", type=int, default=EVENTS, help=f"events in the log, at least (default {EVENTS:,})")
    parser.add_argument("--cache", type=Path, default=CACHE, help="folder of the logs made (default: %(default)s)")
    parser.add_argument("--fresh", action="store_true", help="make the log again even if it is in the cache")
    args = parser.parse_args()
    if args.events < 1:
        parser.error("--events: at least 1")
    path, generated = cached_log(args.cache, args.events, args.fresh)
    read_through(path)
    command = [sys.executable, "-m", "studio_cli.main", "log", "verify", str(path), "--table", TABLE]
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=False, cwd=ROOT)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"studio log verify failed ({done.returncode}): {done.stdout}{done.stderr}")
    events = int(done.stdout.split(":", 1)[1].split()[0])  # "OK        table BENCH: 4400123 records, ..."
    print(json.dumps({
        "events": events, "log": str(path), "log_mb": round(path.stat().st_size / 2**20),
        "generate_seconds": None if generated is None else round(generated, 1),
        "verify": {"seconds": round(seconds, 2), "events_per_second": round(events / seconds),
                   "output": done.stdout.strip()},
        "target_events_per_second": TARGET_EVENTS_PER_SECOND,
    }))  # fmt: skip


if __name__ == "__main__":
    main()
