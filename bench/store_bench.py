"""Event store benchmark: durable append latency and replay rate on a SQLite file (WAL, synchronous=FULL).

    .venv/bin/python bench/store_bench.py [--appends 2000] [--replay 100000] [--dir DIR]

Prints one JSON object. Targets: append p99 <= 5 ms (one card event, committed and fsynced before it returns), and
replay (read + verify_chain) >= 50,000 events/s; `replay_stored` is the same chain checked on the stored text
(`stored_rows` + `verify_stored_chain`, as `studio log verify` checks it), without a target. The database goes in a
fresh temporary folder under DIR (default: the system's temporary folder); put DIR on the disk the studio will use,
since fsync cost is the disk's.
"""

from __future__ import annotations

import argparse
import json
import platform
import sqlite3
import statistics
import tempfile
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import sqlalchemy
from sqlalchemy.engine import make_url

from studio.domain.chain import canonical_json, verify_chain, verify_stored_chain
from studio.domain.records import NewRecord
from studio.store_sql import SqlEventStore

APPEND_P99_TARGET_MS = 5.0
REPLAY_TARGET_PER_S = 50_000
T0 = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)


def card_event(i: int) -> NewRecord:
    """A typical CardDealt fact as the table service logs it: ~300 bytes of canonical JSON, plus the shoe's bytes."""
    data = {
        "game_id": f"T01-20240501-120000-{i // 6:06d}",
        "round": i // 6,
        "position": "banker" if i % 2 else "player",
        "index": i % 6,
        "card": "QH",
        "source": "shoe-1",
        "confidence": 0.9931,
        "crop": f"camera-1/2024-05-01/{i:08d}.jpg",
        "dealer": "dealer:alice",
        "shoe": 17,
        "cards_left": 388 - i % 300,
        "read_at": "2024-05-01T12:00:00.000000Z",
        "table": "studio-a/table-01",
        "face_up": True,
    }
    return NewRecord(T0 + timedelta(microseconds=i), "device:shoe-1", "CardDealt", data, raw="02514803")


def percentile(sorted_values: list[float], fraction: float) -> float:
    index = min(len(sorted_values) - 1, max(0, round(fraction * len(sorted_values)) - 1))
    return sorted_values[index]


def bench_append(url: str, count: int) -> dict[str, Any]:
    stream = f"table-{uuid.uuid4().hex[:8]}"  # a stream of its own: a database given with --database may be reused
    with SqlEventStore(url) as store:
        store.append(f"warm-up-{stream}", [card_event(0)], 0)  # connection, table and statement caches
        latencies: list[float] = []
        for seq in range(count):
            item = card_event(seq)
            start = time.perf_counter()
            store.append(stream, [item], expected_seq=seq)
            latencies.append((time.perf_counter() - start) * 1000)
    latencies.sort()
    p99 = percentile(latencies, 0.99)
    return {
        "appends": count,
        "data_bytes": len(canonical_json(dict(card_event(0).data))),
        "p50_ms": round(percentile(latencies, 0.50), 3),
        "p99_ms": round(p99, 3),
        "max_ms": round(latencies[-1], 3),
        "mean_ms": round(statistics.fmean(latencies), 3),
        "target_p99_ms": APPEND_P99_TARGET_MS,
        "met": p99 <= APPEND_P99_TARGET_MS,
    }


def bench_replay(url: str, count: int) -> dict[str, Any]:
    stream = f"table-{uuid.uuid4().hex[:8]}"
    with SqlEventStore(url) as store:
        seq = 0
        while seq < count:  # filled in batches: only the replay is timed
            size = min(5_000, count - seq)
            seq += len(store.append(stream, [card_event(i) for i in range(seq, seq + size)], expected_seq=seq))
    with SqlEventStore(url) as store:  # a fresh instance, as after a restart
        start = time.perf_counter()
        verdict = verify_chain(store.read(stream))
        seconds = time.perf_counter() - start
        start = time.perf_counter()  # the same chain on the stored text, as `studio log verify` checks it
        stored = verify_stored_chain(store.stored_rows(stream))
        stored_seconds = time.perf_counter() - start
    if not verdict.ok or verdict.records != count or stored != verdict:
        raise SystemExit(f"replay did not verify: {verdict}, {stored}")
    rate = count / seconds
    return {
        "events": count,
        "seconds": round(seconds, 3),
        "events_per_s": round(rate),
        "target_events_per_s": REPLAY_TARGET_PER_S,
        "met": rate >= REPLAY_TARGET_PER_S,
        "stored_text": {"seconds": round(stored_seconds, 3), "events_per_s": round(count / stored_seconds)},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--appends", type=int, default=2_000)
    parser.add_argument("--replay", type=int, default=100_000)
    parser.add_argument("--dir", type=Path, default=None, help="folder for the temporary database files")
    parser.add_argument(
        "--database",
        metavar="URL",
        help="another database, e.g. postgresql+psycopg://studio@db/bench "
        "(default: SQLite files in a temporary folder); each run writes streams of its own there",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(dir=args.dir, prefix="store-bench-") as folder:
        append_url = args.database or f"sqlite:///{Path(folder) / 'append.db'}"
        replay_url = args.database or f"sqlite:///{Path(folder) / 'replay.db'}"
        result = {
            "benchmark": "event store " + ("(SQLite, WAL, synchronous=FULL)" if args.database is None else
                                           f"({make_url(args.database).get_backend_name()})"),
            "python": platform.python_version(),
            "sqlite": sqlite3.sqlite_version,
            "sqlalchemy": sqlalchemy.__version__,
            "append": bench_append(append_url, args.appends),
        }  # fmt: skip
        replay = bench_replay(replay_url, args.replay)
        result["replay_stored"] = replay.pop("stored_text")
        result["replay"] = replay
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
