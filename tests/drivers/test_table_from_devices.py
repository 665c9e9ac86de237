"""End to end: a simulated smart shoe on a pty deals rounds into a table logged on SQLite, through the supervisor."""

from __future__ import annotations

import asyncio
import random
from pathlib import Path

import pytest

from drivers.simulator.pty_device import PtyDevice
from drivers.simulator.shoe_sim import ShoeSimulator
from drivers.smart_shoe.source import SmartShoeSource
from studio.clock import SystemClock
from studio.domain import commands as c
from studio.domain.audit import audit
from studio.domain.procedure import Phase
from studio.domain.procedure_config import ProcedureConfig
from studio.simulation import seeded_shoe
from studio.sources import SourceState
from studio.store_sql import SqlEventStore
from studio.supervisor import Supervisor
from studio.table_service import TableService
from tests.waiting import until

DEALER = "dealer:ann"


def test_rounds_dealt_from_a_shoe_on_a_pty_are_logged_and_verify(tmp_path: Path) -> None:
    cards = seeded_shoe(8, random.Random(21))
    sim = ShoeSimulator(cards, "smart-shoe", device=PtyDevice(link=tmp_path / "shoe0"), cut_card_at=30)
    sim.start()
    store = SqlEventStore(f"sqlite:///{tmp_path / 'studio.db'}")
    table = TableService("T1", store, SystemClock(), ProcedureConfig(allow_early_close=True))

    async def body() -> None:
        supervisor = Supervisor(table.handle, [SmartShoeSource("shoe-1", str(tmp_path / "shoe0"))])
        task = asyncio.create_task(supervisor.run())
        await until(
            lambda: "shoe-1" in supervisor.states and supervisor.states["shoe-1"].state is SourceState.CONNECTED,
            "the shoe to connect",
        )
        table.handle(c.ConfirmShuffle(DEALER))
        table.handle(c.PlaceCutCard(DEALER, 30))
        while table.state.phase is not Phase.AWAITING_SHUFFLE:
            phase = table.state.phase
            if phase is Phase.READY:
                table.handle(c.OpenBetting(DEALER))
                table.handle(c.CloseBetting(DEALER))
                continue
            assert phase in (Phase.BURNING, Phase.DEALING), table.state.suspension
            drawn = sim.position
            sim.draw()  # the dealer slides a card out; the shoe reports it
            await until(lambda n=drawn: table.state.cards_drawn > n or table.state.phase is Phase.AWAITING_SHUFFLE,
                        f"card {drawn + 1} to be logged")  # fmt: skip
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    try:
        asyncio.run(body())
    finally:
        sim.stop()
    records = list(store.read("T1"))
    verdict = audit(records)
    assert verdict.ok and verdict.rounds >= 3
    dealt = [record.data["card"] for record in records if record.kind in ("CardBurned", "CardDealt")]
    assert dealt == [card.code for card in cards[: len(dealt)]]
    assert any(record.kind == "CutCardAppeared" for record in records)
    assert records[-1].kind == "ShoeEnded" and records[-1].data["composition_ok"]
    assert all(record.raw for record in records if record.kind == "CardDealt")  # the shoe's bytes, as evidence
    store.close()
