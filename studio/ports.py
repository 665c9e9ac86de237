"""The ports the studio's services depend on. Each has an in-memory twin and a real implementation, and both pass one
contract test suite.

The event log is the source of truth: a record is appended durably before anything it describes is published, the
log is append-only (no update, no delete), `(stream, seq)` is unique, and each record carries the hash of its
predecessor so that any edit, deletion or reordering is detected.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

from studio.errors import StudioError

GENESIS_HASH = "0" * 64
"""The `prev_hash` of the first record of every stream."""


@dataclass(frozen=True, slots=True)
class NewRecord:
    """A fact about to be logged: when, who, what, and the raw device data behind it if any."""

    at: datetime  # timezone-aware UTC
    actor: str  # "dealer:alice", "pit_boss:bob", "device:shoe-1", "system"
    kind: str  # the event's type name, e.g. "CardDealt"
    data: Mapping[str, Any]  # the event's fields, JSON-compatible
    raw: str | None = None  # raw device data (hex bytes, or a reference to a camera crop)


@dataclass(frozen=True, slots=True)
class Record:
    """A logged fact: a `NewRecord` with its place in the stream and its link in the hash chain."""

    stream: str
    seq: int  # 1, 2, 3, ... within the stream
    at: datetime
    actor: str
    kind: str
    data: Mapping[str, Any] = field(hash=False)
    raw: str | None
    prev_hash: str
    hash: str


class StoreError(StudioError):
    """The event store could not do what was asked (unreachable, corrupt, ...)."""


class ConcurrentAppend(StoreError):
    """Another writer appended to the stream first: the caller's view of the stream is stale."""

    def __init__(self, stream: str, expected: int, actual: int) -> None:
        self.stream, self.expected, self.actual = stream, expected, actual
        super().__init__(f"stream {stream!r} is at seq {actual}, not {expected}: another writer appended first")


class EventStore(Protocol):
    def append(self, stream: str, records: Sequence[NewRecord], expected_seq: int) -> list[Record]:
        """Append `records` atomically after seq `expected_seq` (0 for a new stream) and return them as logged.

        Raises `ConcurrentAppend` (appending nothing) if the stream's last seq is not `expected_seq`. Returns only once
        the records are durable.
        """
        ...

    def read(self, stream: str, after: int = 0) -> Iterator[Record]:
        """The stream's records with seq > `after`, in order."""
        ...

    def last_seq(self, stream: str) -> int:
        """The seq of the stream's last record, 0 if the stream is empty."""
        ...

    def streams(self) -> list[str]:
        """Every stream that holds at least one record, sorted."""
        ...

    def close(self) -> None:
        """Release the store; safe to call twice."""
        ...


class Clock(Protocol):
    def now(self) -> datetime:
        """The current time, timezone-aware UTC."""
        ...


class Publisher(Protocol):
    def publish(self, records: Sequence[Record]) -> None:
        """Hand logged records to whoever listens (console, results feed). Called only after they are durable."""
        ...
