"""The `EventStore` contract (studio/ports.py), one suite run against every implementation (DESIGN.md §4, habit 5).

`backend` opens handles on one store: for memory every handle is the same object, for SQLite each is a new
`SqlEventStore` on the same real file, for PostgreSQL on the same database of a real server (tests/services.py), as
two processes of the studio would be.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import closing
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest
from sqlalchemy import text

from studio.database import BUSY_TIMEOUT_MS
from studio.domain.chain import InvalidRecord, canonical_json, stored_record, verify_chain, verify_stored_chain
from studio.domain.records import GENESIS_HASH, ConcurrentAppend, NewRecord, StoreError
from studio.ports import EventStore
from studio.store_memory import MemoryEventStore
from studio.store_sql import SqlEventStore

T0 = datetime(2024, 5, 1, 12, 0, 0, 123456, tzinfo=UTC)


def card_event(i: int, code: str = "QH") -> NewRecord:
    return NewRecord(
        at=T0 + timedelta(seconds=i, microseconds=i),
        actor="device:shoe-1",
        kind="CardDealt",
        data={"round": 7, "position": "player", "index": i, "card": code, "confidence": 0.97, "tags": ["a", "é"]},
        raw=f"02{i:04x}03",
    )


def batch(n: int, start: int = 0) -> list[NewRecord]:
    return [card_event(i) for i in range(start, start + n)]


@dataclass
class Backend:
    name: str
    opener: Callable[[], EventStore]
    handles: list[EventStore] = field(default_factory=list)

    def open(self) -> EventStore:
        store = self.opener()
        self.handles.append(store)
        return store


def sqlite_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'data' / 'events.db'}"  # 'data/' does not exist yet: the store makes it


@pytest.fixture(params=["memory", "sqlite", "postgresql"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    if request.param == "memory":
        shared = MemoryEventStore()
        result = Backend("memory", lambda: shared)
    else:
        url = sqlite_url(tmp_path) if request.param == "sqlite" else request.getfixturevalue("postgres_url")
        result = Backend(request.param, lambda: SqlEventStore(url))
    yield result
    for store in result.handles:
        store.close()


@pytest.fixture
def store(backend: Backend) -> EventStore:
    return backend.open()


def test_a_new_store_is_empty(store: EventStore) -> None:
    assert store.streams() == []
    assert store.last_seq("table-1") == 0
    assert list(store.read("table-1")) == []


def test_append_returns_the_records_as_logged_and_read_gives_them_back_exactly(store: EventStore) -> None:
    news = [
        card_event(0),
        NewRecord(
            at=T0, actor="pit_boss:bob", kind="RoundVoided", data={"reason": "misdeal", "nested": {"b": [1, None]}}
        ),
        NewRecord(at=datetime(2024, 5, 1, 23, 59, 59, 999999, tzinfo=UTC), actor="system", kind="Empty", data={}),
    ]
    logged = store.append("table-1", news, expected_seq=0)
    assert [r.seq for r in logged] == [1, 2, 3]
    for record, new in zip(logged, news, strict=True):
        assert (record.stream, record.at, record.actor, record.kind, record.data, record.raw) == (
            "table-1",
            new.at,
            new.actor,
            new.kind,
            new.data,
            new.raw,
        )
        assert record.at.tzinfo is not None
        assert record.at.utcoffset() == timedelta(0)
        assert len(record.hash) == 64
    assert logged[0].prev_hash == GENESIS_HASH
    assert [r.prev_hash for r in logged[1:]] == [r.hash for r in logged[:-1]]
    assert list(store.read("table-1")) == logged
    assert logged[2].at.microsecond == 999999
    assert logged[1].raw is None


def test_seqs_run_from_one_without_gaps_across_appends(store: EventStore) -> None:
    seq = 0
    for size in (1, 3, 2, 5):
        logged = store.append("table-1", batch(size, start=seq), expected_seq=seq)
        assert [r.seq for r in logged] == list(range(seq + 1, seq + size + 1))
        seq += size
    assert store.last_seq("table-1") == seq == 11
    assert [r.seq for r in store.read("table-1")] == list(range(1, 12))


def test_streams_are_isolated(store: EventStore) -> None:
    store.append("table-2", batch(2), expected_seq=0)
    store.append("table-1", batch(3), expected_seq=0)
    store.append("table-2", batch(1, start=2), expected_seq=2)
    assert store.streams() == ["table-1", "table-2"]
    assert store.last_seq("table-1") == 3
    assert store.last_seq("table-2") == 3
    assert {r.stream for r in store.read("table-1")} == {"table-1"}
    # Each stream has its own chain, starting at the genesis hash.
    for name in ("table-1", "table-2"):
        records = list(store.read(name))
        assert records[0].prev_hash == GENESIS_HASH
        assert verify_chain(records).ok


def test_read_after(store: EventStore) -> None:
    store.append("table-1", batch(5), expected_seq=0)
    assert [r.seq for r in store.read("table-1", after=0)] == [1, 2, 3, 4, 5]
    assert [r.seq for r in store.read("table-1", after=3)] == [4, 5]
    assert list(store.read("table-1", after=5)) == []
    assert list(store.read("table-1", after=99)) == []
    assert list(store.read("elsewhere", after=2)) == []


def test_streams_lists_only_streams_with_records_sorted(store: EventStore) -> None:
    for name in ("b", "a", "table-10", "table-9"):
        store.append(name, batch(1), expected_seq=0)
    assert store.append("empty", [], expected_seq=0) == []
    assert store.streams() == ["a", "b", "table-10", "table-9"]


@pytest.mark.parametrize("stale", [0, 1, 3, 4])
def test_a_stale_expected_seq_raises_concurrent_append_and_changes_nothing(store: EventStore, stale: int) -> None:
    before = store.append("table-1", batch(2), expected_seq=0)
    with pytest.raises(ConcurrentAppend) as raised:
        store.append("table-1", batch(3, start=2), expected_seq=stale)
    assert (raised.value.stream, raised.value.expected, raised.value.actual) == ("table-1", stale, 2)
    assert isinstance(raised.value, StoreError)
    assert "table-1" in str(raised.value)
    assert list(store.read("table-1")) == before
    assert store.last_seq("table-1") == 2


def test_an_empty_append_still_checks_expected_seq(store: EventStore) -> None:
    store.append("table-1", batch(1), expected_seq=0)
    assert store.append("table-1", [], expected_seq=1) == []
    with pytest.raises(ConcurrentAppend):
        store.append("table-1", [], expected_seq=0)


@pytest.mark.parametrize(
    "bad",
    [
        NewRecord(at=datetime(2024, 5, 1, 12, 0), actor="system", kind="Naive", data={}),  # naive, on purpose
        NewRecord(at=T0.astimezone(timezone(timedelta(hours=2))), actor="system", kind="Offset", data={}),
        NewRecord(at=T0, actor="system", kind="NotJson", data={"when": T0}),
        NewRecord(at=T0, actor="system", kind="NaN", data={"x": float("nan")}),
        NewRecord(at=T0, actor="system", kind="", data={}),
    ],
    ids=["naive", "offset", "not-json", "nan", "no-kind"],
)
def test_a_batch_is_all_or_nothing(store: EventStore, bad: NewRecord) -> None:
    store.append("table-1", batch(2), expected_seq=0)
    with pytest.raises(InvalidRecord):
        store.append("table-1", [*batch(2, start=2), bad, card_event(5)], expected_seq=2)
    assert store.last_seq("table-1") == 2
    assert [r.seq for r in store.read("table-1")] == [1, 2]
    store.append("table-1", batch(1, start=2), expected_seq=2)  # the stream is still usable
    assert verify_chain(store.read("table-1")).ok


@pytest.mark.parametrize("name", ["", None])
def test_bad_arguments_are_refused(store: EventStore, name: str | None) -> None:
    with pytest.raises(InvalidRecord):
        store.append(name, batch(1), expected_seq=0)  # type: ignore[arg-type]
    with pytest.raises(InvalidRecord):
        store.append("table-1", batch(1), expected_seq=-1)
    assert store.streams() == []


def test_the_log_verifies_as_a_hash_chain(store: EventStore) -> None:
    seq = 0
    for size in (1, 4, 2):
        seq += len(store.append("table-1", batch(size, start=seq), expected_seq=seq))
    verdict = verify_chain(store.read("table-1"))
    assert verdict.ok, verdict.reason
    assert verdict.records == 7
    # Reading from the middle continues the same chain.
    records = list(store.read("table-1", after=3))
    assert records[0].prev_hash == next(r for r in store.read("table-1") if r.seq == 3).hash


def test_what_a_caller_holds_is_a_copy(store: EventStore) -> None:
    logged = store.append("table-1", [card_event(0)], expected_seq=0)
    logged[0].data["card"] = "AS"  # type: ignore[index]  # data is a plain dict; mutating it must not reach the log
    read = next(store.read("table-1"))
    assert read.data["card"] == "QH"
    read.data["card"] = "KS"  # type: ignore[index]
    assert next(store.read("table-1")).data["card"] == "QH"
    assert verify_chain(store.read("table-1")).ok


def test_reading_is_not_disturbed_by_appends(store: EventStore) -> None:
    store.append("table-1", batch(3), expected_seq=0)
    reader = store.read("table-1")
    assert next(reader).seq == 1
    store.append("table-1", batch(2, start=3), expected_seq=3)
    assert [r.seq for r in reader][:2] == [2, 3]  # still in order, no duplicates


def test_close_is_safe_twice_and_a_closed_store_refuses_work(store: EventStore) -> None:
    store.append("table-1", batch(1), expected_seq=0)
    store.close()
    store.close()
    for use in (
        lambda: store.append("table-1", batch(1), expected_seq=1),
        lambda: store.read("table-1"),
        lambda: store.last_seq("table-1"),
        store.streams,
    ):
        with pytest.raises(StoreError, match="closed"):
            use()


def test_two_writers_racing_at_the_same_seq_exactly_one_wins(backend: Backend) -> None:
    first, second = backend.open(), backend.open()
    rounds = 15
    for expected in range(rounds):
        barrier = threading.Barrier(2)
        outcomes: dict[str, object] = {}

        def write(
            name: str, store: EventStore, at_seq: int, barrier: threading.Barrier, outcomes: dict[str, object]
        ) -> None:
            barrier.wait()  # both threads call append at the same moment
            try:
                outcomes[name] = store.append("table-1", [card_event(at_seq, code=name)], expected_seq=at_seq)
            except ConcurrentAppend as error:
                outcomes[name] = error

        threads = [
            threading.Thread(target=write, args=(name, store, expected, barrier, outcomes))
            for name, store in (("AS", first), ("KD", second))
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        winners = [name for name, outcome in outcomes.items() if isinstance(outcome, list)]
        losers = [outcome for outcome in outcomes.values() if isinstance(outcome, ConcurrentAppend)]
        assert len(winners) == 1, outcomes
        assert len(losers) == 1, outcomes
        assert losers[0].actual == expected + 1
        assert next(first.read("table-1", after=expected)).data["card"] == winners[0]
    assert second.last_seq("table-1") == first.last_seq("table-1") == rounds
    assert verify_chain(first.read("table-1")).ok


def test_a_writer_behind_another_writers_append_gets_concurrent_append_then_continues_the_chain(
    backend: Backend,
) -> None:
    # A SQL store keeps the head it committed last and skips reading it: the other writer's record must still stop it.
    first, second = backend.open(), backend.open()
    first.append("table-1", batch(2), expected_seq=0)
    second.append("table-1", batch(1, start=2), expected_seq=2)
    with pytest.raises(ConcurrentAppend) as raised:
        first.append("table-1", batch(1, start=3), expected_seq=2)
    assert (raised.value.expected, raised.value.actual) == (2, 3)
    first.append("table-1", batch(2, start=3), expected_seq=3)
    second.append("table-1", batch(1, start=5), expected_seq=5)
    assert [r.seq for r in second.read("table-1")] == [1, 2, 3, 4, 5, 6]
    assert verify_chain(first.read("table-1")).ok


def test_both_stores_seal_identically(tmp_path: Path) -> None:
    memory = MemoryEventStore()
    with SqlEventStore(sqlite_url(tmp_path)) as sql:
        assert memory.append("t", batch(4), 0) == sql.append("t", batch(4), 0)
        assert list(memory.read("t")) == list(sql.read("t"))


# SQLite only: the file on disk.


def test_reopening_the_file_sees_everything(tmp_path: Path) -> None:
    url = sqlite_url(tmp_path)
    with SqlEventStore(url) as writer:
        logged = writer.append("table-1", batch(3), expected_seq=0)
        logged += writer.append("table-1", batch(2, start=3), expected_seq=3)
        writer.append("table-2", batch(1), expected_seq=0)
    with SqlEventStore(url) as reader:
        assert list(reader.read("table-1")) == logged
        assert reader.streams() == ["table-1", "table-2"]
        assert reader.last_seq("table-1") == 5
        reader.append("table-1", batch(1, start=5), expected_seq=5)  # and the chain goes on from the stored head
        assert verify_chain(reader.read("table-1")).ok


def test_the_file_is_in_wal_mode_with_full_sync_and_keyed_by_stream_and_seq(tmp_path: Path) -> None:
    with SqlEventStore(sqlite_url(tmp_path)) as store:
        store.append("table-1", batch(1), expected_seq=0)
        with store._engine.connect() as conn:  # the store's own connection settings
            assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
            assert conn.exec_driver_sql("PRAGMA synchronous").scalar() == 2  # FULL
            assert conn.exec_driver_sql("PRAGMA busy_timeout").scalar() == BUSY_TIMEOUT_MS
        # The database itself refuses a second record at the same place (DESIGN.md §4, habit 4).
        with closing(sqlite3.connect(tmp_path / "data" / "events.db")) as db, pytest.raises(sqlite3.IntegrityError):
            db.execute("INSERT INTO event_log SELECT * FROM event_log WHERE seq = 1")


def test_a_database_failure_mid_batch_appends_nothing(tmp_path: Path) -> None:
    with SqlEventStore(sqlite_url(tmp_path)) as store:
        store.append("table-1", batch(1), expected_seq=0)
        with store._engine.begin() as conn:  # make the database itself refuse the 3rd record of the next batch
            conn.execute(
                text(
                    "CREATE TRIGGER refuse BEFORE INSERT ON event_log WHEN NEW.seq = 4 "
                    "BEGIN SELECT RAISE(ABORT, 'disk on fire'); END"
                )
            )
        with pytest.raises(StoreError, match="disk on fire") as raised:
            store.append("table-1", batch(4, start=1), expected_seq=1)
        assert "\n" not in str(raised.value)
        assert not isinstance(raised.value, ConcurrentAppend)
        assert store.last_seq("table-1") == 1
        with store._engine.begin() as conn:
            conn.execute(text("DROP TRIGGER refuse"))
        # The failed append left nothing open on the connection appends keep: the same batch goes in now.
        store.append("table-1", batch(4, start=1), expected_seq=1)
        assert store.last_seq("table-1") == 5 and verify_chain(store.read("table-1")).ok


def test_a_file_that_is_not_a_database_is_a_one_line_store_error(tmp_path: Path) -> None:
    path = tmp_path / "garbage.db"
    path.write_bytes(b"this is not a database" * 500)
    with pytest.raises(StoreError, match="not a database") as raised:
        SqlEventStore(f"sqlite:///{path}")
    assert "\n" not in str(raised.value)


def test_a_database_corrupted_after_opening_is_a_store_error(tmp_path: Path) -> None:
    path = tmp_path / "events.db"
    with SqlEventStore(f"sqlite:///{path}") as store:
        store.append("table-1", batch(50), expected_seq=0)
    with path.open("r+b") as file:  # keep the header, overwrite the pages
        file.seek(100)
        file.write(b"\xff" * 8000)
    with pytest.raises(StoreError) as raised, SqlEventStore(f"sqlite:///{path}") as store:
        list(store.read("table-1"))
    assert "\n" not in str(raised.value)


def test_an_unreachable_location_is_a_store_error(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    with pytest.raises(StoreError, match="a-file"):
        SqlEventStore(f"sqlite:///{blocker / 'events.db'}")
    with pytest.raises(StoreError, match="invalid"):
        SqlEventStore("not a url")
    with pytest.raises(StoreError, match="nosuchdb"):
        SqlEventStore("nosuchdb://somewhere/events")


@pytest.mark.parametrize("after", [0, 3, 7])
def test_reading_runs_across_pages_exactly(store: EventStore, monkeypatch: pytest.MonkeyPatch, after: int) -> None:
    monkeypatch.setattr("studio.store_sql.READ_PAGE", 4)  # pages of 4 records: 17 records make five of them
    store.append("table-1", batch(17), 0)
    assert [record.seq for record in store.read("table-1", after=after)] == list(range(after + 1, 18))


def test_a_row_deleted_behind_the_stores_back_is_read_past_and_the_chain_shows_the_gap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("studio.store_sql.READ_PAGE", 4)
    url = sqlite_url(tmp_path)
    with SqlEventStore(url) as store:
        store.append("table-1", batch(17), 0)
    with closing(sqlite3.connect(tmp_path / "data" / "events.db")) as db, db:
        db.execute("DELETE FROM event_log WHERE seq IN (6, 7, 8, 9, 10)")  # a whole page and more
    with SqlEventStore(url) as store:
        records = list(store.read("table-1"))
    assert [record.seq for record in records] == [1, 2, 3, 4, 5, 11, 12, 13, 14, 15, 16, 17]
    assert not verify_chain(records).ok


@pytest.mark.parametrize("after", [2**63 - 1 - 5, 2**63 - 1, 2**63 + 5])
def test_reading_after_the_largest_seq_there_can_be_is_empty(store: EventStore, after: int) -> None:
    store.append("table-1", batch(3), 0)
    assert list(store.read("table-1", after=after)) == []


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"], indirect=True)
def test_a_sql_store_hands_out_its_rows_as_stored_the_text_the_chain_hashed(backend: Backend) -> None:
    # `studio log verify` checks a long log's chain on the stored text and replays from (seq, kind, data, raw).
    store = backend.open()
    assert isinstance(store, SqlEventStore)
    logged = store.append("table-1", batch(7), 0)
    store.append("table-2", batch(2), 0)
    rows = list(store.stored_rows("table-1"))
    assert [stored_record(row) for row in rows] == logged
    assert [row[5] for row in rows] == [canonical_json(record.data) for record in logged]
    assert verify_stored_chain(rows) == verify_chain(logged)
    assert list(store.stored_rows("table-1", after=2, until=5)) == rows[2:5]
    assert list(store.stored_events("table-1", after=5)) == [(row[1], row[4], row[5], row[6]) for row in rows[5:]]
    assert list(store.stored_rows("table-1", after=7)) == list(store.stored_rows("nobody")) == []
