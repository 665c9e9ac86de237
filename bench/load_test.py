"""Load test: many tables dealing simulated shoes at 10× real speed while thousands of WebSocket subscribers follow
their results feeds; nothing may be lost, duplicated or out of order.

    .venv/bin/python bench/load_test.py                       # the full run: 20 tables, 2,000 subscribers, 10 minutes
    .venv/bin/python bench/load_test.py --tables 3 --subscribers 60 --minutes 0.33    # a short run (the test suite's)

Options: --tables, --subscribers (spread evenly over the tables), --minutes (of dealing), --card-seconds,
--betting-seconds, --result-seconds, --croupier-draws (see below), --game-servers (API keys the subscribers use),
--cut-connections N (cut N subscribers' connections while dealing, to exercise resuming), --sample-seconds, --dir,
--feed-url (see below).

The studio. The real server (`studio run`: uvicorn, SQLite in a fresh temporary folder, demo accounts) serves tables
T01, T02, ... Each table file has no [[sources]], so each table reads its own built-in simulated smart shoe on a
kernel pseudo-terminal through the real serial driver, and `--auto-deal` makes the shoe draw a card whenever one is
due and closes betting when the timer runs out. The rest of a shoe's cycle is the dealer's: confirming the shuffle,
placing the cut card, opening betting, calling "no more bets". This script plays one croupier per table: it signs in
as the demo dealer, watches the table on the dealer console's WebSocket (`/ws/tables/{table}`) and sends what the
console asks for through the dealer's API. A suspension (none is expected) is counted and resolved by the demo pit
boss ("continue", else "void"), as the floor would.

The auto-dealer draws a card whenever one is due, once the card it drew last has been logged (an earlier version did
not wait, and on a busy machine a card nobody asked for suspended the table with `card_not_due`). `--croupier-draws`
deals without the auto-dealer: each croupier draws the next card through the dealer's API
(`POST /api/tables/{table}/simulator/draw`) once the card drawn before it is on the console, at most one per card
interval.

10× real speed. A real table deals a card about every 2 s, keeps betting open about 15 s and shows the result a few
seconds before the next round; so by default a card every 0.2 s, "no more bets" 1.5 s after betting opens and 0.5 s
between a result and the next round. The table's timer is whole seconds (2 s here, early close allowed): the croupier
calls "no more bets" at 1.5 s, and the auto-dealer closes betting at 2 s if the croupier is late. A shoe (8 decks, cut
card one deck from the back) lasts about 70 rounds, about 4 minutes at this pace.

The subscribers. Each opens `/ws/feed/{table}?after=0` with a game server's API key before dealing starts, and keeps
every message's seq and arrival time. They run the `websockets` library's sans-I/O protocol on plain asyncio
transports (bench/feed_clients.py), so 2,000 of them cost this process little. A subscriber whose connection ends
(the server drops one that falls 10,000 messages behind with close code 1013; `--cut-connections` cuts some on
purpose) reconnects with `?after=` its last seq and must still end with nothing lost.

Latency: from the time the record was logged (the `at` of the feed message, taken by the table service just before the
durable append) to the time the subscriber's socket handed over the frame, both on this machine's wall clock. It
includes the SQLite append, the fan-out and loopback; messages replayed from the log after a reconnect count with the
time they waited.

The check, at the end: the croupiers let the round under way finish and stop; each table's REST feed
(`GET /api/feed/{table}?after=N`, all pages) is the truth; every subscriber is given up to 20 s to have its table's
last message; then every subscriber's seqs must equal the REST feed's seqs, in order: lost (in the feed, never
received), duplicated (received more than once), out of order (received after a higher seq), unexpected (received, not
in the feed). Every distinct payload received must equal the REST feed's message of its seq (content mismatch).

Prints one JSON object: the settings, messages delivered and the counts above, latency p50/p99/max in ms, connections
dropped by close code and reconnects, rounds per table, memory (VmRSS, sampled every few seconds) of the studio and
of this client at start, when dealing starts (every subscriber connected), at its peak and at the end, CPU use while
dealing (% of one core), the load average. Exits 0 only if nothing was lost, duplicated, out
of order, unexpected or altered, every table dealt at least one round, and the server lived to the end; 1 otherwise.

Bounded and clean: loopback only; a hard timeout of the run time plus 4 minutes; the server (and the simulated shoes'
ptys it owns) is stopped at the end, on Ctrl-C, on SIGTERM and on any error, and dies with this script even if the
script is killed outright (SIGKILL leaves only the temporary folder behind); everything it writes (database, table
files, logs, the ptys' links) lives in a temporary folder that is removed.

`--feed-servers N` tests the scale-out: a Redis server (Debian's `redis-server`, on a free loopback port, nothing
persisted) is started, the studio publishes to it (`studio run --redis`), N stateless feed servers (`studio feed`)
read it, and the subscribers connect to those (spread evenly), while the croupiers and the REST check still use the
studio. `--feed-url ws://HOST:PORT` (repeatable) points the subscribers at feed servers started elsewhere.
`start_studio` is the one function that starts servers and says where they are; replace it to test another
deployment.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import math
import os
import platform
import random
import signal
import socket
import subprocess
import sys
import tempfile
import time
from array import array
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx2
import numpy as np
from feed_clients import (
    StudioServer,
    WebSocketClient,
    connect,
    cpu_seconds,
    create_api_keys,
    free_port,
    loop_factory,
    open_clients,
    raise_open_files,
    rss_mb,
    stop_process,
    studio_server,
)

HARD_TIMEOUT_MARGIN = 240.0  # seconds beyond the dealing time: start-up, opening the subscribers, the final checks
WIND_DOWN_SECONDS = 60.0  # for the croupiers to finish the rounds under way
CATCH_UP_SECONDS = 20.0  # for every subscriber to have its table's last message at the end
RESTING = {"open_betting", "shuffle", "cut", "closed"}  # what the console asks for when no round is under way
DEALER = ("dealer", "dealer")  # the demo accounts of `studio run`
PIT_BOSS = ("pitboss", "pitboss")


@dataclass(frozen=True)
class Pace:
    card_seconds: float  # the auto-dealer draws a card this often while one is due
    betting_seconds: float  # "no more bets" this long after betting opens
    result_seconds: float  # between a result and the next round

    def table_toml(self, table_id: str) -> str:
        """A table on the defaults with a whole-second timer (early close allowed) and the built-in simulated shoe."""
        timer = max(1, math.ceil(self.betting_seconds))
        return (f'[table]\nid = "{table_id}"\n\n[procedure]\nbetting_seconds = {timer}\nwarning_seconds = 1\n'
                "allow_early_close = true\n")  # fmt: skip


# Where the servers are: the one replaceable part.


@dataclass
class Deployment:
    """Where the load test finds the studio: its API (dealer commands, REST feed), the WebSocket base URLs the
    subscribers use, the game servers' API keys, and the processes whose memory is sampled."""

    api: str
    feeds: list[str]
    keys: list[str]
    processes: dict[str, int]
    failure: Callable[[], str | None]  # why a server died, or None while all run


