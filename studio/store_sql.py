"""The event store in a SQL database (SQLite file for one studio, PostgreSQL where it scales out), through sqlmodel.

Rules held here:

- One table, `event_log`, keyed by `(stream, seq)`: the database itself refuses a second record at the same place, so
  a racing or repeated write is an integrity error (reported as `ConcurrentAppend`) and never a fork of the log.
- Append only: this module has no update and no delete.
- An append is one transaction: it checks the stream's last seq against `expected_seq`, seals each record onto the
  hash chain (studio/chain.py) from the last stored hash, inserts, and commits before returning. All or nothing.
- The head a store committed last on a stream, (seq, hash), is kept, so a writer appending after its own append
  needs no query of the head: when `expected_seq` is that seq, the records are sealed from that hash and inserted,
  and if another writer (another process) has appended meanwhile, its record at `expected_seq + 1` makes the insert an
  integrity error, so `ConcurrentAppend` still. Sound because a stream's seqs run without gaps and a stored record
  never changes. Any other `expected_seq`, an empty append, a first append and every failure read the head.
- SQLite (studio/database.py): WAL with `synchronous=FULL`, so a returned append survives a power cut; writers take the
  write lock at BEGIN (`BEGIN IMMEDIATE`) so that two writers queue instead of one failing to upgrade a stale read
  lock; the second then sees the first's records and gets `ConcurrentAppend`. PostgreSQL needs none of that: two
  writers at the same seq collide on the primary key. Queries are plain portable SQL.
- The table is made and kept by the schema's migrations (studio/schema.py), like every table of the studio database.
- Every database failure reaches the caller as a `StoreError` with one line naming the store and the cause.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from datetime import datetime
from typing import Any, cast

from alembic.util.exc import CommandError
from sqlalchemy import Table, Text, func, insert, select
from sqlalchemy.engine import Connection, make_url
from sqlalchemy.exc import IntegrityError, SQLAlchemyError
from sqlmodel import Field, SQLModel

from studio.database import BIG_INTEGER, WRITE_OPTION, one_line, open_engine
from studio.domain.chain import canonical_json, check_expected_seq, check_stream, format_at, seal
from studio.domain.records import GENESIS_HASH, ConcurrentAppend, NewRecord, Record, StoreError
from studio.schema import migrate

MAX_SEQ = 2**63 - 1  # the largest seq a database column holds
READ_PAGE = 2_000
"""Records fetched per query when reading: bounds memory and never keeps a connection across the caller's loop."""


class EventRow(SQLModel, table=True):
    """One row of the log. `at` is the canonical ISO-8601 UTC text (exact to the microsecond in any database), `data`
    the canonical JSON text: both exactly what the chain hashed."""

    __tablename__ = "event_log"

    stream: str = Field(primary_key=True)
    seq: int = Field(primary_key=True, sa_type=BIG_INTEGER)
    at: str
    actor: str
    kind: str
    data: str = Field(sa_type=Text)
    raw: str | None = Field(default=None, sa_type=Text)
    prev_hash: str
    hash: str


_TABLE = cast(Table, EventRow.__table__)  # type: ignore[attr-defined]  # set by sqlmodel's metaclass
_C = _TABLE.c
_COLUMNS = (_C.stream, _C.seq, _C.at, _C.actor, _C.kind, _C.data, _C.raw, _C.prev_hash, _C.hash)
_INSERT = insert(_TABLE)


