"""An outage of the log is part of the audited history (issue 13): once the log answers again, a `LogOutage` record
says from when until when it could not be written and how many commands were refused meanwhile."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import UTC, datetime, timedelta

import pytest

from studio.clock import ManualClock
from studio.domain import commands as c
from studio.domain import events as e
from studio.domain.audit import audit
from studio.domain.feed import feed_message
from studio.domain.procedure_config import ProcedureConfig
from studio.domain.records import NewRecord, Record, StoreError
from studio.store_memory import MemoryEventStore
from studio.table_service import OUTAGE_ACTOR, LogUnavailable, TableService

T0 = datetime(2026, 12, 1, 9, tzinfo=UTC)
DEALER = "dealer:ann"


class FlakyStore(MemoryEventStore):
    """The memory store, which stops answering while `down`, as a database server does when it goes away."""

    down = False

    def _check(self) -> None:
        if self.down:
            raise StoreError("connection refused")

    def append(self, stream: str, records: Sequence[NewRecord], expected_seq: int) -> list[Record]:
        self._check()
        return super().append(stream, records, expected_seq)

    def read(self, stream: str, after: int = 0) -> Iterator[Record]:
        self._check()
        return super().read(stream, after)

    def last_seq(self, stream: str) -> int:
        self._check()
        return super().last_seq(stream)


def table() -> tuple[TableService, FlakyStore, ManualClock]:
    store, clock = FlakyStore(), ManualClock(T0)
    service = TableService("T1", store, clock, ProcedureConfig(burn_after_shuffle=0))
    service.handle(c.ConfirmShuffle(DEALER))
    return service, store, clock


def test_the_first_write_after_an_outage_logs_it_first() -> None:
    service, store, clock = table()
    store.down = True
    clock.advance(5)
    for _ in range(2):
        with pytest.raises(LogUnavailable):
            service.handle(c.PlaceCutCard(DEALER))
    clock.advance(60)
    store.down = False
    logged = service.handle(c.PlaceCutCard(DEALER))
    outage = e.LogOutage(T0 + timedelta(seconds=5), T0 + timedelta(seconds=65), 2, "connection refused")
    assert logged[0].event == outage and logged[0].record.actor == OUTAGE_ACTOR
    assert [type(entry.event) for entry in logged[1:]] == [e.CutCardPlaced, e.BurnRequired, e.BurnCompleted]
    records = list(store.read("T1"))
    assert audit(records).ok  # chained and replayed like every other record
    assert feed_message(logged[0].record) is None  # the studio's business: not on the results feed
    assert [r.kind for r in records].count("LogOutage") == 1
    service.handle(c.OpenBetting(DEALER))  # and only once
    assert [r.kind for r in store.read("T1")].count("LogOutage") == 1


def test_the_log_answering_again_logs_the_outage_at_once() -> None:
    service, store, clock = table()
    store.down = True
    with pytest.raises(LogUnavailable):
        service.handle(c.PlaceCutCard(DEALER))
    assert service.check_log() is False  # still down: nothing logged, the outage goes on
    clock.advance(30)
    store.down = False
    assert service.check_log() is True and service.log_unavailable is None
    last = list(store.read("T1"))[-1]
    assert last.kind == "LogOutage" and e.decode(last.kind, last.data) == e.LogOutage(
        T0, T0 + timedelta(seconds=30), 1, "connection refused"
    )
    assert service.state.phase.value == "awaiting_cut"  # the outage changed nothing at the table


def test_no_outage_no_record() -> None:
    service, store, _ = table()
    assert service.check_log() is True
    service.handle(c.PlaceCutCard(DEALER))
    assert "LogOutage" not in [r.kind for r in store.read("T1")]