@contextlib.contextmanager
def start_studio(work: Path, table_ids: list[str], args: argparse.Namespace) -> Iterator[Deployment]:
    """`studio run` with one file per table, auto-dealing, and game servers' API keys made on its database first;
    stopped when the block ends. Subscribers use `--feed-url` if given, else the studio itself."""
    pace = pace_of(args)
    table_files = []
    for table_id in table_ids:
        path = work / f"{table_id}.toml"
        path.write_text(pace.table_toml(table_id))
        table_files.append(path)
    database = str(work / "studio.db")
    keys = create_api_keys(database, [f"load-game-server-{n + 1}" for n in range(args.game_servers)])
    auto_deal = [] if args.croupier_draws else ["--auto-deal", str(pace.card_seconds)]
    with contextlib.ExitStack() as stack:
        redis = stack.enter_context(redis_server(work)) if args.feed_servers else None
        extra = [*auto_deal, "--redis", redis] if redis else auto_deal
        server = stack.enter_context(studio_server(work, database, table_files, extra))
        processes = {"studio": server.process.pid}
        feeds = args.feed_url or [server.ws_base]
        failures = [server.exited]
        if redis:
            feed_servers = [
                stack.enter_context(feed_server(work, database, redis, n)) for n in range(args.feed_servers)
            ]
            feeds = [feed.ws_base for feed in feed_servers]
            processes |= {f"feed{n + 1}": feed.process.pid for n, feed in enumerate(feed_servers)}
            failures += [feed.exited for feed in feed_servers]

        def failure() -> str | None:
            return next((reason for reason in (check() for check in failures) if reason), None)

        yield Deployment(server.base, feeds, keys, processes, failure)