class SqlEventStore:
    """An `EventStore` on a SQLAlchemy URL: `sqlite:///path/to/events.db` or `postgresql+psycopg://...`."""

    def __init__(self, url: str) -> None:
        self._closed = False
        try:
            parsed = make_url(url)
        except SQLAlchemyError as error:  # ArgumentError: not a URL at all
            raise StoreError(f"event store URL {url!r} is invalid: {one_line(error)}") from None
        self._name = parsed.render_as_string(hide_password=True)
        try:
            self._engine = open_engine(parsed)
        except (SQLAlchemyError, OSError, ImportError) as error:  # unknown dialect, driver not installed, no folder
            raise self._failure(error) from None
        self._writer = self._engine.execution_options(**{WRITE_OPTION: True})
        self._heads: dict[str, tuple[int, str]] = {}  # stream -> (seq, hash) of the last record this store committed
        try:
            migrate(self._engine)  # the studio database's schema, at its newest revision
        except (SQLAlchemyError, CommandError, StoreError) as error:  # unreachable, not a database, corrupt, no WAL
            self.close()
            raise self._failure(error) from None

    def __repr__(self) -> str:
        return f"SqlEventStore({self._name!r})"

    def append(self, stream: str, records: Sequence[NewRecord], expected_seq: int) -> list[Record]:
        check_stream(stream)
        check_expected_seq(expected_seq)
        self._check_open()
        try:
            with self._writer.begin() as conn:
                known = self._heads.pop(stream, None)  # put back only once this append has committed
                if known is not None and known[0] == expected_seq and records:
                    prev_hash = known[1]  # no query: a record at expected_seq + 1 fails the insert (see above)
                else:
                    actual, prev_hash = _head(conn, stream)
                    if actual != expected_seq:
                        raise ConcurrentAppend(stream, expected_seq, actual)
                sealed: list[Record] = []
                for seq, new in enumerate(records, start=expected_seq + 1):
                    sealed.append(seal(stream, seq, new, prev_hash))
                    prev_hash = sealed[-1].hash
                if sealed:
                    conn.execute(_INSERT, [_row(record) for record in sealed])
            # Leaving the block committed; with synchronous=FULL the records are on disk now.
            self._heads[stream] = (expected_seq + len(sealed), prev_hash)
            return sealed
        except IntegrityError as error:
            # Another writer took one of our seqs between our check and our insert (PostgreSQL, READ COMMITTED): it
            # has committed by now, so the stream has moved. If it has not, some other constraint refused the batch.
            actual = self.last_seq(stream)
            if actual != expected_seq:
                raise ConcurrentAppend(stream, expected_seq, actual) from None
            raise self._failure(error) from None
        except SQLAlchemyError as error:
            raise self._failure(error) from None

    def read(self, stream: str, after: int = 0) -> Iterator[Record]:
        self._check_open()  # now, not at the first next()
        return self._pages(stream, after)

    def last_seq(self, stream: str) -> int:
        self._check_open()
        try:
            with self._engine.connect() as conn:
                return _head(conn, stream)[0]
        except SQLAlchemyError as error:
            raise self._failure(error) from None

    def streams(self) -> list[str]:
        self._check_open()
        try:
            with self._engine.connect() as conn:
                names = conn.execute(select(_C.stream).distinct()).scalars().all()
        except SQLAlchemyError as error:
            raise self._failure(error) from None
        return sorted(names)  # Python's order, not the database collation's

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._engine.dispose()

    def __enter__(self) -> SqlEventStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _pages(self, stream: str, after: int) -> Iterator[Record]:
        # Paging on the primary key by seq range (a stream's seqs run without gaps): each page is one short query
        # that reads exactly its rows whatever the planner believes of the table (a LIMIT query on PostgreSQL, with
        # statistics older than the last burst of appends, fetched and sorted every later row for each page).
        # Consistent because the log only grows.
        query = select(*_COLUMNS).where(_C.stream == stream).order_by(_C.seq)
        beyond = select(func.min(_C.seq)).where(_C.stream == stream)
        if after >= MAX_SEQ:
            return  # nothing is beyond the largest seq there can be
        while True:
            self._check_open()
            upper = min(after + READ_PAGE, MAX_SEQ)  # a seq is a 64-bit integer in every database
            try:
                with self._engine.connect() as conn:
                    rows = conn.execute(query.where(_C.seq > after, _C.seq <= upper)).all()
                    following = None
                    if len(rows) < READ_PAGE and upper < MAX_SEQ:  # the end of the stream, or rows missing?
                        following = conn.execute(beyond.where(_C.seq > upper)).scalar()
            except SQLAlchemyError as error:
                raise self._failure(error) from None
            for row in rows:
                try:
                    record = _record(row)
                except (ValueError, TypeError) as error:  # a row edited behind our back: data not JSON, at not a time
                    raise self._failure(f"seq {row[1]} of stream {stream!r} is unreadable: {error}") from None
                yield record
            if len(rows) == READ_PAGE and upper < MAX_SEQ:
                after = upper
            elif following is None:
                return
            else:  # a gap (someone deleted rows): read on; the hash chain check reports the gap
                after = int(following) - 1

    def _check_open(self) -> None:
        if self._closed:
            raise StoreError(f"event store {self._name} is closed")

    def _failure(self, error: BaseException | str) -> StoreError:
        return StoreError(f"event store {self._name}: {error if isinstance(error, str) else one_line(error)}")


def _head(conn: Connection, stream: str) -> tuple[int, str]:
    """The stream's last (seq, hash), or (0, GENESIS_HASH) if it is empty."""
    query = select(_C.seq, _C.hash).where(_C.stream == stream).order_by(_C.seq.desc()).limit(1)
    row = conn.execute(query).first()
    return (0, GENESIS_HASH) if row is None else (int(row[0]), str(row[1]))


def _row(record: Record) -> dict[str, Any]:
    return {
        "stream": record.stream,
        "seq": record.seq,
        "at": format_at(record.at),
        "actor": record.actor,
        "kind": record.kind,
        "data": canonical_json(record.data),
        "raw": record.raw,
        "prev_hash": record.prev_hash,
        "hash": record.hash,
    }


_decode = json.JSONDecoder().decode  # one decoder for every row, as chain.py does for encoding


def _record(row: Any) -> Record:
    stream, seq, at, actor, kind, data, raw, prev_hash, digest = row
    return Record(stream, seq, datetime.fromisoformat(at), actor, kind, _decode(data), raw, prev_hash, digest)
