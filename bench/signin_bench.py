"""Sign-in benchmark: POST /api/login with a valid password, through the studio app, with the lockout bookkeeping and
the access log in place.

    .venv/bin/python bench/signin_bench.py [--sign-ins 200] [--background-failures 2000] [--dir DIR]

Prints one JSON object. Target: a valid sign-in answers in under 100 ms at p99. Each sign-in is the whole path a person
takes: the lock check of the name and the address, the password checked with the production Argon2 parameters
(argon2-cffi's defaults: this is most of the time, by design), the name's failures forgotten, the session written, and
a `SignedIn` record appended to the hash-chained access log, all on a SQLite file (WAL, synchronous=FULL). Before
timing, `--background-failures` failed sign-ins of other names from other addresses (and the locks they cause) are on
record, so the counting runs on a table that is not empty. Wrong-password and locked-out answers are timed too, for
the record (a wrong password costs one Argon2 hash, like a right one, whether or not the name exists).
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient
from sqlmodel import Session

from dealer_ui.app import create_app
from dealer_ui.runtime import StudioSettings
from studio.clock import SystemClock
from studio.domain.roles import Role
from studio.users import AccessFailure, AccessLock

TARGET_P99_MS = 100.0
PASSWORD = "a-long-enough-password"


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(fraction * len(ordered)) - 1))]


def figures(values: list[float]) -> dict[str, float]:
    return {"p50_ms": round(percentile(values, 0.5), 2), "p99_ms": round(percentile(values, 0.99), 2),
            "max_ms": round(max(values), 2), "mean_ms": round(statistics.fmean(values), 2),
            "n": len(values)}  # fmt: skip


def timed(client: TestClient, name: str, password: str, expect: int) -> float:
    start = time.perf_counter()
    response = client.post("/api/login", json={"name": name, "password": password})
    elapsed = (time.perf_counter() - start) * 1000
    if response.status_code != expect:
        raise SystemExit(f"sign-in of {name}: {response.status_code} {response.text}, expected {expect}")
    client.cookies.clear()
    return elapsed


def run(sign_ins: int, background: int, folder: Path) -> dict[str, Any]:
    clock = SystemClock()
    app = create_app(StudioSettings(database=str(folder / "signin.db"), demo=False), clock)
    users = app.state.users
    for n in range(4):
        users.add_user(f"boss-{n}", Role.PIT_BOSS, PASSWORD)
    now = datetime.now(UTC)
    with Session(users._engine) as session:  # the bookkeeping a busy studio has, written directly
        for n in range(background):
            at = (now - timedelta(seconds=n % 600)).isoformat()
            session.add(AccessFailure(subject=f"account:guess-{n % 300}", at=at))
            session.add(AccessFailure(subject=f"address:10.0.{n % 250}.{n % 7}", at=at))
        for n in range(50):
            session.add(AccessLock(subject=f"account:guess-{n}", until=(now + timedelta(minutes=10)).isoformat(),
                                   at=now.isoformat()))  # fmt: skip
        session.commit()
    with TestClient(app) as client:
        for n in range(5):  # warm-up: connections, the first Argon2 allocation
            timed(client, f"boss-{n % 4}", PASSWORD, 200)
        valid = [timed(client, f"boss-{n % 4}", PASSWORD, 200) for n in range(sign_ins)]
        wrong = [timed(client, f"boss-{n % 4}", "wrong-password", 401) for n in range(3)]  # under the lockout's 5
        unknown = [timed(client, f"nobody-{n}", "wrong-password", 401) for n in range(3)]
        locked = [timed(client, f"guess-{n}", "anything", 429) for n in range(3)]
        log_records = users.access_log.store.last_seq("_access")
    return {
        "benchmark": "signin",
        "machine": {"python": platform.python_version(), "platform": platform.platform()},
        "sign_ins": sign_ins,
        "background_failures": background * 2,
        "valid": figures(valid),
        "wrong_password": figures(wrong),
        "unknown_name": figures(unknown),
        "locked_out": figures(locked),
        "access_log_records": log_records,
        "target_p99_ms": TARGET_P99_MS,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sign-ins", type=int, default=200)
    parser.add_argument("--background-failures", type=int, default=2000)
    parser.add_argument("--dir", type=Path, default=None, help="where the temporary database goes")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(dir=args.dir) as folder:
        print(json.dumps(run(args.sign_ins, args.background_failures, Path(folder))))


if __name__ == "__main__":
    main()