@contextlib.contextmanager
def redis_server(work: Path) -> Iterator[str]:
    """Debian's redis-server on a free loopback port, nothing persisted; its URL."""
    port = free_port()
    with (work / "redis.log").open("wb") as output:
        command = ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                   "--dir", str(work)]  # fmt: skip
        process = subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 20
        while True:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.2):
                break
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"redis-server did not start: {(work / 'redis.log').read_text()[-1000:]}")
            time.sleep(0.05)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        stop_process(process)


@contextlib.contextmanager
def feed_server(work: Path, database: str, redis: str, number: int) -> Iterator[StudioServer]:
    """`studio feed` on a free loopback port, stopped when the block ends."""
    port = free_port()
    command = [sys.executable, "-m", "studio_cli.main", "feed", "--database", database, "--redis", redis,
               "--host", "127.0.0.1", "--port", str(port)]  # fmt: skip
    log = work / f"feed{number + 1}.log"
    with log.open("wb") as output:
        process = subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT, cwd=work)
    server = StudioServer(process, f"http://127.0.0.1:{port}", log)
    try:
        deadline = time.monotonic() + 30
        while True:
            reason = server.exited()
            if reason is not None or time.monotonic() > deadline:
                raise RuntimeError(reason or f"feed server {number + 1} did not answer")
            with contextlib.suppress(httpx2.HTTPError):
                if httpx2.get(f"{server.base}/healthz", timeout=1).status_code == 200:
                    break
            time.sleep(0.1)
        yield server
    finally:
        stop_process(process)


# Subscribers.


@dataclass(eq=False)
class TableFeed:
    """One table's feed as the subscribers receive it: each distinct payload once, with its seq (decoded once)."""

    table_id: str
    payloads: dict[bytes, int] = field(default_factory=dict)

    def seq_of(self, data: bytes) -> int:
        seq = self.payloads.get(data)
        if seq is None:
            seq = self.payloads[data] = int(json.loads(data)["seq"])
        return seq


@dataclass
class Connections:
    """What happened to the subscribers' connections: why they ended (close code) and how often they came back."""

    dropped: Counter[str] = field(default_factory=Counter)
    reconnects: int = 0
    failed_reconnects: int = 0
    stopping: bool = False
    tasks: set[asyncio.Task[None]] = field(default_factory=set)


class FeedConnection(WebSocketClient):
    clock = time.time  # arrivals on the wall clock, to compare with the records' `at`

    def __init__(self, subscriber: Subscriber, url: str) -> None:
        super().__init__(url, {"X-API-Key": subscriber.key})
        self.subscriber = subscriber
        self.cut = False  # cut by this script (--cut-connections), as a network failure would

    def cut_off(self) -> None:
        if self.transport is not None and not self.transport.is_closing():
            self.cut = True
            self.transport.abort()

    def text_received(self, arrived: float, data: bytes) -> None:
        self.subscriber.received(arrived, data)

    def ended(self, exc: Exception | None) -> None:
        self.subscriber.ended(self)


class Subscriber:
    """One game server following one table's feed, across reconnects: the seq and arrival time of every message."""

    def __init__(self, feed: TableFeed, base: str, key: str, connections: Connections) -> None:
        self.feed, self.base, self.key, self.connections = feed, base, key, connections
        self.seqs = array("q")
        self.arrivals = array("d")
        self.last = 0  # the highest seq received: where a reconnection resumes
        self.connection: FeedConnection | None = None

    def url(self) -> str:
        return f"{self.base}/ws/feed/{self.feed.table_id}?after={self.last}"

    def factory(self) -> tuple[Callable[[], FeedConnection], str]:
        url = self.url()
        return (lambda: FeedConnection(self, url)), url

    def opened(self, connection: FeedConnection) -> None:
        self.connection = connection

    def received(self, arrived: float, data: bytes) -> None:
        seq = self.feed.seq_of(data)
        self.seqs.append(seq)
        self.arrivals.append(arrived)
        self.last = max(self.last, seq)

    def ended(self, connection: FeedConnection) -> None:
        if self.connections.stopping:
            return
        code = connection.close_code
        reason = "cut by the load test" if connection.cut else str(code) if code is not None else "no close frame"
        self.connections.dropped[reason] += 1
        task = asyncio.get_running_loop().create_task(self.reconnect())
        self.connections.tasks.add(task)
        task.add_done_callback(self.connections.tasks.discard)

    async def reconnect(self) -> None:
        delay = 0.1
        while not self.connections.stopping:
            await asyncio.sleep(delay)
            try:
                self.opened(await connect(*self.factory()))
            except Exception as error:  # refused, timed out, reset: try again, with a growing pause
                self.connections.failed_reconnects += 1
                print(f"reconnect to {self.feed.table_id} failed: {error!r}", file=sys.stderr)
                delay = min(2 * delay, 5.0)
                continue
            self.connections.reconnects += 1
            return

    def close(self) -> None:
        if self.connection is not None:
            self.connection.close()


