"""A studio restarted in the middle of a shoe (issue 13): the simulated shoe deals on from where the log says it was,
and its fresh boot numbering its cards from 1 again is no duplicate. Two `Studio`s in turn on one SQLite file, each
reading the built-in shoe through the real smart-shoe driver on a pseudo-terminal."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from dealer_ui.runtime import Studio, StudioSettings
from studio.domain import commands as c
from studio.domain.procedure import Phase
from studio.domain.records import Record
from studio.domain.roles import Actor, Role
from studio.settings import sqlite_url
from studio.simulated_shoes import SimulatedShoeStore
from studio.store_sql import SqlEventStore
from tests.waiting import until

DEALER = Actor(Role.DEALER, "ann")


def burns(settings: StudioSettings) -> list[Record]:
    with SqlEventStore(sqlite_url(settings.database)) as store:
        return [record for record in store.read("T1") if record.kind == "CardBurned"]


async def run(studio: Studio, body: object) -> None:
    await studio.start()
    try:
        await body  # type: ignore[misc]
    finally:
        await studio.stop()


@pytest.mark.parametrize("before", [1, 3])  # with 1, the restarted shoe's first card has the same number as the last
def test_a_restarted_studio_deals_the_card_the_interrupted_shoe_would_have_dealt(tmp_path: Path, before: int) -> None:
    settings = StudioSettings(database=str(tmp_path / "studio.db"), simulator_seed=7)
    first = Studio(settings)
    table = first.tables["T1"]

    async def deal_a_few() -> None:
        first.handle("T1", c.ConfirmShuffle(DEALER))
        first.handle("T1", c.PlaceCutCard(DEALER))
        for drawn in range(1, before + 1):  # some of the six burn cards
            assert first.draw_simulated("T1")
            await until(lambda n=drawn: table.service.state.cards_drawn == n, f"card {drawn} to be logged")

    asyncio.run(run(first, deal_a_few()))
    shoe = SimulatedShoeStore(sqlite_url(settings.database)).load("T1")
    assert shoe is not None and shoe[0] == 1
    order = shoe[1]
    assert [r.data["card"] for r in burns(settings)] == [card.code for card in order[:before]]

    second = Studio(settings)  # the process restarted: a new boot of the simulated shoe, its numbers from 1 again
    again = second.tables["T1"]
    assert again.service.state.cards_drawn == before and again.simulator is not None
    assert again.simulator.position == before

    async def deal_on() -> None:
        for drawn in range(before + 1, 7):  # the cards left of the burn after the shuffle
            assert second.draw_simulated("T1")
            await until(lambda n=drawn: again.service.state.cards_drawn == n, f"card {drawn} to be logged")

    asyncio.run(run(second, deal_on()))
    state = second.tables["T1"].service.state
    assert state.phase is Phase.READY and state.suspension is None  # no false duplicate, no card out of order
    assert [r.data["card"] for r in burns(settings)] == [card.code for card in order[:6]]  # on exactly where it was
    sessions = [r.data.get("device_session") for r in burns(settings)]
    assert len(set(sessions[:before])) == 1 and len(set(sessions[before:])) == 1 and sessions[0] != sessions[before]
    assert [r.data["device_seq"] for r in burns(settings)] == [*range(1, before + 1), *range(1, 7 - before)]
