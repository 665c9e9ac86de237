"""The ports the studio's services depend on. Each has an in-memory twin and a real implementation, and both pass one
contract test suite.

The event log is the source of truth: a record is appended durably before anything it describes is published, the
log is append-only (no update, no delete), `(stream, seq)` is unique, and each record carries the hash of its
predecessor so that any edit, deletion or reordering is detected.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import datetime
from typing import Protocol

from studio.domain.records import NewRecord, Record


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
