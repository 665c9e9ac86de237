"""The studio database becomes unreachable mid-round (a real PostgreSQL server, stopped and started again): the table
stops visibly and refuses what it cannot log, the card a device read is kept and offered again, and the table resumes
by itself when the database answers, with every card logged once and in order."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from dealer_ui.app import create_app
from dealer_ui.runtime import Studio, StudioSettings
from dealer_ui.views import console_view
from drivers.memory_source import MemorySource
from studio.domain import commands as c
from studio.domain.cards import Card
from studio.domain.chain import verify_chain
from studio.domain.reads import DeviceReport, ReportKind
from studio.store_sql import SqlEventStore
from studio.table_service import LogUnavailable
from tests.services import PostgresServer
from tests.waiting import wait_until

TABLE = """\
[table]
id = "T1"

[procedure]
allow_early_close = true
burn_after_shuffle = 0

[[sources]]
id = "shoe"
driver = "memory"
"""
AT = datetime(2026, 11, 29, 12, tzinfo=UTC)


@pytest.fixture
def server(tmp_path: Path) -> Iterator[PostgresServer]:
    """A PostgreSQL server of this test's own: it is stopped and started again."""
    postgres = PostgresServer(tmp_path / "pg")
    postgres.start()
    yield postgres
    postgres.remove()


def test_the_table_waits_for_its_log_and_loses_no_card(server: PostgresServer, tmp_path: Path) -> None:
    table_file = tmp_path / "t1.toml"
    table_file.write_text(TABLE)
    url = server.new_database()
    app = create_app(StudioSettings(database=url, table_files=(table_file,)))
    studio: Studio = app.state.studio
    runtime = studio.tables["T1"]
    shoe = runtime.sources[0]
    assert isinstance(shoe, MemorySource)
    with TestClient(app) as client:

        def run(command: c.Command) -> None:  # on the server's event loop, as a console's request would be
            client.portal.call(lambda: studio.handle("T1", command))  # type: ignore[union-attr]

        def read(code: str, seq: int) -> None:
            report = DeviceReport("shoe", ReportKind.CARD, AT, Card.parse(code), seq, 1.0, f"raw-{seq}")
            client.portal.call(shoe.push, report)  # type: ignore[union-attr]

        for command in (c.ConfirmShuffle("dealer:ann"), c.PlaceCutCard("dealer:ann"), c.OpenBetting("dealer:ann"),
                        c.CloseBetting("dealer:ann")):  # fmt: skip
            run(command)
        read("2H", 1)
        wait_until(
            lambda: runtime.service.state.round is not None and len(runtime.service.state.round.dealt) == 1,
            "the first card",
            20,
        )
        seq_before = runtime.service.seq

        server.stop()
        read("3H", 2)  # the shoe reads the next card while the database is down
        wait_until(lambda: runtime.service.log_unavailable is not None, "the table to see its log unavailable", 20)
        view = console_view(studio, runtime)
        assert view["next_action"]["action"] == "wait" and view["light"] == "red"
        assert "log is unavailable" in view["next_action"]["text"] and view["log_unavailable"]
        current = runtime.service.state.round
        assert runtime.service.seq == seq_before and current is not None and len(current.dealt) == 1  # nothing moved
        with pytest.raises(LogUnavailable):
            run(c.DeclareError("dealer:ann", "dealer_error", "a console's command is refused too"))
        assert client.get("/readyz").status_code == 503

        server.start()
        wait_until(
            lambda: runtime.service.log_unavailable is None and len(runtime.service.state.round.dealt) == 2,
            "the held card to be logged",
            20,
        )
        read("4H", 3)
        read("5H", 4)
        wait_until(
            lambda: runtime.service.state.round is None, "the round to complete", 20
        )  # the round completed: 2+4=6 against 3+5=8
        assert client.get("/readyz").status_code == 200
    with SqlEventStore(url) as store:  # the app closed its own on the way out
        logged = list(store.read("T1"))
    assert verify_chain(logged).ok
    cards = [r.data["card"] for r in logged if r.kind == "CardDealt"]
    assert cards == ["2H", "3H", "4H", "5H"]  # each card once, in the order read
    result = next(r for r in logged if r.kind == "RoundCompleted")
    assert result.data["winner"] == "banker"
