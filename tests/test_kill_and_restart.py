"""`studio run` killed (SIGKILL) at random moments while it deals and takes bets, then restarted on the same SQLite
file, again and again (issue 13). Afterwards: the log verifies; no table ever suspended (a real table would not
have: no false duplicate read, no card out of order); the results feed, read from the start as a game server that
resumes with `after=` does, has every record once and in order; every round closed is settled exactly once; every
balance equals its ledger.

The default suite kills 4 times; `STUDIO_KILLS=100 .venv/bin/pytest tests/test_kill_and_restart.py` runs the long
version (about 3 minutes)."""

from __future__ import annotations

import http.client
import os
import random
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

from tests.api_client import ApiClient
from tests.browser.support import REPO
from tests.services import free_port
from tests.waiting import wait_until

KILLS = int(os.environ.get("STUDIO_KILLS", "4"))
TABLE = """[table]
id = "T1"
[procedure]
betting_seconds = 1
warning_seconds = 1
allow_early_close = true
burn_after_shuffle = 2
cut_card_from_back = 380
"""


def start(folder: Path) -> tuple[subprocess.Popen[bytes], str]:
    """`studio run` on a free port (its demo game server on another, never the 8001 a studio on this machine may
    hold); the process and the studio's address."""
    port, demo_port = free_port(), free_port()
    command = [sys.executable, "-m", "studio_cli.main", "run", "--port", str(port), "--database",
               str(folder / "studio.db"), "--table", str(folder / "t1.toml"), "--auto-deal", "0.02",
               "--demo-port", str(demo_port)]  # fmt: skip
    with (folder / "server.log").open("ab") as log:  # the child keeps its own copy of the file
        process = subprocess.Popen(command, cwd=REPO, stdout=log, stderr=subprocess.STDOUT, env=dict(os.environ))
    return process, f"http://127.0.0.1:{port}"


class Croupier(threading.Thread):
    """Shuffles, cuts, opens and closes betting as a dealer does (the auto-dealer draws the cards) and places a bet
    each round for a game server's player, until the server goes away."""

    def __init__(self, url: str, key: str, round_bets: list[str]) -> None:
        super().__init__(daemon=True)
        self.url, self.key, self.round_bets = url, key, round_bets

    def run(self) -> None:
        try:
            dealer = ApiClient(self.url, "dealer", "dealer")
            server = {"X-API-Key": self.key}
            while True:
                state = dealer.call("GET", "/api/tables/T1")
                phase = state["phase"]
                action = {"awaiting_shuffle": "shuffle", "awaiting_cut": "cut", "ready": "open-betting",
                          "betting_open": "close-betting"}.get(phase)  # fmt: skip
                if phase == "betting_open" and state.get("round"):
                    game = state["round"]["game_id"]
                    bet = {"bet_id": f"{game}-b", "player_id": "p1", "bet_type": "banker", "stake": 1_000}
                    dealer.call("POST", "/api/tables/T1/bets", bet, headers=server, ok=(409, 422))
                    self.round_bets.append(game)
                if action is not None:
                    dealer.call("POST", f"/api/tables/T1/{action}", {} if action == "cut" else None, ok=(409,))
                time.sleep(0.02)
        except (AssertionError, OSError, http.client.HTTPException):
            return  # the server was killed (also mid-answer: its headers sent, its body cut short)


def test_killed_again_and_again_it_loses_nothing_and_raises_no_false_alarm(tmp_path: Path) -> None:
    (tmp_path / "t1.toml").write_text(TABLE)
    database = str(tmp_path / "studio.db")
    command = [sys.executable, "-m", "studio_cli.main", "users", "--database", database, "add-key", "gs1"]
    key = subprocess.run(command, cwd=REPO, capture_output=True, text=True, check=True)
    api_key = key.stdout.strip().split()[-1]
    rng = random.Random(13)
    bets: list[str] = []
    for kill in range(KILLS + 1):
        process, url = start(tmp_path)
        try:
            wait_until(lambda url=url: _answers(url), "the studio to answer", timeout=30)  # type: ignore[misc]
            if kill == 0:
                ApiClient(url).call("POST", "/api/wallets/p1/deposit", {"amount": 10_000_000},
                                    headers={"X-API-Key": api_key})  # fmt: skip
            Croupier(url, api_key, bets).start()
            time.sleep(rng.uniform(0.5, 2.0) if kill < KILLS else 2.0)  # deal a while; the last run ends cleanly
        finally:
            os.kill(process.pid, signal.SIGKILL if kill < KILLS else signal.SIGTERM)
            process.wait(timeout=20)
    db = tmp_path / "studio.db"
    verify = [sys.executable, "-m", "studio_cli.main", "log", "verify", str(db)]
    verified = subprocess.run(verify, cwd=REPO, capture_output=True, text=True, check=False)
    assert verified.returncode == 0, verified.stdout + verified.stderr
    with sqlite3.connect(db) as connection:
        kinds = [kind for (kind,) in connection.execute("SELECT kind FROM event_log WHERE stream = 'T1' ORDER BY seq")]
        closed = {
            gid
            for (gid,) in connection.execute(
                "SELECT json_extract(data, '$.game_id') FROM event_log WHERE kind IN ('RoundCompleted', 'RoundVoided')"
            )
        }
        settled = [gid for (gid,) in connection.execute("SELECT game_id FROM settled_round")]
        open_bets = {gid for (gid,) in connection.execute("SELECT game_id FROM bet WHERE status = 'open'")}
        balance = connection.execute("SELECT balance FROM wallet WHERE player_id = 'p1'").fetchone()[0]
        ledger = connection.execute("SELECT SUM(amount) FROM ledger_entry WHERE player_id = 'p1'").fetchone()[0]
    assert "TableSuspended" not in kinds  # no false alarm in any restart
    assert kinds.count("RoundCompleted") >= 3 and bets  # it did deal and take bets
    assert sorted(settled) == sorted(closed)  # every round closed is settled, each exactly once (a unique mark)
    assert not open_bets & closed  # no bet of a closed round left unsettled
    assert balance == ledger
    # The feed, read from the start as a game server that resumes with after= reads it: every record once, in order.
    process, url = start(tmp_path)
    try:
        wait_until(lambda: _answers(url), "the studio to answer", timeout=30)
        client, seqs, after = ApiClient(url), [], 0
        while True:
            page = client.call("GET", f"/api/feed/T1?after={after}", headers={"X-API-Key": api_key})
            if not page["messages"]:
                break
            seqs += [message["seq"] for message in page["messages"]]
            after = seqs[-1]
        assert seqs == sorted(set(seqs)) and len(seqs) > 10
    finally:
        process.terminate()
        process.wait(timeout=20)


def _answers(url: str) -> bool:
    try:
        ApiClient(url).call("GET", "/healthz")
    except (AssertionError, OSError):
        return False
    return True
