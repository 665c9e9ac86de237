"""The hash chain (studio/chain.py): what it proves about a log, and what it cannot.

The tampering tests edit a real SQLite file behind the store's back with the sqlite3 module, as someone with access to
the disk would, then read it through the store and check that `verify_chain` names the first bad seq.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Iterator
from contextlib import closing
from dataclasses import replace
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given
from hypothesis import strategies as st

from studio.domain.chain import (
    ChainVerdict,
    InvalidRecord,
    UnreadableRecord,
    canonical_json,
    format_at,
    record_hash,
    seal,
    seal_stored,
    stored_record,
    verify_chain,
    verify_stored_chain,
)
from studio.domain.records import GENESIS_HASH, NewRecord, Record, StoredRow, StoreError
from studio.store_sql import SqlEventStore

T0 = datetime(2024, 5, 1, 12, 0, 0, 123456, tzinfo=UTC)


def new(i: int) -> NewRecord:
    return NewRecord(T0 + timedelta(seconds=i), "device:shoe-1", "CardDealt", {"index": i, "card": "9D"}, f"raw-{i}")


def chain_of(news: list[NewRecord], stream: str = "table-1") -> list[Record]:
    records: list[Record] = []
    prev = GENESIS_HASH
    for seq, item in enumerate(news, start=1):
        records.append(seal(stream, seq, item, prev))
        prev = records[-1].hash
    return records


# The encoding is an interface: anyone holding the records can re-hash them. Pin it.


def test_record_hash_is_sha256_of_the_documented_canonical_json() -> None:
    text = (
        '{"actor":"dealer:alice","at":"2024-05-01T12:00:00.000007Z","data":{"a":[1,2.5,null],"b":"\\u00e9"},'
        '"kind":"CardDealt","prev_hash":"' + GENESIS_HASH + '","raw":null,"seq":1,"stream":"table-1"}'
    )
    at = datetime(2024, 5, 1, 12, 0, 0, 7, tzinfo=UTC)
    digest = record_hash(
        "table-1", 1, at, "dealer:alice", "CardDealt", {"b": "é", "a": [1, 2.5, None]}, None, GENESIS_HASH
    )
    assert digest == hashlib.sha256(text.encode("ascii")).hexdigest()


def test_a_utc_time_hashes_the_same_whatever_its_tzinfo() -> None:
    args: tuple[Any, ...] = ("s", 1, "a", "k", {}, None, GENESIS_HASH)
    utc = record_hash(args[0], args[1], T0, *args[2:])
    assert utc == record_hash(args[0], args[1], T0.replace(tzinfo=ZoneInfo("UTC")), *args[2:])
    assert utc == record_hash(args[0], args[1], T0.replace(tzinfo=timezone(timedelta(0))), *args[2:])


def test_seal_links_and_normalizes() -> None:
    item = NewRecord(T0.replace(tzinfo=ZoneInfo("UTC")), "system", "Shuffled", {"decks": (1, 2)}, None)
    record = seal("table-1", 1, item, GENESIS_HASH)
    assert record.at.tzinfo is UTC
    assert record.data == {"decks": [1, 2]}  # as JSON gives it back, so every store returns the same thing
    assert record.hash == record_hash("table-1", 1, T0, "system", "Shuffled", {"decks": [1, 2]}, None, GENESIS_HASH)


@pytest.mark.parametrize(
    "at",
    [
        datetime(2024, 5, 1, 12),
        datetime(2024, 5, 1, 14, tzinfo=timezone(timedelta(hours=2))),
    ],  # naive and +02:00, on purpose
    ids=["naive", "plus-two"],
)
def test_seal_refuses_a_time_that_is_not_utc(at: datetime) -> None:
    with pytest.raises(InvalidRecord, match="not timezone-aware UTC"):
        seal("table-1", 1, NewRecord(at, "system", "Shuffled", {}), GENESIS_HASH)


# verify_chain on hand-made chains.


def test_an_empty_chain_and_an_intact_chain_verify() -> None:
    assert verify_chain([]) == ChainVerdict(ok=True, records=0, first_bad_seq=None, reason="0 record(s) verified")
    verdict = verify_chain(chain_of([new(i) for i in range(5)]))
    assert (verdict.ok, verdict.records, verdict.first_bad_seq) == (True, 5, None)


def test_a_chain_must_start_at_seq_one_from_the_genesis_hash() -> None:
    records = chain_of([new(i) for i in range(4)])
    verdict = verify_chain(records[1:])
    assert (verdict.ok, verdict.records, verdict.first_bad_seq) == (False, 0, 2)
    assert "seq 2" in verdict.reason
    first = seal("table-1", 1, new(0), "f" * 64)
    verdict = verify_chain([first])
    assert (verdict.first_bad_seq, verdict.reason) == (
        1,
        "seq 1 is the first record, but its prev_hash is not the genesis hash",
    )


def test_naive_and_offset_timestamps_are_flagged() -> None:
    records = chain_of([new(i) for i in range(3)])
    for at in (records[1].at.replace(tzinfo=None), records[1].at.astimezone(timezone(timedelta(hours=-5)))):
        verdict = verify_chain([records[0], replace(records[1], at=at), records[2]])
        assert (verdict.ok, verdict.records, verdict.first_bad_seq) == (False, 1, 2)
        assert verdict.reason.startswith("seq 2 has a timestamp that is not UTC")


def test_records_of_another_stream_are_flagged() -> None:
    ours, theirs = chain_of([new(i) for i in range(3)]), chain_of([new(i) for i in range(3)], stream="table-2")
    verdict = verify_chain([ours[0], theirs[1], ours[2]])
    assert (verdict.first_bad_seq, verdict.records) == (2, 1)
    assert "table-2" in verdict.reason


def test_a_rehashed_edit_breaks_the_next_link() -> None:
    # Someone who edits a record and recomputes its hash still cannot make the next record point to it.
    records = chain_of([new(i) for i in range(4)])
    edited = replace(records[1], data={"index": 1, "card": "KD"})
    edited = replace(edited, hash=record_hash(*_fields(edited)))
    verdict = verify_chain([records[0], edited, *records[2:]])
    assert (verdict.first_bad_seq, verdict.records) == (3, 2)
    assert "does not link to seq 2" in verdict.reason


def _fields(record: Record) -> tuple[Any, ...]:
    return (
        record.stream,
        record.seq,
        record.at,
        record.actor,
        record.kind,
        record.data,
        record.raw,
        record.prev_hash,
    )


# Tampering with the SQLite file itself.


@pytest.fixture
def db(tmp_path: Path) -> Iterator[tuple[SqlEventStore, Path]]:
    path = tmp_path / "events.db"
    with SqlEventStore(f"sqlite:///{path}") as store:
        store.append("table-1", [new(i) for i in range(5)], expected_seq=0)
        store.append("table-2", [new(i) for i in range(2)], expected_seq=0)
        assert verify_chain(store.read("table-1")).ok
        yield store, path


def tamper(path: Path, *statements: str) -> None:
    with closing(sqlite3.connect(path)) as conn, conn:
        for statement in statements:
            conn.execute(statement)


def test_an_edited_field_is_detected_at_its_seq(db: tuple[SqlEventStore, Path]) -> None:
    store, path = db
    tamper(path, """UPDATE event_log SET data = '{"card":"KD","index":2}' WHERE stream = 'table-1' AND seq = 3""")
    verdict = verify_chain(store.read("table-1"))
    assert (verdict.ok, verdict.records, verdict.first_bad_seq) == (False, 2, 3)
    assert verdict.reason == "seq 3 does not match its hash: the record was edited"
    assert verify_chain(store.read("table-2")).ok  # the other stream is untouched


@pytest.mark.parametrize(
    ("column", "value"),
    [
        ("actor", "'dealer:mallory'"),
        ("kind", "'RoundVoided'"),
        ("raw", "NULL"),
        ("at", "'2024-05-01T12:00:03.123457Z'"),
    ],
)
def test_every_column_is_covered_by_the_hash(db: tuple[SqlEventStore, Path], column: str, value: str) -> None:
    store, path = db
    tamper(path, f"UPDATE event_log SET {column} = {value} WHERE stream = 'table-1' AND seq = 4")
    assert verify_chain(store.read("table-1")).first_bad_seq == 4


@pytest.mark.parametrize(
    ("column", "value"), [("data", "'{\"card\": '"), ("at", "'yesterday'")], ids=["data-not-json", "at-not-a-time"]
)
def test_a_row_too_damaged_to_read_is_a_store_error_naming_its_seq(
    db: tuple[SqlEventStore, Path], column: str, value: str
) -> None:
    store, path = db
    tamper(path, f"UPDATE event_log SET {column} = {value} WHERE stream = 'table-1' AND seq = 3")
    with pytest.raises(StoreError, match="seq 3 of stream 'table-1' is unreadable") as raised:
        verify_chain(store.read("table-1"))
    assert "\n" not in str(raised.value)


def test_a_deleted_middle_record_is_detected(db: tuple[SqlEventStore, Path]) -> None:
    store, path = db
    tamper(path, "DELETE FROM event_log WHERE stream = 'table-1' AND seq = 3")
    verdict = verify_chain(store.read("table-1"))
    assert (verdict.ok, verdict.records, verdict.first_bad_seq) == (False, 2, 4)
    assert verdict.reason == "seq 4 follows seq 2: a record is missing or out of order"


def test_a_deleted_record_whose_followers_are_renumbered_is_detected(db: tuple[SqlEventStore, Path]) -> None:
    store, path = db
    tamper(
        path,
        "DELETE FROM event_log WHERE stream = 'table-1' AND seq = 3",
        "UPDATE event_log SET seq = -seq + 1 WHERE stream = 'table-1' AND seq > 3",  # 4, 5 -> -3, -4
        "UPDATE event_log SET seq = -seq WHERE stream = 'table-1' AND seq < 0",  # -> 3, 4
    )
    verdict = verify_chain(store.read("table-1"))
    assert (verdict.ok, verdict.first_bad_seq) == (False, 3)
    assert "does not link to seq 2" in verdict.reason


def test_two_swapped_records_are_detected(db: tuple[SqlEventStore, Path]) -> None:
    store, path = db
    tamper(
        path,
        "UPDATE event_log SET seq = -1 WHERE stream = 'table-1' AND seq = 2",
        "UPDATE event_log SET seq = 2 WHERE stream = 'table-1' AND seq = 4",
        "UPDATE event_log SET seq = 4 WHERE stream = 'table-1' AND seq = -1",
    )
    verdict = verify_chain(store.read("table-1"))
    assert (verdict.ok, verdict.records, verdict.first_bad_seq) == (False, 1, 2)
    assert verdict.reason.startswith("seq 2 ")


def test_cutting_off_the_last_records_is_not_detectable_by_the_chain_alone(db: tuple[SqlEventStore, Path]) -> None:
    # What remains after a truncation is still a perfect chain from the genesis hash: the chain cannot know that
    # more records ever existed. The service guards against this by remembering the head it last wrote or saw
    # (last seq and hash) and comparing it with the stored head at start-up; this test shows that comparison.
    store, path = db
    head = list(store.read("table-1"))[-1]
    tamper(path, "DELETE FROM event_log WHERE stream = 'table-1' AND seq = 5")
    verdict = verify_chain(store.read("table-1"))
    assert (verdict.ok, verdict.records) == (True, 4)
    assert store.last_seq("table-1") < head.seq  # the head comparison is what catches it


# Property: sealing always yields a verifiable chain, and any single change is caught at the record changed.

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8,
)
new_records = st.builds(
    NewRecord,
    at=st.datetimes(min_value=datetime(2000, 1, 1), max_value=datetime(2100, 1, 1), timezones=st.just(UTC)),
    actor=st.text(max_size=12),
    kind=st.text(min_size=1, max_size=12),
    data=st.dictionaries(st.text(max_size=8), json_values, max_size=4),
    raw=st.none() | st.text(max_size=12),
)
FIELDS = ["stream", "seq", "at", "actor", "kind", "data", "raw", "prev_hash", "hash"]


def mutated(record: Record, name: str) -> Record:
    """`record` with field `name` changed to a different value of the same kind."""
    value = getattr(record, name)
    if name == "seq":
        return replace(record, seq=value + 1)
    if name == "at":
        return replace(record, at=value + timedelta(microseconds=1))
    if name == "data":
        key = "tampered"
        while key in value:
            key += "!"
        return replace(record, data={**value, key: 1})
    if name == "raw":
        return replace(record, raw="x" if value is None else None)
    if name in {"prev_hash", "hash"}:
        return replace(record, **{name: ("0" if value[0] != "0" else "1") + value[1:]})
    return replace(record, **{name: value + "x"})


@given(
    news=st.lists(new_records, min_size=1, max_size=8),
    stream=st.text(min_size=1, max_size=10),
    data=st.data(),
)
def test_sealed_chains_verify_and_any_single_change_is_caught_at_its_record(
    news: list[NewRecord], stream: str, data: st.DataObject
) -> None:
    records = chain_of(news, stream=stream)
    verdict = verify_chain(records)
    assert (verdict.ok, verdict.records, verdict.first_bad_seq) == (True, len(news), None)

    index = data.draw(st.integers(min_value=0, max_value=len(records) - 1), label="index")
    name = data.draw(st.sampled_from(FIELDS), label="field")
    changed = mutated(records[index], name)
    verdict = verify_chain([*records[:index], changed, *records[index + 1 :]])
    assert not verdict.ok
    assert verdict.records == index  # every record before the changed one still verifies
    assert verdict.first_bad_seq == changed.seq  # and the verdict names the changed record
    assert f"seq {changed.seq}" in verdict.reason


# The chain checked on the stored text (`verify_stored_chain`, for `studio log verify` on long logs): the same verdict
# and the same reason as `verify_chain` on the records read, for every tampering, and the same unreadable rows.


def stored_verdicts(store: SqlEventStore, stream: str = "table-1") -> tuple[object, object]:
    """(verify_chain of the records read, verify_stored_chain of the rows); for an unreadable row, the seq it names."""
    try:
        records: object = verify_chain(store.read(stream))
    except StoreError as error:
        records = ("unreadable", str(error).split("seq ", 1)[1].split()[0])
    try:
        rows: object = verify_stored_chain(store.stored_rows(stream))
    except UnreadableRecord as error:
        rows = ("unreadable", str(error.seq))
    return records, rows


def forged_row_hash(path: Path, seq: int) -> None:
    """Re-hash row `seq` of table-1 over its stored text as it now is, and re-link every row after it: a forger's
    rewrite of the chain, text and all."""
    with closing(sqlite3.connect(path)) as conn, conn:
        rows = conn.execute(
            "SELECT stream, seq, at, actor, kind, data, raw, prev_hash FROM event_log "
            "WHERE stream = 'table-1' AND seq >= ? ORDER BY seq",
            (seq,),
        ).fetchall()
        prev = rows[0][7]
        for stream, number, at, actor, kind, data, raw, _ in rows:
            raw_text = "null" if raw is None else json.dumps(raw)
            envelope = (
                f'{{"actor":{json.dumps(actor)},"at":{json.dumps(at)},"data":{data},"kind":{json.dumps(kind)},'
                f'"prev_hash":"{prev}","raw":{raw_text},"seq":{number},"stream":{json.dumps(stream)}}}'
            )
            digest = hashlib.sha256(envelope.encode()).hexdigest()
            conn.execute(
                "UPDATE event_log SET prev_hash = ?, hash = ? WHERE stream = ? AND seq = ?",
                (prev, digest, stream, number),
            )
            prev = digest


TAMPERINGS = {
    "edited data": ["""UPDATE event_log SET data = '{"card":"KD","index":2}' WHERE seq = 3"""],
    "edited actor": ["UPDATE event_log SET actor = 'dealer:mallory' WHERE seq = 4"],
    "edited kind": ["UPDATE event_log SET kind = 'RoundVoided' WHERE seq = 4"],
    "raw removed": ["UPDATE event_log SET raw = NULL WHERE seq = 4"],
    "edited time": ["UPDATE event_log SET at = '2024-05-01T12:00:03.123457Z' WHERE seq = 4"],
    "time not UTC": ["UPDATE event_log SET at = '2024-05-01T14:00:03.123456+02:00' WHERE seq = 4"],
    "time written another way, same instant": [
        "UPDATE event_log SET at = '2024-05-01T12:00:03.123456+00:00' WHERE seq = 4"
    ],
    "data spaced out, same values": ["""UPDATE event_log SET data = '{"card": "9D", "index": 2}' WHERE seq = 3"""],
    "data keys reordered, same values": ["""UPDATE event_log SET data = '{"index":2,"card":"9D"}' WHERE seq = 3"""],
    "data a number": ["UPDATE event_log SET data = '12' WHERE seq = 3"],
    "hash edited": ["UPDATE event_log SET hash = upper(hash) WHERE seq = 2"],
    "seq stored as text": ["UPDATE event_log SET seq = '9' WHERE seq = 5"],
    "actor stored as a number": ["UPDATE event_log SET actor = 7 WHERE seq = 2"],
    "data not JSON": ["""UPDATE event_log SET data = '{"card": ' WHERE seq = 3"""],
    "data not ASCII": ["""UPDATE event_log SET data = '{"card":"9D","index":2,"x":"é"}' WHERE seq = 3"""],
    "time not a time": ["UPDATE event_log SET at = 'yesterday' WHERE seq = 3"],
    "time of a day that is not": ["UPDATE event_log SET at = '2024-02-30T12:00:03.123456Z' WHERE seq = 3"],
    "middle record deleted": ["DELETE FROM event_log WHERE stream = 'table-1' AND seq = 3"],
    "first record deleted": ["DELETE FROM event_log WHERE stream = 'table-1' AND seq = 1"],
    "last record cut off": ["DELETE FROM event_log WHERE stream = 'table-1' AND seq = 5"],
    "records swapped": [
        "UPDATE event_log SET seq = -1 WHERE stream = 'table-1' AND seq = 2",
        "UPDATE event_log SET seq = 2 WHERE stream = 'table-1' AND seq = 4",
        "UPDATE event_log SET seq = 4 WHERE stream = 'table-1' AND seq = -1",
    ],
    "record of another stream moved in": [
        "DELETE FROM event_log WHERE stream = 'table-1' AND seq = 2",
        "UPDATE event_log SET stream = 'table-1' WHERE stream = 'table-2' AND seq = 2",
    ],
}


# The same values written another way were never an edit to `verify_chain`, which decodes them; nor is a cut.
STILL_VERIFY = {"time written another way, same instant", "data spaced out, same values",
                "data keys reordered, same values", "last record cut off"}  # fmt: skip


@pytest.mark.parametrize("name", TAMPERINGS)
def test_the_stored_text_check_gives_the_records_verdict_for_every_tampering(
    db: tuple[SqlEventStore, Path], name: str
) -> None:
    store, path = db
    assert stored_verdicts(store) == (verify_chain(store.read("table-1")),) * 2  # intact first
    tamper(path, *[s.replace("WHERE seq", "WHERE stream = 'table-1' AND seq") for s in TAMPERINGS[name]])
    records, rows = stored_verdicts(store)
    assert rows == records
    assert (isinstance(records, ChainVerdict) and records.ok) == (name in STILL_VERIFY)


@pytest.mark.parametrize(
    ("statement", "first_bad"),
    [
        ("""UPDATE event_log SET data = '{"card": "KD", "index": 2}' WHERE stream = 'table-1' AND seq = 3""", 3),
        ("""UPDATE event_log SET data = '{"card": "9D", "index": 2}' WHERE stream = 'table-1' AND seq = 3""", 3),
        ("UPDATE event_log SET at = '2024-05-01T12:00:03.123456+00:00' WHERE stream = 'table-1' AND seq = 4", 4),
        ("UPDATE event_log SET data = '[1]' WHERE stream = 'table-1' AND seq = 4", 4),
    ],
    ids=["edited", "same values spaced out", "same time written another way", "data not an object"],
)
def test_a_chain_rewritten_over_text_that_is_not_canonical_is_caught_as_before(
    db: tuple[SqlEventStore, Path], statement: str, first_bad: int
) -> None:
    # The fast check hashes the stored text as it is: it must still refuse what was never the canonical form, which
    # `verify_chain` (decoding and re-encoding) catches as an edit even when every hash after it was forged.
    store, path = db
    tamper(path, statement)
    forged_row_hash(path, first_bad)
    records, rows = stored_verdicts(store)
    assert rows == records
    assert isinstance(records, ChainVerdict)
    assert (records.ok, records.first_bad_seq) == (False, first_bad)
    assert records.reason.startswith(f"seq {first_bad} ") and records.reason.endswith(": the record was edited")


@given(news=st.lists(new_records, min_size=1, max_size=6), stream=st.text(min_size=1, max_size=10), data=st.data())
def test_stored_rows_verify_as_their_records_do_whatever_single_change(
    news: list[NewRecord], stream: str, data: st.DataObject
) -> None:
    records = chain_of(news, stream=stream)
    rows = [stored_row(record) for record in records]
    assert verify_stored_chain(rows) == verify_chain(records)
    index = data.draw(st.integers(min_value=0, max_value=len(records) - 1), label="index")
    name = data.draw(st.sampled_from(FIELDS), label="field")
    changed = [*rows[:index], stored_row(mutated(records[index], name)), *rows[index + 1 :]]
    assert verify_stored_chain(changed) == verify_chain([stored_record(row) for row in changed])


def stored_row(record: Record) -> StoredRow:
    """`record` as the SQL store writes it."""
    return (record.stream, record.seq, format_at(record.at), record.actor, record.kind, canonical_json(record.data),
            record.raw, record.prev_hash, record.hash)  # fmt: skip


# Sealing writes the hashed envelope around the data's text (encoded once): the same hash as the documented encoding.
data_with_any_keys = st.dictionaries(
    st.text(max_size=5) | st.integers(min_value=-20, max_value=20).map(str),
    json_values | st.dictionaries(st.integers(min_value=-20, max_value=20), st.integers(), max_size=3),
    max_size=4,
)


@given(news=st.lists(new_records, min_size=1, max_size=4), stream=st.text(min_size=1, max_size=10),
       data=st.lists(data_with_any_keys, min_size=4, max_size=4))  # fmt: skip
def test_a_sealed_record_has_the_documented_hash_and_its_stored_row_the_hashed_texts(
    news: list[NewRecord], stream: str, data: list[dict[Any, Any]]
) -> None:
    prev = GENESIS_HASH
    for seq, (item, values) in enumerate(zip(news, data, strict=False), start=1):
        record, row = seal_stored(stream, seq, replace(item, data=values), prev)
        assert record.hash == record_hash(stream, seq, record.at, record.actor, record.kind, record.data,
                                          record.raw, prev)  # fmt: skip
        assert row == (stream, seq, format_at(record.at), record.actor, record.kind, canonical_json(record.data),
                       record.raw, prev, record.hash)  # fmt: skip
        assert stored_record(row) == record
        assert seal(stream, seq, replace(item, data=values), prev) == record
        prev = record.hash


def test_data_with_number_keys_is_hashed_as_stored_with_its_keys_as_text() -> None:
    # {10: .., 9: ..} is written "9" first; its stored copy, keys as text, "10" first: the hash is of the stored text
    record, row = seal_stored("table-1", 1, replace(new(0), data={"counts": {10: "a", 9: "b"}}), GENESIS_HASH)
    assert row[5] == '{"counts":{"10":"a","9":"b"}}'
    assert verify_stored_chain([row]).ok and verify_chain([record]).ok
