"""A process SIGKILLed while it settles a round of 2,400 bets: after restart the round is settled exactly once, on
SQLite and on PostgreSQL (a real server, tests/services.py)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from studio.betting import BettingService
from studio.clock import ManualClock
from studio.settings import load_table_config
from studio.store_sql import SqlEventStore
from studio.wallets import WalletStore
from tests.services import PostgresServer

PLAYERS = 300

PREPARE = """
import sys
from datetime import UTC, datetime
from studio.domain import commands as c
from studio.betting import BettingService
from studio.domain.cards import parse_cards
from studio.clock import ManualClock
from studio.domain.procedure_config import ProcedureConfig
from studio.settings import load_table_config
from studio.store_sql import SqlEventStore
from studio.table_service import TableService
from studio.wallets import PlacedBet, WalletStore
from studio.domain.paytable import BetType

url = sys.argv[1]
clock = ManualClock(datetime(2026, 11, 29, 12, tzinfo=UTC))
table = load_table_config()
wallets = WalletStore(url, clock)
store = SqlEventStore(url)
betting = BettingService("T1", wallets, table.limits, table.pay_table, clock)
service = TableService("T1", store, clock, ProcedureConfig(burn_after_shuffle=0, allow_early_close=True))
for p in range(300):
    wallets.deposit(f"p{p}", "gs1", 100_000)
service.handle(c.ConfirmShuffle("dealer:ann"))
service.handle(c.PlaceCutCard("dealer:ann"))
service.handle(c.OpenBetting("dealer:ann"))
game = service.state.round.game_id
for n in range(2400):
    kind = [BetType.BANKER, BetType.PLAYER, BetType.TIE][n % 3]
    wallets.place(PlacedBet(f"b{n}", "gs1", f"p{n % 300}", "T1", game, kind, 1000))
service.handle(c.CloseBetting("dealer:ann"))
for code in "QH 9D 2C 10S".split():
    service.handle(c.DrawCard("device:shoe", c.CardRead(parse_cards(code)[0], "shoe")))
wallets.close()
store.close()
"""


@pytest.fixture(scope="module")
def prepared(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A studio database with a completed round of 2,400 open bets, not yet settled."""
    db = tmp_path_factory.mktemp("prepared") / "studio.db"
    subprocess.run([sys.executable, "-c", PREPARE, f"sqlite:///{db}"], check=True)
    return db


@pytest.fixture(scope="module")
def prepared_postgres(postgres_server: PostgresServer) -> str:
    """The same, in a PostgreSQL database (copied for each test as a template)."""
    url = postgres_server.new_database()
    subprocess.run([sys.executable, "-c", PREPARE, url], check=True)
    return url


SETTLE_THEN_HANG = """
import sys, time
from datetime import UTC, datetime
from studio.betting import BettingService
from studio.clock import ManualClock
from studio.settings import load_table_config
from studio.store_sql import SqlEventStore
from studio.wallets import WalletStore

url = sys.argv[1]
clock = ManualClock(datetime(2026, 11, 29, 12, 5, tzinfo=UTC))
table = load_table_config()
betting = BettingService("T1", WalletStore(url, clock), table.limits, table.pay_table, clock)
records = list(SqlEventStore(url).read("T1"))
print("SETTLING", flush=True)
betting.settle_unsettled(records)
print("SETTLED", flush=True)
time.sleep(600)
"""


def copy_of(prepared: Path, tmp_path: Path) -> str:
    db = tmp_path / "studio.db"
    shutil.copy(prepared, db)
    for suffix in ("-wal", "-shm"):
        if prepared.with_name(prepared.name + suffix).exists():
            shutil.copy(prepared.with_name(prepared.name + suffix), db.with_name(db.name + suffix))
    return f"sqlite:///{db}"


@pytest.mark.parametrize("delay", [0.0, 0.01, 0.03, 0.06, 0.2])
def test_sigkill_during_settlement_settles_exactly_once(prepared: Path, tmp_path: Path, delay: float) -> None:
    kill_during_settlement_then_recover(copy_of(prepared, tmp_path), delay)


@pytest.mark.parametrize("delay", [0.0, 0.03, 0.1])
def test_sigkill_during_settlement_settles_exactly_once_on_postgresql(
    prepared_postgres: str, postgres_server: PostgresServer, delay: float
) -> None:
    kill_during_settlement_then_recover(postgres_server.copy_database(prepared_postgres), delay)


def kill_during_settlement_then_recover(url: str, delay: float) -> None:
    process = subprocess.Popen([sys.executable, "-c", SETTLE_THEN_HANG, url], stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None
    try:
        assert process.stdout.readline().strip() == "SETTLING"
        time.sleep(delay)  # somewhere before, inside or after the settlement transaction
    finally:
        os.kill(process.pid, signal.SIGKILL)
        process.wait()
        process.stdout.close()

    clock = ManualClock(datetime(2026, 11, 29, 13, tzinfo=UTC))
    table = load_table_config()
    wallets = WalletStore(url, clock)
    store = SqlEventStore(url)
    betting = BettingService("T1", wallets, table.limits, table.pay_table, clock)
    betting.settle_unsettled(store.read("T1"))  # what the studio does at start
    betting.settle_unsettled(store.read("T1"))  # and again: nothing more happens
    # Banker natural 9 beats Player 2. Player p placed 8 bets of 1000 on one type: banker when p % 3 == 0 (each
    # returns 1950), player when p % 3 == 1 and tie when p % 3 == 2 (both lose).
    expected = {0: 100_000 - 8_000 + 8 * 1_950, 1: 100_000 - 8_000, 2: 100_000 - 8_000}
    assert [wallets.balance(f"p{p}") for p in range(PLAYERS)] == [expected[p % 3] for p in range(PLAYERS)]
    assert all(wallets.balance(f"p{p}") == wallets.ledger_sum(f"p{p}") for p in range(0, PLAYERS, 37))
    wallets.close()
    store.close()
