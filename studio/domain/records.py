"""The log's records: a fact about to be logged, a logged fact with its place in the stream and its link in the hash
chain, and the errors a store raises about them. Values only; the stores are in `studio.store_sql` and
`studio.store_memory`, behind the `studio.ports.EventStore` port.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from studio.domain.errors import StudioError

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


StoredRow = tuple[str, int, str, str, str, str, str | None, str, str]
"""A record as the SQL store keeps it: (stream, seq, at, actor, kind, data, raw, prev_hash, hash), with `at` and
`data` the very texts the chain hashed (ISO-8601 UTC, canonical JSON): the chain can be checked on them as they are."""


StoredEvent = tuple[int, str, str, str | None]
"""What a replay reads of a stored record: (seq, kind, data, raw), `data` the stored canonical JSON text."""


class StoreError(StudioError):
    """The event store could not do what was asked (unreachable, corrupt, ...)."""


class ConcurrentAppend(StoreError):
    """Another writer appended to the stream first: the caller's view of the stream is stale."""

    def __init__(self, stream: str, expected: int, actual: int) -> None:
        self.stream, self.expected, self.actual = stream, expected, actual
        super().__init__(f"stream {stream!r} is at seq {actual}, not {expected}: another writer appended first")
