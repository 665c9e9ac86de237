"""Bet burst: 10,000 bets from 5,000 players in the last 2 s of one table's betting window, through the HTTP API.

    .venv/bin/python bench/bet_burst_bench.py [--bets 10000] [--players 5000] [--window 2.0] [--clients 2]
                                              [--connections 200] [--database URL] [--dir DIR]
    .venv/bin/python bench/bet_burst_bench.py --game-servers 4 --batch-ms 20 [the same options]

The real server (`studio run`: uvicorn, SQLite in a fresh temporary folder unless `--database` names another, e.g.
PostgreSQL) serves one table read from a keyed source. The players' wallets are funded straight in the database
before it starts. The dealer shuffles, cuts, burns and opens betting through the API; the bets are then sent by
`--clients` separate load processes (this script run with `--client`), each with `--connections` keep-alive HTTP/1.1
connections, open loop: each bet has its instant, spread at random over the `--window` seconds that end `--margin`
seconds before the window's end, and is sent by the next free connection from then on. Every player places two bets
(Player or Banker, and a side bet), as separate requests on different connections. The dealer calls "no more bets"
as soon as the table's timer allows it.

Before the burst, 1 s ahead of it, each load process places `--warm-up` bets (10) of players of its own, not
measured and not counted among the burst's: a table's game servers have sent bets before the final rush, so the
server has taken bets already (its statements prepared, its code paths run once). `--warm-up 0` measures the burst
as the first bets a freshly started server takes: its first group commit and first requests cost some tens of
milliseconds more, which on this 2-core machine sets the p99 (the `bet-burst-cold` row of the table).

A bet's answer time is from its instant to its answer's last byte (a bet waiting for a free connection is counted
waiting: the figures are not flattered by a client that falls behind).

With `--game-servers N --batch-ms M` the bets come as real game servers send them at a peak: N game servers (one
load process each, with an API key of its own and `--connections` keep-alive connections, 8 unless given), each
owning every N-th player; the players' bets reach their game server at the same open-loop instants, and every M ms
each game server sends the bets that reached it since its last batch as one `POST /api/tables/{table}/bets/batch`
(at most 500 a call; more are split and sent at once on other connections). Two answer times per bet: from the
batch's sending (its tick; a wait for a free connection counted) to the answer's last byte (`answer_ms`, the figure
of the target), and from the bet's instant at the game server, so with its wait for the batch
(`answer_from_arrival_ms`).

Afterwards the database is read: every bet answered 200 must be stored, open, with its stake taken (`durable`), none
refused for arriving late, every bet stored before "no more bets" was logged, and every player's balance equal to
the sum of their ledger entries.

Prints one JSON object: answer time p50/p99/max in ms, bets sent, accepted, refused (by reason), stored, stored
before "no more bets", and the settings. Target (issue 17): p99 <= 50 ms on SQLite, every bet accepted and durable
before "no more bets", for the batch mode's `answer_ms` (bets as game servers send them at a peak). The client
processes keep their own CPU small (a few lines of HTTP/1.1 over asyncio), but they share the machine with the
server: the machine's load average at the start is printed too.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import platform
import random
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx2
from feed_clients import cpu_seconds, create_api_keys, free_port, loop_factory, studio_server
from sqlalchemy import func, insert, select
from sqlalchemy.engine import make_url
from sqlmodel import SQLModel

from studio.clock import SystemClock
from studio.database import open_engine
from studio.settings import sqlite_url
from studio.store_sql import SqlEventStore
from studio.wallets import WalletStore

P99_TARGET_MS = 50.0
MAX_BATCH = 500  # the batch route's limit (dealer_ui.routes.bets.MAX_BATCH)
BATCH_CONNECTIONS = 8  # keep-alive connections per game server in the batch mode, unless --connections says
FUNDS = 1_000_000  # minor units per player: never the limit, the rules are
TABLE_TOML = """\
[table]
id = "{table}"

[procedure]
betting_seconds = {seconds}

