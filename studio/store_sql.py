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
- On SQLite, appends and reads go through the DB-API connection itself (from SQLAlchemy's pool, set up by
  studio/database.py), with the same statements: a card's append is BEGIN IMMEDIATE, one insert, COMMIT, without
  SQLAlchemy's per-statement work, which was a third of the time a card took besides the disk (issue 17). Appends
  keep one such connection (one append at a time on it), dropped after a failure other than a refused record.
- A record is sealed with its stored texts (chain.seal_stored): its data encoded once for the hash and the row.
- Rows can be read as stored (`stored_rows`, `stored_events`): the texts the chain hashed, for checking a long log's
  chain on the text itself (chain.verify_stored_chain) and replaying it (`studio log verify`, studio/log_audit.py).
- The table is made and kept by the schema's migrations (studio/schema.py), like every table of the studio database.
- Every database failure reaches the caller as a `StoreError` with one line naming the store and the cause.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import suppress
from typing import Any, cast

from alembic.util.exc import CommandError
from sqlalchemy import Column, Table, Text, func, insert, select
from sqlalchemy.engine import Connection, make_url
from sqlalchemy.exc import IntegrityError, SQLAlchemyError
from sqlalchemy.pool import PoolProxiedConnection
from sqlmodel import Field, SQLModel

from studio.database import BIG_INTEGER, WRITE_OPTION, one_line, open_engine
from studio.domain.chain import InvalidRecord, check_expected_seq, check_stream, seal_stored, stored_record
from studio.domain.records import GENESIS_HASH, ConcurrentAppend, NewRecord, Record, StoredEvent, StoredRow, StoreError
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
# The same statements in SQLite's own SQL, for the DB-API connection (see `_append_sqlite`).
_NAMES = tuple(column.name for column in _COLUMNS)
_SQLITE_INSERT = f"INSERT INTO {_TABLE.name} ({', '.join(_NAMES)}) VALUES ({', '.join('?' for _ in _COLUMNS)})"
_SQLITE_HEAD = f"SELECT seq, hash FROM {_TABLE.name} WHERE stream = ? ORDER BY seq DESC LIMIT 1"
_EVENT_COLUMNS = (_C.seq, _C.kind, _C.data, _C.raw)  # what a replay reads (records.StoredEvent)
_PAGE_WHERE = "WHERE stream = ? AND seq > ? AND seq <= ? ORDER BY seq"
_SQLITE_PAGE = f"SELECT {', '.join(_NAMES)} FROM {_TABLE.name} {_PAGE_WHERE}"
_SQLITE_EVENT_PAGE = f"SELECT {', '.join(column.name for column in _EVENT_COLUMNS)} FROM {_TABLE.name} {_PAGE_WHERE}"
_SQLITE_BEYOND = f"SELECT min(seq) FROM {_TABLE.name} WHERE stream = ? AND seq > ? AND seq <= ?"


