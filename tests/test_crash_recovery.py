"""A real process is SIGKILLed mid-round; a new one on the same SQLite file resumes exactly where it was."""

from __future__ import annotations

import contextlib
import os
import random
import signal
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

from studio.clock import ManualClock
from studio.domain import commands as c
from studio.domain.audit import audit
from studio.domain.procedure import Phase
from studio.domain.procedure_config import ProcedureConfig
from studio.domain.rules import Side
from studio.simulation import seeded_shoe, simulation
from studio.store_sql import SqlEventStore
from studio.table_service import TableService

CONFIG = ProcedureConfig(allow_early_close=True)
DEALER = "dealer:ann"
SHOE = "device:shoe-1"

DEAL_THREE_CARDS_THEN_HANG = """
import random, sys, time
from datetime import UTC, datetime
from studio.domain import commands as c
from studio.clock import SystemClock
from studio.domain.procedure_config import ProcedureConfig
from studio.simulation import seeded_shoe
from studio.store_sql import SqlEventStore
from studio.table_service import TableService

cards = seeded_shoe(8, random.Random(11))
store = SqlEventStore("sqlite:///" + sys.argv[1])
table = TableService("T1", store, SystemClock(), ProcedureConfig(allow_early_close=True))
table.handle(c.ConfirmShuffle("dealer:ann"))
table.handle(c.PlaceCutCard("dealer:ann"))
for n in range(6):
    table.handle(c.DrawCard("device:shoe-1", c.CardRead(cards[n], "shoe-1", n + 1)))
table.handle(c.OpenBetting("dealer:ann"))
table.handle(c.CloseBetting("dealer:ann"))
for n in range(6, 9):
    table.handle(c.DrawCard("device:shoe-1", c.CardRead(cards[n], "shoe-1", n + 1)))
print("MID-ROUND", flush=True)
time.sleep(600)
"""


def test_sigkill_mid_round_then_resume(tmp_path: Path) -> None:
    db = tmp_path / "studio.db"
    process = subprocess.Popen(
        [sys.executable, "-c", DEAL_THREE_CARDS_THEN_HANG, str(db)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert process.stdout is not None
        assert process.stdout.readline().strip() == "MID-ROUND"
    finally:
        os.kill(process.pid, signal.SIGKILL)
        process.wait()
        assert process.stdout is not None
        process.stdout.close()
    assert process.returncode == -signal.SIGKILL

    cards = seeded_shoe(8, random.Random(11))
    store = SqlEventStore(f"sqlite:///{db}")
    table = TableService("T1", store, ManualClock(datetime.now(UTC)), CONFIG)
    state = table.state
    assert state.phase is Phase.DEALING
    assert state.round is not None
    assert [card for _, card in state.round.dealt] == cards[6:9]
    assert state.round.next_side is Side.BANKER  # the 4th card of the deal
    assert state.cards_drawn == 9 and state.counts.burned == 6

    # The same next card is expected, and the round finishes by the rules.
    position = 9
    while table.state.phase is Phase.DEALING:
        table.handle(c.DrawCard(SHOE, c.CardRead(cards[position], "shoe-1", position + 1)))
        position += 1
    assert table.state.phase is Phase.READY
    assert table.state.last_result is not None and list(table.state.last_result.player)[:2] == [cards[6], cards[8]]
    verdict = audit(store.read("T1"))
    assert verdict.ok and verdict.rounds == 1
    store.close()


DEAL_FOREVER = """
import random, sys
from datetime import UTC, datetime
from studio.simulation import seeded_shoe, simulation
from studio.store_sql import SqlEventStore

sim = simulation(SqlEventStore("sqlite:///" + sys.argv[1]), datetime(2026, 1, 1, tzinfo=UTC), table_id="T1")
rng = random.Random(1)
printed = False
while True:
    for line in sim.deal_shoe(seeded_shoe(8, rng)):
        if not printed:
            print("DEALING", flush=True)
            printed = True
"""


def test_sigkill_while_writing_loses_nothing_accepted_and_leaves_no_torn_record(tmp_path: Path) -> None:
    db = tmp_path / "studio.db"
    process = subprocess.Popen([sys.executable, "-c", DEAL_FOREVER, str(db)], stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        assert process.stdout.readline().strip() == "DEALING"
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=1.5)  # let it write for a while
    finally:
        os.kill(process.pid, signal.SIGKILL)
        process.wait()
        assert process.stdout is not None
        process.stdout.close()

    store = SqlEventStore(f"sqlite:///{db}")
    records = list(store.read("T1"))
    assert len(records) > 50
    verdict = audit(records)
    assert verdict.ok, verdict.reason
    # A new process rebuilds the table from the log: it knows every card of the current shoe the log accepted.
    sim = simulation(store, datetime(2026, 1, 2, tzinfo=UTC), table_id="T1")
    assert sim.service.seq == records[-1].seq
    last_cut = max(index for index, record in enumerate(records) if record.kind == "CutCardPlaced")
    accepted = sum(1 for record in records[last_cut:] if record.kind in ("CardBurned", "CardDealt"))
    assert sim.service.state.cards_drawn == accepted
    store.close()