[[sources]]
id = "{table}-keyed"
driver = "memory"
"""
MAIN_BETS = ("banker", "player")
SIDE_BETS = ("tie", "player_pair", "banker_pair")
BURN_CARD = "KH"  # a ten-value card: the burn after the first card is a count of ten
# The warm-up bets go this long before the burst: within the server's keep-alive time (uvicorn closes a connection
# idle for 5 s), as a game server's bets of the round before the final rush do.
WARM_UP_LEAD = 1.0


def percentile(sorted_values: list[float], fraction: float) -> float:
    index = min(len(sorted_values) - 1, max(0, round(fraction * len(sorted_values)) - 1))
    return sorted_values[index]


# The load: one process per client, each with its own keep-alive connections.


async def _request(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, head: bytes, body: bytes
) -> tuple[int, bytes]:
    """One POST on a kept-alive connection; the answer's status and body."""
    writer.write(head + str(len(body)).encode() + b"\r\n\r\n" + body)
    header = await reader.readuntil(b"\r\n\r\n")
    status = int(header[9:12])
    length = 0
    for line in header.split(b"\r\n"):
        if line[:15].lower() == b"content-length:":
            length = int(line[15:])
    return status, await reader.readexactly(length)


async def _warm_up(connections: list[tuple[asyncio.StreamReader, asyncio.StreamWriter]], head: bytes,
                   bodies: list[bytes], start: float) -> None:  # fmt: skip
    """The bets a game server sends `WARM_UP_LEAD` seconds before the burst (not measured): the bodies on all the
    connections at once, as many rounds as it takes. A refusal stops the benchmark: the setting is wrong."""
    await asyncio.sleep(max(0.0, start - WARM_UP_LEAD - time.time()))
    answers = []
    for first in range(0, len(bodies), len(connections)):
        now = zip(connections, bodies[first : first + len(connections)], strict=False)
        answers += await asyncio.gather(*(_request(reader, writer, head, body) for (reader, writer), body in now))
    for status, answer in answers:
        if status != 200 or b'"status":4' in answer or b'"status":5' in answer:
            raise RuntimeError(f"a warm-up bet was refused: {status} {answer[:200]!r}")


async def _client(job: dict[str, Any], start_line: asyncio.Future[float]) -> list[list[Any]]:
    if job["batch_ms"]:
        return await _game_server(job, start_line)
    host, port = job["host"], job["port"]
    head = (f"POST /api/tables/{job['table']}/bets HTTP/1.1\r\nHost: {host}:{port}\r\nX-API-Key: {job['key']}\r\n"
            "Content-Type: application/json\r\nContent-Length: ").encode()  # fmt: skip
    connections = [await asyncio.open_connection(host, port) for _ in range(job["connections"])]
    print("ready", flush=True)
    start = await start_line  # time.time() of the burst's start, told by the main process
    await _warm_up(connections, head, [json.dumps(body).encode() for body in job["warm_up"]], start)
    bets = sorted(job["bets"], key=lambda bet: bet[0])
    due: asyncio.Queue[tuple[float, bytes, str]] = asyncio.Queue()
    # bet id, status, answer time from its instant (ms), the refusal's reason, answer time from its instant again
    results: list[list[Any]] = []

    async def schedule() -> None:
        for offset, bet in bets:
            instant = start + offset
            delay = instant - time.time()
            if delay > 0:
                await asyncio.sleep(delay)
            due.put_nowait((instant, json.dumps(bet).encode(), bet["bet_id"]))

    async def connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:
            instant, body, bet_id = await due.get()
            reason = None
            try:
                status, answer = await _request(reader, writer, head, body)
            except (OSError, asyncio.IncompleteReadError) as error:
                status, answer = 0, str(error).encode()
            if status != 200:
                reason = answer.decode(errors="replace")
            answered = (time.time() - instant) * 1000
            results.append([bet_id, status, answered, reason, answered])
            due.task_done()

    workers = [asyncio.create_task(connection(reader, writer)) for reader, writer in connections]
    await schedule()
    await due.join()
    for worker in workers:
        worker.cancel()
    for _, writer in connections:
        writer.close()
    return results