class SqlEventStore:
    """An `EventStore` on a SQLAlchemy URL: `sqlite:///path/to/events.db` or `postgresql+psycopg://...`."""

    def __init__(self, url: str) -> None:
        self._closed = False
        try:
            parsed = make_url(url)
        except SQLAlchemyError as error:  # ArgumentError: not a URL at all
            raise StoreError(f"event store URL {url!r} is invalid: {one_line(error)}") from None
        self._name = parsed.render_as_string(hide_password=True)
        self._url = url
        try:
            self._engine = open_engine(parsed)
        except (SQLAlchemyError, OSError, ImportError) as error:  # unknown dialect, driver not installed, no folder
            raise self._failure(error) from None
        self._writer = self._engine.execution_options(**{WRITE_OPTION: True})
        self._sqlite = parsed.get_backend_name() == "sqlite"  # appends and reads on the DB-API connection
        self._heads: dict[str, tuple[int, str]] = {}  # stream -> (seq, hash) of the last record this store committed
        self._append_lock = threading.Lock()
        self._append_connection: PoolProxiedConnection | None = None  # SQLite: taken at the first append
        try:
            migrate(self._engine)  # the studio database's schema, at its newest revision
        except (SQLAlchemyError, CommandError, StoreError) as error:  # unreachable, not a database, corrupt, no WAL
            self.close()
            raise self._failure(error) from None

    @property
    def url(self) -> str:
        """The URL this store was opened on (with its password, if it has one): for another process to open it."""
        return self._url

    def __repr__(self) -> str:
        return f"SqlEventStore({self._name!r})"

    def append(self, stream: str, records: Sequence[NewRecord], expected_seq: int) -> list[Record]:
        check_stream(stream)
        check_expected_seq(expected_seq)
        self._check_open()
        known = self._heads.pop(stream, None)  # put back only once this append has committed
        try:
            if self._sqlite:
                sealed, head_hash = self._append_sqlite(stream, records, expected_seq, known)
            else:
                with self._writer.begin() as conn:
                    prev_hash = self._prev_hash(stream, records, expected_seq, known, lambda: _head(conn, stream))
                    sealed, rows, head_hash = _sealed(stream, records, expected_seq, prev_hash)
                    if rows:
                        conn.execute(_INSERT, [dict(zip(_NAMES, row, strict=True)) for row in rows])
                # Leaving the block committed.
        except (IntegrityError, sqlite3.IntegrityError) as error:
            # Another writer took one of our seqs between our check and our insert (PostgreSQL, READ COMMITTED): it
            # has committed by now, so the stream has moved. If it has not, some other constraint refused the batch.
            actual = self.last_seq(stream)
            if actual != expected_seq:
                raise ConcurrentAppend(stream, expected_seq, actual) from None
            raise self._failure(error) from None
        except (SQLAlchemyError, sqlite3.Error) as error:
            raise self._failure(error) from None
        self._heads[stream] = (expected_seq + len(sealed), head_hash)
        return sealed

    def _append_sqlite(
        self, stream: str, records: Sequence[NewRecord], expected_seq: int, known: tuple[int, str] | None
    ) -> tuple[list[Record], str]:
        # One DB-API connection kept for appends (database.py's pragmas; taken from the pool once): one BEGIN
        # IMMEDIATE, one executemany, one COMMIT, none of SQLAlchemy's per-statement or per-checkout work on the path
        # of every card (issue 17). The lock keeps one append at a time on it; other writers queue on the database.
        with self._append_lock:
            if self._append_connection is None:
                self._append_connection = self._engine.raw_connection()
            connection = self._append_connection
            cursor = connection.cursor()
            try:
                cursor.execute("BEGIN IMMEDIATE")  # the write lock up front, as database.py's writers take it
                head = lambda: _sqlite_head(cursor, stream)  # noqa: E731
                prev_hash = self._prev_hash(stream, records, expected_seq, known, head)
                sealed, rows, head_hash = _sealed(stream, records, expected_seq, prev_hash)
                if rows:
                    cursor.executemany(_SQLITE_INSERT, rows)
                cursor.execute("COMMIT")  # with synchronous=FULL the records are on disk when this returns
            except BaseException as error:
                with suppress(sqlite3.Error):  # the error that brought us here is the one to report
                    if connection.driver_connection is not None and connection.driver_connection.in_transaction:
                        cursor.execute("ROLLBACK")
                if not isinstance(error, ConcurrentAppend | InvalidRecord | sqlite3.IntegrityError):
                    self._drop_append_connection()  # a disk or lock failure: the next append starts on a fresh one
                raise
            finally:
                cursor.close()
        return sealed, head_hash

    def _drop_append_connection(self) -> None:
        connection, self._append_connection = self._append_connection, None
        if connection is not None:
            with suppress(sqlite3.Error, SQLAlchemyError):
                connection.close()  # back to the pool, which rolls back anything left open

    @staticmethod
    def _prev_hash(
        stream: str,
        records: Sequence[NewRecord],
        expected_seq: int,
        known: tuple[int, str] | None,
        read_head: Callable[[], tuple[int, str]],
    ) -> str:
        """The hash to seal from: the head this store committed last when the caller is at it (no query: a record
        at expected_seq + 1 fails the insert, see above), else the stored head, checked against `expected_seq`."""
        if known is not None and known[0] == expected_seq and records:
            return known[1]
        actual, prev_hash = read_head()
        if actual != expected_seq:
            raise ConcurrentAppend(stream, expected_seq, actual)
        return prev_hash

    def read(self, stream: str, after: int = 0) -> Iterator[Record]:
        self._check_open()  # now, not at the first next()
        return self._records(stream, after)

    def stored_rows(self, stream: str, after: int = 0, until: int = MAX_SEQ) -> Iterator[StoredRow]:
        """The stream's records after seq `after`, up to seq `until`, as stored: every field the text the chain
        hashed (records.StoredRow). For checking the chain on the stored text (chain.stored_chain_fault); a row that
        another hand made unreadable comes out as it is."""
        self._check_open()
        return self._pages(stream, after, min(until, MAX_SEQ), _COLUMNS)

    def stored_events(self, stream: str, after: int = 0, until: int = MAX_SEQ) -> Iterator[StoredEvent]:
        """`stored_rows`, only what a replay needs of each: (seq, kind, data, raw), `data` the stored JSON text."""
        self._check_open()
        return self._pages(stream, after, min(until, MAX_SEQ), _EVENT_COLUMNS)

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
            with self._append_lock:
                self._drop_append_connection()
            self._engine.dispose()

    def __enter__(self) -> SqlEventStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _records(self, stream: str, after: int) -> Iterator[Record]:
        for row in self._pages(stream, after, MAX_SEQ, _COLUMNS):
            try:
                record = stored_record(row)
            except (ValueError, TypeError) as error:  # a row edited behind our back: data not JSON, at not a time
                raise self._failure(f"seq {row[1]} of stream {stream!r} is unreadable: {error}") from None
            yield record

    def _pages(self, stream: str, after: int, until: int, columns: tuple[Column[Any], ...]) -> Iterator[Any]:
        # Paging on the primary key by seq range (a stream's seqs run without gaps): each page is one short query
        # that reads exactly its rows whatever the planner believes of the table (a LIMIT query on PostgreSQL, with
        # statistics older than the last burst of appends, fetched and sorted every later row for each page).
        # Consistent because the log only grows.
        fetch = self._sqlite_page if self._sqlite else self._page
        while after < until:  # nothing is beyond the largest seq there can be
            self._check_open()
            upper = min(after + READ_PAGE, until)  # a seq is a 64-bit integer in every database
            try:
                rows, following = fetch(stream, after, upper, until, columns)
            except (SQLAlchemyError, sqlite3.Error) as error:
                raise self._failure(error) from None
            yield from rows
            if len(rows) == upper - after and upper < until:
                after = upper
            elif following is None:
                return
            else:  # a gap (someone deleted rows): read on; the hash chain check reports the gap
                after = int(following) - 1

    def _page(
        self, stream: str, after: int, upper: int, until: int, columns: tuple[Column[Any], ...]
    ) -> tuple[list[Any], int | None]:
        """The rows after `after` up to `upper`; and when they are fewer than that, the next seq up to `until`."""
        with self._engine.connect() as conn:
            page = select(*columns).where(_C.stream == stream, _C.seq > after, _C.seq <= upper).order_by(_C.seq)
            rows = [tuple(row) for row in conn.execute(page)]
            following = None
            if len(rows) < upper - after and upper < until:  # the end of the stream, or rows missing?
                beyond = select(func.min(_C.seq)).where(_C.stream == stream, _C.seq > upper, _C.seq <= until)
                following = conn.execute(beyond).scalar()
        return rows, following

    def _sqlite_page(
        self, stream: str, after: int, upper: int, until: int, columns: tuple[Column[Any], ...]
    ) -> tuple[list[Any], int | None]:
        # The same queries on the DB-API connection: SQLite's rows are plain tuples already (issue 17, the audit).
        connection = self._engine.raw_connection()
        try:
            cursor = connection.cursor()
            try:
                query = _SQLITE_PAGE if columns is _COLUMNS else _SQLITE_EVENT_PAGE
                rows = cursor.execute(query, (stream, after, upper)).fetchall()
                following = None
                if len(rows) < upper - after and upper < until:
                    following = cursor.execute(_SQLITE_BEYOND, (stream, upper, until)).fetchone()[0]
            finally:
                cursor.close()
        finally:
            connection.close()
        return rows, following

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


def _sqlite_head(cursor: Any, stream: str) -> tuple[int, str]:
    row = cursor.execute(_SQLITE_HEAD, (stream,)).fetchone()
    return (0, GENESIS_HASH) if row is None else (int(row[0]), str(row[1]))


def _sealed(
    stream: str, records: Sequence[NewRecord], expected_seq: int, prev_hash: str
) -> tuple[list[Record], list[StoredRow], str]:
    """`records` sealed onto the chain after the record whose hash is `prev_hash`, the rows to insert (in `_COLUMNS`
    order), and the hash of the last one."""
    sealed: list[Record] = []
    rows: list[StoredRow] = []
    for seq, new in enumerate(records, start=expected_seq + 1):
        record, row = seal_stored(stream, seq, new, prev_hash)
        sealed.append(record)
        rows.append(row)
        prev_hash = record.hash
    return sealed, rows, prev_hash