async def open_subscribers(
    feeds: list[TableFeed], deployment: Deployment, count: int, connections: Connections
) -> list[Subscriber]:
    """`count` subscribers spread evenly over the tables, the feed servers and the game servers' keys."""
    subscribers = [
        Subscriber(feeds[n % len(feeds)], deployment.feeds[n % len(deployment.feeds)],
                   deployment.keys[n % len(deployment.keys)], connections)
        for n in range(count)
    ]  # fmt: skip
    opened = await open_clients([subscriber.factory() for subscriber in subscribers])
    for subscriber, connection in zip(subscribers, opened, strict=True):
        subscriber.opened(connection)
    return subscribers


async def cut_connections(subscribers: list[Subscriber], count: int, seconds: float) -> None:
    """Cut `count` subscribers' connections at even intervals while the tables deal (seeded choice): each must
    reconnect with its last seq and still end with every message once."""
    chosen = random.Random(7)
    for _ in range(count):
        await asyncio.sleep(seconds / (count + 1))
        connection = chosen.choice(subscribers).connection
        if connection is not None:
            connection.cut_off()


# Croupiers.


class Console(WebSocketClient):
    """The dealer console's live view of a table: the whole state, on every change and every second."""

    def __init__(self, url: str, token: str) -> None:
        super().__init__(url, {"Authorization": f"Bearer {token}"})
        self.view: dict[str, Any] = {}
        self.changed = asyncio.Event()
        self.gone = False

    def text_received(self, arrived: float, data: bytes) -> None:
        self.view = json.loads(data)
        self.changed.set()

    def ended(self, exc: Exception | None) -> None:
        self.gone = True
        self.changed.set()


@dataclass
class Floor:
    """What the croupiers share: the studio's API signed in as the dealer, the pit boss's token, the pace, the stop
    signal, and what they did."""

    http: httpx2.AsyncClient
    ws_base: str
    dealer_token: str
    pit_boss_token: str
    pace: Pace
    draws: bool  # the croupiers draw the cards (--croupier-draws), not the server's auto-dealer
    stop: asyncio.Event = field(default_factory=asyncio.Event)
    commands: Counter[str] = field(default_factory=Counter)
    refused: Counter[str] = field(default_factory=Counter)
    suspensions: Counter[str] = field(default_factory=Counter)
    console_reconnects: int = 0


class Croupier:
    """Deals one table: does what its console asks for (the simulated shoe itself draws the cards), until told to stop
    and no round is under way."""

    def __init__(self, table_id: str, floor: Floor) -> None:
        self.table_id, self.floor = table_id, floor
        self.seq = 0  # the table's seq as the last command's answer showed it: older console views are stale
        self.drawn_at: int | None = None  # the table's cards_drawn when this croupier last drew a card
        self.drew = 0.0  # when (monotonic)

    async def run(self) -> None:
        while True:
            console = await connect(lambda: Console(self.url(), self.floor.dealer_token), self.url())
            try:
                if await self.follow(console):
                    return
            finally:
                console.close()
            self.floor.console_reconnects += 1
            await asyncio.sleep(0.5)

    def url(self) -> str:
        return f"{self.floor.ws_base}/ws/tables/{self.table_id}"

    async def follow(self, console: Console) -> bool:
        """Act on the console until stopped at rest (True) or the console connection ends (False)."""
        while True:
            await console.changed.wait()
            console.changed.clear()
            if console.gone:
                return False
            view = console.view
            if view["seq"] < self.seq:
                continue
            action = view["next_action"]["action"]
            if self.floor.stop.is_set() and action in RESTING:
                return True
            await self.act(action, view)

    async def act(self, action: str, view: dict[str, Any]) -> None:
        if action == "shuffle":
            await self.command("shuffle")
        elif action == "cut":
            await self.command("cut", {})
        elif action == "open_betting":
            await self.deal_round()
        elif action == "close_betting":
            await self.command("close-betting")
        elif action == "call_pit_boss":
            await self.call_pit_boss(view["suspension"])
        elif action == "closed":
            await self.command("open", pit_boss=True)
        elif action in ("burn", "deal") and self.floor.draws:
            await self.draw(view["cards_drawn"])
        # otherwise ("burn", "deal", "wait_for_bets") the auto-dealer and the timer do it

    async def draw(self, cards_drawn: int) -> None:
        """Slide the next card out of the simulated shoe once the card drawn before it is on the console, at most one
        card per `card_seconds`."""
        if cards_drawn == self.drawn_at:
            return
        await asyncio.sleep(self.drew + self.floor.pace.card_seconds - time.monotonic())
        self.drawn_at, self.drew = cards_drawn, time.monotonic()
        await self.command("simulator/draw")

    async def deal_round(self) -> None:
        pace = self.floor.pace
        await asyncio.sleep(pace.result_seconds)
        if self.floor.stop.is_set():
            return
        opened = time.monotonic()
        if await self.command("open-betting"):
            await asyncio.sleep(max(0.0, pace.betting_seconds - (time.monotonic() - opened)))
            await self.command("close-betting")  # refused if the timer ran out first and the table closed it

    async def call_pit_boss(self, suspension: dict[str, Any]) -> None:
        self.floor.suspensions[suspension["reason"]] += 1
        print(f"{self.table_id} suspended: {suspension['detail']}", file=sys.stderr)
        if not await self.command("continue", {"reason": "load test"}, pit_boss=True):
            await self.command("void", {"reason": "load test"}, pit_boss=True)

    async def command(self, action: str, body: dict[str, Any] | None = None, pit_boss: bool = False) -> bool:
        """POST a dealer's (or the pit boss's) command; False if the procedure refused it (409)."""
        token = self.floor.pit_boss_token if pit_boss else self.floor.dealer_token
        response = await self.floor.http.post(f"/api/tables/{self.table_id}/{action}", json=body,
                                              headers={"Authorization": f"Bearer {token}"})  # fmt: skip
        if response.status_code == 409:
            self.floor.refused[action] += 1
            return False
        response.raise_for_status()
        self.floor.commands[action] += 1
        table = response.json().get("table")  # the table's state after the command (not for a simulated draw)
        self.seq = max(self.seq, table["seq"] if table else 0)
        return True