async def _game_server(job: dict[str, Any], start_line: asyncio.Future[float]) -> list[list[Any]]:
    """A game server: every `batch_ms` it sends the bets that reached it since its last batch, in one request."""
    host, port = job["host"], job["port"]
    head = (f"POST /api/tables/{job['table']}/bets/batch HTTP/1.1\r\nHost: {host}:{port}\r\n"
            f"X-API-Key: {job['key']}\r\nContent-Type: application/json\r\nContent-Length: ").encode()  # fmt: skip
    free: asyncio.Queue[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = asyncio.Queue()
    for _ in range(job["connections"]):
        free.put_nowait(await asyncio.open_connection(host, port))
    print("ready", flush=True)
    start = await start_line
    if job["warm_up"]:
        connection = await free.get()
        await _warm_up([connection], head, [json.dumps({"requests": job["warm_up"]}).encode()], start)
        free.put_nowait(connection)
    bets = sorted(job["bets"], key=lambda bet: bet[0])
    period = job["batch_ms"] / 1000
    # bet id, status, answer time from the batch's sending (ms), the refusal's reason, from the bet's instant (ms)
    results: list[list[Any]] = []

    async def send(sent: float, batch: list[tuple[float, dict[str, Any]]]) -> None:
        reader, writer = await free.get()
        body = json.dumps({"requests": [ask for _, ask in batch]}).encode()
        try:
            status, answer = await _request(reader, writer, head, body)
        except (OSError, asyncio.IncompleteReadError) as error:
            status, answer = 0, str(error).encode()
        free.put_nowait((reader, writer))
        done = time.time()
        items = json.loads(answer)["results"] if status == 200 else [{"status": status, "detail": answer.decode()}]
        for n, (instant, ask) in enumerate(batch):
            item = items[n] if status == 200 else items[0]
            reason = None if item["status"] == 200 else item["detail"]
            results.append([ask["bet_id"], item["status"], (done - sent) * 1000, reason, (done - instant) * 1000])

    sending: list[asyncio.Task[None]] = []
    tick, index = start, 0
    while index < len(bets):
        tick += period
        delay = tick - time.time()
        if delay > 0:
            await asyncio.sleep(delay)
        sent = time.time()
        batch = []
        while index < len(bets) and start + bets[index][0] <= sent:
            batch.append((start + bets[index][0], bets[index][1]))
            index += 1
        for first in range(0, len(batch), MAX_BATCH):
            sending.append(asyncio.create_task(send(sent, batch[first : first + MAX_BATCH])))
    await asyncio.gather(*sending)
    while not free.empty():
        free.get_nowait()[1].close()
    return results


def client_main() -> None:
    """A load process: its job on the first line of stdin, "ready" on stdout once connected, the burst's start on
    the second line; its results are written to the file the job names."""
    job = json.loads(sys.stdin.readline())

    async def run() -> list[list[Any]]:
        loop = asyncio.get_running_loop()
        start: asyncio.Future[float] = loop.create_future()
        loop.run_in_executor(None, lambda: loop.call_soon_threadsafe(start.set_result, float(sys.stdin.readline())))
        return await _client(job, start)

    with asyncio.Runner(loop_factory=loop_factory()) as runner:
        results = runner.run(run())
    Path(job["out"]).write_text(json.dumps({"results": results, "cpu_seconds": time.process_time()}))


# The setting: wallets, the server, the dealer.


def fund(url: str, players: list[str], game_server: str) -> None:
    """Open and fund every player's wallet in one transaction (a balance is the sum of its ledger entries)."""
    WalletStore(url, SystemClock()).close()  # the schema, migrated
    engine = open_engine(make_url(url))
    now = datetime.now(UTC).isoformat()
    wallets = [{"player_id": p, "game_server": game_server, "balance": FUNDS, "points": 0} for p in players]
    deposits = [{"player_id": p, "kind": "deposit", "amount": FUNDS, "at": now, "points": 0} for p in players]
    wallet_table, ledger_table = (SQLModel.metadata.tables[name] for name in ("wallet", "ledger_entry"))
    with engine.begin() as conn:
        conn.execute(insert(wallet_table), wallets)
        conn.execute(insert(ledger_table), deposits)
    engine.dispose()


def py_spy() -> str:
    """py-spy beside this Python (the `bench` extra installs it), or on the PATH."""
    beside = Path(sys.executable).with_name("py-spy")
    found = str(beside) if beside.exists() else shutil.which("py-spy")
    if found is None:
        raise SystemExit("--profile needs py-spy: pip install -e '.[bench]'")
    return found


def owner(body: dict[str, Any], game_servers: int) -> int:
    """The game server (0 to N - 1) a bet's player belongs to: player k to game server k mod N."""
    return int(body["player_id"].rsplit("-", 1)[1]) % game_servers


def burst(args: argparse.Namespace, run: str, rng: random.Random) -> list[tuple[float, dict[str, Any]]]:
    """Each bet's instant (seconds from the burst's start) and body: two per player, in random order."""
    players = [f"p{run}-{n:05d}" for n in range(args.players)]
    bets = []
    for n in range(args.bets):
        player = players[n % args.players]
        first = n < args.players
        bet_type = rng.choice(MAIN_BETS) if first else rng.choice(SIDE_BETS)
        stake = rng.randint(10, 400) * 100 if first else rng.randint(5, 50) * 100  # within the table's limits
        body = {"bet_id": f"b{run}-{n}", "player_id": player, "bet_type": bet_type, "stake": stake}
        bets.append((rng.uniform(0, args.window), body))
    return bets


def warm_up_bets(run: str, client: int, clients: int, count: int) -> list[dict[str, Any]]:
    """Load process `client`'s warm-up bets: `count` banker bets of players of its own (player k belongs to load
    process k mod `clients`, as the burst's players to their game server)."""
    players = [f"w{run}-{client + k * clients:05d}" for k in range(count)]
    return [{"bet_id": f"w{run}-{player}", "player_id": player, "bet_type": "banker", "stake": 1_000}
            for player in players]  # fmt: skip


def measure(args: argparse.Namespace, work: Path, database: str, url: str) -> dict[str, Any]:
    run = uuid.uuid4().hex[:6]
    table = f"BB{run}"
    rng = random.Random(args.seed)
    table_file = work / "table.toml"
    table_file.write_text(TABLE_TOML.format(table=table, seconds=args.betting_seconds))
    servers = [f"bench-gs-{run}-{n}" for n in range(args.game_servers or 1)]
    keys = create_api_keys(database, servers)
    bets = burst(args, run, rng)
    clients = args.game_servers or args.clients
    warm = [warm_up_bets(run, n, clients, args.warm_up) for n in range(clients)]
    for n, game_server in enumerate(servers):  # player k belongs to game server k mod N
        players = {body["player_id"] for _, body in bets if owner(body, len(servers)) == n}
        players |= {body["player_id"] for share in warm for body in share if owner(body, len(servers)) == n}
        fund(url, sorted(players), game_server)
    extra = ["--demo-port", str(free_port())]
    with studio_server(work, database, [table_file], extra) as server:
        port = int(server.base.rsplit(":", 1)[1])
        clients = []
        for n in range(args.game_servers or args.clients):
            if args.game_servers:  # one load process per game server, with its players' bets
                share = [bet for bet in bets if owner(bet[1], args.game_servers) == n]
            else:
                share = [bet for i, bet in enumerate(bets) if i % args.clients == n]
            job = {"host": "127.0.0.1", "port": port, "table": table, "key": keys[n if args.game_servers else 0],
                   "connections": args.connections, "bets": share, "out": str(work / f"client-{n}.json"),
                   "batch_ms": args.batch_ms if args.game_servers else 0, "warm_up": warm[n]}  # fmt: skip
            process = subprocess.Popen([sys.executable, __file__, "--client"], stdin=subprocess.PIPE,
                                       stdout=subprocess.PIPE, text=True)  # fmt: skip
            assert process.stdin is not None and process.stdout is not None
            process.stdin.write(json.dumps(job) + "\n")
            process.stdin.flush()
            clients.append(process)
        for process in clients:
            assert process.stdout is not None
            if process.stdout.readline().strip() != "ready":
                raise RuntimeError("a load process did not connect")
        with httpx2.Client(base_url=server.base, timeout=30) as http:
            token = http.post("/api/login", json={"name": "dealer", "password": "dealer"}).json()["token"]
            http.headers["Authorization"] = f"Bearer {token}"

            def post(action: str, body: Any = None) -> dict[str, Any]:
                response = http.post(f"/api/tables/{table}/{action}", json=body)
                response.raise_for_status()
                answer: dict[str, Any] = response.json()
                return answer

            state = post("shuffle")["table"]
            state = post("cut", {})["table"]
            while state["phase"] == "burning":
                state = post("card", {"card": BURN_CARD})["table"]
            opened = post("open-betting")
            game_id = opened["table"]["round"]["game_id"]
            closes = datetime.fromisoformat(opened["table"]["round"]["closes_at"]).timestamp()
            start = closes - args.margin - args.window
            cpu_before = cpu_seconds(server.process.pid)
            if start < time.time() + 0.2:
                raise RuntimeError("--betting-seconds leaves no time to start the burst: raise it")
            for process in clients:
                assert process.stdin is not None
                process.stdin.write(f"{start}\n")
                process.stdin.flush()
            profiler = None
            if args.profile:  # the server sampled from the burst's start to "no more bets" (py-spy, collapsed stacks)
                time.sleep(max(0.0, start - time.time()))
                duration = str(max(1, round(closes - time.time())))
                command = [py_spy(), "record", "--pid", str(server.process.pid), "--threads", "--format", "raw",
                           "--rate", "200", "--duration", duration, "-o", str(args.profile)]  # fmt: skip
                profiler = subprocess.Popen(command, stdout=subprocess.DEVNULL)
            time.sleep(max(0.0, closes - time.time()))
            while True:  # "no more bets" as soon as the table's timer allows it
                response = http.post(f"/api/tables/{table}/close-betting")
                if response.status_code == 200:
                    break
                time.sleep(0.005)
            closed = response.json()
            if profiler is not None:
                profiler.wait(60)
        [close_seq] = [entry["seq"] for entry in closed["logged"] if entry["kind"] == "BettingClosed"]
        store = SqlEventStore(url)
        closed_at = next(record.at for record in store.read(table) if record.seq == close_seq)
        store.close()
        server_cpu = cpu_seconds(server.process.pid)
        results: list[list[Any]] = []
        client_cpu = 0.0
        for n, process in enumerate(clients):
            if process.wait(120) != 0:
                raise RuntimeError(f"load process {n} failed ({process.returncode})")
            report = json.loads((work / f"client-{n}.json").read_text())
            results += report["results"]
            client_cpu += report["cpu_seconds"]
    cpu = {"server": None if server_cpu is None or cpu_before is None else round(server_cpu - cpu_before, 2),
           "load_processes": round(client_cpu, 2)}  # fmt: skip
    return check(url, game_id, closed_at, results, bets, start, args) | {"table": table, "cpu_seconds": cpu}


def spread(latencies: list[float]) -> dict[str, float]:
    return {"p50": round(percentile(latencies, 0.50), 2), "p99": round(percentile(latencies, 0.99), 2),
            "max": round(latencies[-1], 2)}  # fmt: skip


def check(url: str, game_id: str, closed: datetime, results: list[list[Any]], bets: list[tuple[float, dict[str, Any]]],
          start: float, args: argparse.Namespace) -> dict[str, Any]:  # fmt: skip
    """The answers against the database."""
    statuses = Counter(str(status) for _, status, _, _, _ in results)
    refusals = Counter(reason for _, _, _, reason, _ in results if reason is not None)
    accepted = {bet_id for bet_id, status, _, _, _ in results if status == 200}
    players = sorted({body["player_id"] for _, body in bets})
    bet_table, ledger, wallet = (SQLModel.metadata.tables[name] for name in ("bet", "ledger_entry", "wallet"))
    engine = open_engine(make_url(url))
    with engine.connect() as conn:
        rows = conn.execute(select(bet_table).where(bet_table.c.game_id == game_id))
        burst_ids = {body["bet_id"] for _, body in bets}
        stored = {row.bet_id: row for row in rows if row.bet_id in burst_ids}  # the warm-up bets left out
        sums_query = select(ledger.c.player_id, func.sum(ledger.c.amount)).group_by(ledger.c.player_id)
        sums: dict[str, int] = dict(conn.execute(sums_query.where(ledger.c.player_id.in_(players))).all())
        balances_query = select(wallet.c.player_id, wallet.c.balance).where(wallet.c.player_id.in_(players))
        balances: dict[str, int] = dict(conn.execute(balances_query).all())
    engine.dispose()
    durable = sum(bet_id in stored and stored[bet_id].status == "open" for bet_id in accepted)
    before_close = sum(datetime.fromisoformat(stored[b].placed_at) <= closed for b in accepted if b in stored)
    latencies = sorted(ms for _, _, ms, _, _ in results)
    from_arrival = sorted(ms for _, _, _, _, ms in results)
    return {
        "mode": "game-server batches" if args.game_servers else "one request per bet",
        "warm_up_bets_per_client": args.warm_up,
        "bets": args.bets,
        "players": args.players,
        "window_seconds": args.window,
        "game_servers": args.game_servers,
        "batch_ms": args.batch_ms if args.game_servers else None,
        "answer_ms": spread(latencies),
        "answer_from_arrival_ms": spread(from_arrival),
        "sent": len(results),
        "accepted": len(accepted),
        "answers": dict(statuses),
        "refusals": dict(refusals.most_common(5)),
        "durable": durable,
        "stored_for_the_round": len(stored),
        "stored_before_no_more_bets": before_close,
        "all_in_before_no_more_bets": durable == len(accepted) == args.bets == before_close == len(stored),
        "balances_equal_ledger": all(balances[p] == sums.get(p, 0) for p in players),
        "burst_started_before_close_s": round(closed.timestamp() - start, 3),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--client", action="store_true", help=argparse.SUPPRESS)  # a load process (see the top)
    parser.add_argument("--bets", type=int, default=10_000)
    parser.add_argument("--players", type=int, default=5_000)
    parser.add_argument("--window", type=float, default=2.0, help="seconds the bets are spread over")
    parser.add_argument("--margin", type=float, default=0.1,
                        help="seconds between the last bet's instant and the end of the betting window")  # fmt: skip
    parser.add_argument("--betting-seconds", type=int, default=8, help="the table's betting window")
    parser.add_argument("--clients", type=int, default=2, help="load processes")
    parser.add_argument(
        "--connections",
        type=int,
        default=None,
        help=f"keep-alive connections per load process (200; {BATCH_CONNECTIONS} per game server)",
    )
    parser.add_argument(
        "--game-servers",
        type=int,
        default=0,
        metavar="N",
        help="send the bets as N game servers' batches (one load process each; see the top)",
    )
    parser.add_argument(
        "--batch-ms",
        type=float,
        default=20.0,
        metavar="M",
        help="with --game-servers: each sends the bets that reached it in the last M ms as one batch",
    )
    parser.add_argument("--warm-up", type=int, default=10, metavar="W",
                        help="bets each load process places 1 s before the burst, of players of its own (not "
                        "measured); 0: the burst meets a server that has taken no bet yet")  # fmt: skip
    parser.add_argument("--seed", type=int, default=17)
    parser.add_argument("--database", metavar="URL",
                        help="another database, e.g. postgresql+psycopg://studio@db/bench (default: a SQLite file in "
                        "a temporary folder); each run uses a table and players of its own")  # fmt: skip
    parser.add_argument("--dir", type=Path, default=None, help="where the temporary folder goes")
    parser.add_argument("--profile", type=Path, metavar="FILE",
                        help="sample the server with py-spy during the burst (collapsed stacks to FILE)")  # fmt: skip
    args = parser.parse_args()
    if args.client:
        client_main()
        return 0
    if not 1 <= args.players <= args.bets <= 2 * args.players:
        parser.error("--players: at least half of --bets and at most --bets (each player places one or two)")
    if args.game_servers < 0 or args.batch_ms <= 0:
        parser.error("--game-servers: 0 (one request per bet) or more; --batch-ms: more than 0")
    if args.connections is None:
        args.connections = BATCH_CONNECTIONS if args.game_servers else 200
    load = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="bet-burst-", dir=args.dir) as folder:
        work = Path(folder)
        database = args.database or str(work / "studio.db")
        result = measure(args, work, database, sqlite_url(database))
    met = result["answer_ms"]["p99"] <= P99_TARGET_MS and result["all_in_before_no_more_bets"]
    result.update({
        "database": "sqlite" if args.database is None else make_url(args.database).get_backend_name(),
        "p99_target_ms": P99_TARGET_MS,
        "meets_target": met,
        "clients": args.game_servers or args.clients,
        "connections_per_client": args.connections,
        "load_average_at_start": [round(value, 2) for value in load],
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform()},
        "command": "python " + " ".join(sys.argv),
    })  # fmt: skip
    print(json.dumps(result, indent=2))
    ok = result["balances_equal_ledger"] and result["durable"] == result["accepted"]
    return 0 if ok else 1


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):
        sys.exit(main())
