"""Opening the studio database: one engine per URL, SQLite made durable and safe for several writers.

- SQLite: the folder is made; WAL with `synchronous=FULL` on every connection, so a committed transaction survives a
  power cut; writers take the write lock at BEGIN (`BEGIN IMMEDIATE`, asked for with the `WRITE_OPTION` execution
  option) so that two writers queue (busy timeout) instead of one failing to upgrade a stale read lock.
- PostgreSQL (`postgresql+psycopg://...`): connections are checked before use (`pool_pre_ping`), so a server that
  went away and came back costs one failed operation, not a broken pool; a new connection gives up after
  `CONNECT_TIMEOUT` seconds.
- A store never lets SQLAlchemy's errors out: a database that does not answer (or refuses) raises
  `DatabaseUnavailable`, a `StoreError`, naming the driver's own one-line reason (`database_errors`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from sqlalchemy import BigInteger, Engine, Integer, create_engine, event
from sqlalchemy.engine import URL, Connection
from sqlalchemy.exc import DBAPIError, SQLAlchemyError

from studio.domain.records import StoreError

BUSY_TIMEOUT_MS = 10_000
"""How long a SQLite writer waits for another to commit before giving up (they hold the lock for milliseconds)."""

WRITE_OPTION = "studio_write"  # execution option: this connection is about to write (SQLite: BEGIN IMMEDIATE)

CONNECT_TIMEOUT = 3  # seconds a new PostgreSQL connection may take

BIG_INTEGER = BigInteger().with_variant(Integer(), "sqlite")
"""The column type of every seq, id and amount: 64 bits everywhere (PostgreSQL's INTEGER has only 32: 21 million in
cents); on SQLite plain INTEGER, which is 64 bits already and keeps an id the table's auto-incrementing rowid."""


class DatabaseUnavailable(StoreError):
    """The studio database did not answer, or refused: nothing was changed; the caller may try again."""


def one_line(error: BaseException) -> str:
    """The driver's own message (e.g. 'database disk image is malformed'), without SQLAlchemy's SQL and links."""
    if isinstance(error, StoreError):
        return str(error)
    cause = error.orig if isinstance(error, DBAPIError) and error.orig is not None else error
    if isinstance(cause, StoreError):
        return str(cause)
    text = str(cause).strip().splitlines()
    return f"{type(cause).__name__}: {text[0]}" if text else type(cause).__name__


Store = TypeVar("Store", bound=type)


def database_errors(cls: Store) -> Store:
    """Class decorator for a store: every public method raises `DatabaseUnavailable` where SQLAlchemy raised. (A
    method that reads an integrity error as an answer, a duplicate say, catches it itself, before this does.)"""
    for name, method in list(vars(cls).items()):
        if not name.startswith("_") and callable(method):
            setattr(cls, name, _translated(method))
    return cls


def _translated(method: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(method)
    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            return method(*args, **kwargs)
        except SQLAlchemyError as error:
            raise DatabaseUnavailable(f"the studio database: {one_line(error)}") from error

    return call


def open_engine(url: URL) -> Engine:
    """An engine for `url`; for SQLite: the folder made, WAL, synchronous=FULL, a busy timeout and IMMEDIATE writes."""
    if url.get_backend_name() != "sqlite":
        # A server that does not answer fails a connection in seconds, not after the operating system's minutes.
        connect_args = {"connect_timeout": CONNECT_TIMEOUT} if url.get_backend_name() == "postgresql" else {}
        return create_engine(url, pool_pre_ping=True, connect_args=connect_args)
    database = url.database or ""
    if database and database != ":memory:" and not database.startswith("file:"):
        Path(database).expanduser().parent.mkdir(parents=True, exist_ok=True)
    engine = create_engine(url)
    event.listen(engine, "connect", _sqlite_connect)
    event.listen(engine, "begin", _sqlite_begin)
    return engine


def _sqlite_connect(dbapi_connection: Any, _record: Any) -> None:
    # Take BEGIN away from the sqlite3 module (its legacy mode begins lazily, at the first write) so that
    # _sqlite_begin decides how each transaction starts.
    dbapi_connection.isolation_level = None
    cursor = dbapi_connection.cursor()
    try:
        cursor.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        mode = cursor.execute("PRAGMA journal_mode = WAL").fetchone()[0]
        if str(mode).lower() not in {"wal", "memory"}:  # WAL is impossible on some file systems: say so
            raise StoreError(f"SQLite refused write-ahead logging (journal_mode is {mode})")
        cursor.execute("PRAGMA synchronous = FULL")  # fsync the WAL at every commit: a returned append is durable
    finally:
        cursor.close()


def _sqlite_begin(conn: Connection) -> None:
    # Writers take the write lock up front so that they queue; readers stay deferred and never block anyone in WAL.
    conn.exec_driver_sql("BEGIN IMMEDIATE" if conn.get_execution_options().get(WRITE_OPTION) else "BEGIN")