# Memory and liveness.


@dataclass
class Samples:
    """Resident memory in MB per process name ("client" is this one): every sample, and one taken when dealing began
    (every subscriber connected)."""

    rss: dict[str, list[float]] = field(default_factory=dict)
    at_dealing_start: dict[str, float | None] = field(default_factory=dict)
    failure: str | None = None

    def take(self, processes: dict[str, int | None]) -> None:
        for name, pid in processes.items():
            value = rss_mb(pid)
            if value is not None:
                self.rss.setdefault(name, []).append(value)

    def mark(self, processes: dict[str, int | None]) -> None:
        self.at_dealing_start = {name: rss_mb(pid) for name, pid in processes.items()}

    def summary(self) -> dict[str, dict[str, float | None]]:
        def mb(value: float | None) -> float | None:
            return None if value is None else round(value, 1)

        return {name: {"start": mb(values[0]), "dealing_start": mb(self.at_dealing_start.get(name)),
                       "peak": mb(max(values)), "end": mb(values[-1])}
                for name, values in self.rss.items()}  # fmt: skip


def sampled_processes(deployment: Deployment) -> dict[str, int | None]:
    return {**deployment.processes, "client": None}


async def sample(deployment: Deployment, every: float, samples: Samples, died: asyncio.Event) -> None:
    """Every `every` seconds: the servers' and this client's resident memory; stop everything if a server died."""
    while True:
        samples.take(sampled_processes(deployment))
        samples.failure = deployment.failure()
        if samples.failure is not None:
            died.set()
            return
        await asyncio.sleep(every)


def cpu_use(processes: dict[str, int | None]) -> Callable[[], dict[str, float | None]]:
    """Start measuring CPU time; the function returned gives each process's use since then, in % of one core."""
    started = time.monotonic()
    before = {name: cpu_seconds(pid or os.getpid()) for name, pid in processes.items()}

    def since() -> dict[str, float | None]:
        seconds = time.monotonic() - started
        shares: dict[str, float | None] = {}
        for name, pid in processes.items():
            after = cpu_seconds(pid or os.getpid())
            start = before[name]
            shares[name] = None if start is None or after is None else round(100 * (after - start) / seconds, 1)
        return shares

    return since


# The check.


async def rest_feed(http: httpx2.AsyncClient, table_id: str, key: str) -> list[dict[str, Any]]:
    """Every message of the table's feed, page by page, from the REST endpoint: the truth the streams must match."""
    messages: list[dict[str, Any]] = []
    after = 0
    while True:
        response = await http.get(f"/api/feed/{table_id}", params={"after": after}, headers={"X-API-Key": key})
        response.raise_for_status()
        page = response.json()
        if not page["messages"]:
            return messages
        messages += page["messages"]
        after = page["next_after"]


async def catch_up(subscribers: list[Subscriber], last: dict[str, int], timeout: float) -> int:
    """Wait until every subscriber has its table's last message; how many still lack it after `timeout`."""
    deadline = time.monotonic() + timeout
    while True:
        behind = sum(subscriber.last < last[subscriber.feed.table_id] for subscriber in subscribers)
        if not behind or time.monotonic() > deadline:
            return behind
        await asyncio.sleep(0.2)


@dataclass
class Tally:
    delivered: int = 0
    expected: int = 0
    lost: int = 0
    duplicated: int = 0
    out_of_order: int = 0
    unexpected: int = 0
    content_mismatch: int = 0
    latencies: list[np.ndarray[Any, Any]] = field(default_factory=list)  # ms, one array per subscriber


def check_table(feed: TableFeed, messages: list[dict[str, Any]], subscribers: list[Subscriber], tally: Tally) -> None:
    """Compare every subscriber of the table with the REST feed; add the counts and latencies to `tally`."""
    expected = np.array([message["seq"] for message in messages], dtype=np.int64)
    logged_at = np.full(int(expected.max(initial=0)) + 1, np.nan)
    logged_at[expected] = [datetime.fromisoformat(message["at"]).timestamp() for message in messages]
    for subscriber in subscribers:
        seqs = np.frombuffer(subscriber.seqs, dtype=np.int64)
        arrivals = np.frombuffer(subscriber.arrivals, dtype=np.float64)
        unique = np.unique(seqs)
        tally.delivered += seqs.size
        tally.expected += expected.size
        tally.duplicated += seqs.size - unique.size
        tally.out_of_order += int(np.count_nonzero(seqs[1:] < np.maximum.accumulate(seqs)[:-1]))
        tally.lost += np.setdiff1d(expected, unique, assume_unique=True).size
        tally.unexpected += np.setdiff1d(unique, expected, assume_unique=True).size
        known = np.isin(seqs, expected)
        tally.latencies.append((arrivals[known] - logged_at[seqs[known]]) * 1000)
    by_seq = {message["seq"]: message for message in messages}
    tally.content_mismatch += sum(json.loads(data) != by_seq.get(seq) for data, seq in feed.payloads.items())


def table_summary(messages: list[dict[str, Any]]) -> dict[str, int]:
    results = [message for message in messages if message["type"] == "result"]
    return {
        "rounds": len(results),
        "shoes_finished": sum(bool(message["last_hand"]) for message in results),
        "voids": sum(message["type"] == "void" for message in messages),
        "feed_messages": len(messages),
    }


def latency_summary(latencies: list[np.ndarray[Any, Any]]) -> dict[str, float | int | None]:
    values = np.concatenate(latencies) if latencies else np.array([])
    if not values.size:
        return {"p50": None, "p99": None, "max": None, "measured": 0}
    p50, p99 = np.percentile(values, [50, 99])
    return {"p50": round(float(p50), 1), "p99": round(float(p99), 1), "max": round(float(values.max()), 1),
            "measured": int(values.size)}  # fmt: skip


# The run.


def pace_of(args: argparse.Namespace) -> Pace:
    return Pace(args.card_seconds, args.betting_seconds, args.result_seconds)


async def login(http: httpx2.AsyncClient, account: tuple[str, str]) -> str:
    response = await http.post("/api/login", json={"name": account[0], "password": account[1]})
    response.raise_for_status()
    token: str = response.json()["token"]
    return token


async def deal_for(
    floor: Floor, table_ids: list[str], seconds: float, died: asyncio.Event, timings: dict[str, float]
) -> list[str]:
    """Let the croupiers deal for `seconds` (or until a server dies or a croupier fails), then finish the rounds under
    way; the tables whose croupier did not come to rest in time."""
    croupiers = {table_id: asyncio.create_task(Croupier(table_id, floor).run()) for table_id in table_ids}
    started = time.monotonic()
    watchdog = asyncio.create_task(died.wait())
    await asyncio.wait([watchdog, *croupiers.values()], timeout=seconds, return_when=asyncio.FIRST_COMPLETED)
    watchdog.cancel()
    floor.stop.set()
    stopped = time.monotonic()
    _, pending = await asyncio.wait(croupiers.values(), timeout=WIND_DOWN_SECONDS)
    timings.update(dealing=stopped - started, winding_down=time.monotonic() - stopped)
    for task in pending:
        task.cancel()
    for task in croupiers.values():
        if task.done() and not task.cancelled() and task.exception() is not None:
            raise task.exception()  # type: ignore[misc]
    return [table_id for table_id, task in croupiers.items() if task in pending]


@dataclass
class Observed:
    """Everything a run saw, for the report."""

    feeds: dict[str, TableFeed]
    floor: Floor
    connections: Connections = field(default_factory=Connections)
    samples: Samples = field(default_factory=Samples)
    subscribers: list[Subscriber] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    cpu_percent: dict[str, float | None] = field(default_factory=dict)
    messages: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # the REST feed of each table
    behind_at_end: int = 0
    not_at_rest: list[str] = field(default_factory=list)


async def run(deployment: Deployment, table_ids: list[str], args: argparse.Namespace) -> dict[str, Any]:
    """Open the subscribers, deal, let the croupiers stop, read the REST feeds, let the subscribers catch up."""
    died = asyncio.Event()
    async with httpx2.AsyncClient(base_url=deployment.api, timeout=30) as http:
        floor = Floor(http, deployment.api.replace("http://", "ws://"), await login(http, DEALER),
                      await login(http, PIT_BOSS), pace_of(args), args.croupier_draws)  # fmt: skip
        seen = Observed({table_id: TableFeed(table_id) for table_id in table_ids}, floor)
        sampler = asyncio.create_task(sample(deployment, args.sample_seconds, seen.samples, died))
        try:
            await observe(seen, deployment, http, died, args)
        finally:
            seen.connections.stopping = True
            for subscriber in seen.subscribers:
                subscriber.close()
            for task in list(seen.connections.tasks):
                task.cancel()
            sampler.cancel()
        await asyncio.sleep(0.2)  # the close handshakes
    seen.samples.take({"client": None})
    return report(seen)


async def observe(
    seen: Observed, deployment: Deployment, http: httpx2.AsyncClient, died: asyncio.Event, args: argparse.Namespace
) -> None:
    started = time.monotonic()
    feeds = list(seen.feeds.values())
    seen.subscribers = await open_subscribers(feeds, deployment, args.subscribers, seen.connections)
    seen.timings["opening_subscribers"] = time.monotonic() - started
    seen.samples.mark(sampled_processes(deployment))
    cpu = cpu_use(sampled_processes(deployment))
    cutter = asyncio.create_task(cut_connections(seen.subscribers, args.cut_connections, args.minutes * 60))
    try:
        seen.not_at_rest = await deal_for(seen.floor, list(seen.feeds), args.minutes * 60, died, seen.timings)
    finally:
        cutter.cancel()
    seen.cpu_percent = cpu()
    if seen.samples.failure is not None:
        raise RuntimeError(seen.samples.failure)
    seen.messages = {table_id: await rest_feed(http, table_id, deployment.keys[0]) for table_id in seen.feeds}
    last = {table_id: max((m["seq"] for m in found), default=0) for table_id, found in seen.messages.items()}
    seen.behind_at_end = await catch_up(seen.subscribers, last, CATCH_UP_SECONDS)


def report(seen: Observed) -> dict[str, Any]:
    tally = Tally()
    for table_id, feed in seen.feeds.items():
        subscribers = [subscriber for subscriber in seen.subscribers if subscriber.feed is feed]
        check_table(feed, seen.messages[table_id], subscribers, tally)
    tables = {table_id: table_summary(messages) for table_id, messages in seen.messages.items()}
    connections, floor = seen.connections, seen.floor
    return {
        "seconds": {name: round(value, 2) for name, value in seen.timings.items()},
        "feed_messages": sum(summary["feed_messages"] for summary in tables.values()),
        "messages_delivered": tally.delivered,
        "messages_expected": tally.expected,
        "lost": tally.lost,
        "duplicated": tally.duplicated,
        "out_of_order": tally.out_of_order,
        "unexpected": tally.unexpected,
        "content_mismatch": tally.content_mismatch,
        "latency_ms": latency_summary(tally.latencies),
        "connections": {
            "subscribers": len(seen.subscribers),
            "dropped": dict(connections.dropped),
            "reconnects": connections.reconnects,
            "failed_reconnects": connections.failed_reconnects,
            "behind_at_end": seen.behind_at_end,
        },
        "rounds_per_table": {table_id: summary["rounds"] for table_id, summary in tables.items()},
        "tables": tables,
        "croupiers": {
            "commands": dict(floor.commands),
            "refused": dict(floor.refused),
            "suspensions": dict(floor.suspensions),
            "console_reconnects": floor.console_reconnects,
            "not_at_rest": seen.not_at_rest,
        },
        "memory_mb": seen.samples.summary(),
        "cpu_percent": seen.cpu_percent,
    }


def passed(result: dict[str, Any]) -> bool:
    failures = ("lost", "duplicated", "out_of_order", "unexpected", "content_mismatch")
    return not any(result[name] for name in failures) and min(result["rounds_per_table"].values()) > 0


async def run_bounded(work: Path, table_ids: list[str], args: argparse.Namespace) -> dict[str, Any]:
    """The whole run under a hard timeout; SIGTERM ends it as Ctrl-C does (the servers are stopped either way)."""
    task = asyncio.current_task()
    assert task is not None
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, task.cancel)
    async with asyncio.timeout(args.minutes * 60 + HARD_TIMEOUT_MARGIN):
        with start_studio(work, table_ids, args) as deployment:
            return await run(deployment, table_ids, args)


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tables", type=int, default=20, help="tables T01, T02, ... each with a simulated shoe")
    parser.add_argument("--subscribers", type=int, default=2000, help="WebSocket subscribers, spread over the tables")
    parser.add_argument("--minutes", type=float, default=10.0, help="how long the tables deal")
    parser.add_argument("--card-seconds", type=float, default=0.2, help="a card drawn this often (real: about 2 s)")
    parser.add_argument("--betting-seconds", type=float, default=1.5, help="betting window (real: about 15 s)")
    parser.add_argument("--result-seconds", type=float, default=0.5, help="from a result to the next round")
    parser.add_argument("--croupier-draws", action="store_true",
                        help="the croupiers draw each card once the last one is logged (no --auto-deal)")  # fmt: skip
    parser.add_argument("--game-servers", type=int, default=10, help="API keys the subscribers share")
    parser.add_argument("--cut-connections", type=int, default=0, metavar="N",
                        help="cut N subscribers' connections while dealing; each must resume")  # fmt: skip
    parser.add_argument("--sample-seconds", type=float, default=5.0, help="memory sampled this often")
    parser.add_argument("--feed-servers", type=int, default=0, metavar="N",
                        help="start Redis and N feed servers (`studio feed`) and subscribe through them")  # fmt: skip
    parser.add_argument("--feed-url", action="append", default=[], metavar="WS_URL",
                        help="a feed server's ws://HOST:PORT (repeat; default: the studio itself)")  # fmt: skip
    parser.add_argument("--dir", type=Path, default=None, help="where the temporary folder goes")
    args = parser.parse_args()
    if not 1 <= args.tables <= 99:
        parser.error("--tables: 1 to 99")
    if args.subscribers < args.tables:
        parser.error("--subscribers: at least one per table")
    for name in ("minutes", "card_seconds", "betting_seconds", "sample_seconds"):
        if getattr(args, name) <= 0:
            parser.error(f"--{name.replace('_', '-')}: must be more than 0")
    if args.result_seconds < 0 or args.cut_connections < 0 or args.game_servers < 1:
        parser.error("--result-seconds, --cut-connections: 0 or more; --game-servers: at least 1")
    return args


def main() -> int:
    args = parse_args()
    table_ids = [f"T{n + 1:02d}" for n in range(args.tables)]
    load_at_start = os.getloadavg()
    open_files = raise_open_files(2 * args.subscribers + 512)  # the server inherits it: one socket per subscriber
    settings = {key: value for key, value in vars(args).items() if key != "dir"}
    try:
        with tempfile.TemporaryDirectory(prefix="load-test-", dir=args.dir) as folder:
            with asyncio.Runner(loop_factory=loop_factory()) as runner:
                result = runner.run(run_bounded(Path(folder), table_ids, args))
            result["ok"] = passed(result)
    except TimeoutError:
        result = {"ok": False, "error": f"hard timeout: {args.minutes * 60 + HARD_TIMEOUT_MARGIN:.0f} s"}
    except (KeyboardInterrupt, asyncio.CancelledError):
        result = {"ok": False, "error": "interrupted"}
    except Exception as error:
        result = {"ok": False, "error": repr(error)}
    result.update(
        {
            "settings": settings,
            "load_average": {
                "start": [round(v, 2) for v in load_at_start],
                "end": [round(v, 2) for v in os.getloadavg()],
            },
            "open_files_limit": open_files,
            "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform()},
            "command": "python " + " ".join(sys.argv),
        }
    )
    print(json.dumps(result, indent=2))
    return 0 if result["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
