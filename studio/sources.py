"""The card-source port: what every device driver (smart shoe, line scanner, camera, simulator) gives the studio.

A source is opened, yields `DeviceReport`s as an async iterator, reports its health, and is closed. Lifecycles are
explicit and idempotent: `close` is safe twice, and before `open`; `async with source:` opens and closes it; reading a
closed source raises `SourceDisconnected`, and its health then reads disconnected. Reconnecting is not the driver's
job: the supervisor (`studio.supervisor`) does it once for every source, with capped exponential backoff. A driver
whose device goes away raises `SourceDisconnected` from its iterator; it never yields stale values. Every driver
passes one contract suite (`tests/test_source_contract.py`).
"""

from __future__ import annotations

import enum
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import datetime
from types import TracebackType
from typing import Protocol, Self

from studio.cards import Card
from studio.commands import CardRead
from studio.errors import StudioError


class ReportKind(enum.Enum):
    CARD = "card"  # a card was drawn and read
    MISREAD = "misread"  # a card was drawn but could not be read (malformed line, unreadable image, ...)
    CUT_CARD = "cut_card"  # the cut card came out
    SHOE_REMOVED = "shoe_removed"
    SHOE_INSERTED = "shoe_inserted"
    FAULT = "fault"  # the device reports a fault of its own (lid open, sensor fault, ...)


@dataclass(frozen=True, slots=True)
class DeviceReport:
    """One thing a device saw, with the evidence: the raw bytes (hex) or a reference to the camera's crop."""

    source: str
    kind: ReportKind
    at: datetime  # UTC, when the host received it
    card: Card | None = None
    device_seq: int | None = None
    confidence: float | None = None  # 1.0 for devices that do not grade their reads
    raw: str | None = None
    detail: str = ""
    evidence_sha256: str | None = None  # the camera's crop (`raw` is its path): hex SHA-256 of the file
    evidence_boxes_sha256: str | None = None  # and of the JSON beside it (frame size and boxes)

    def as_read(self) -> CardRead:
        """The read this report gives the table: its card only if it is a card report (a misread has none)."""
        card = self.card if self.kind is ReportKind.CARD else None
        return CardRead(
            card,
            self.source,
            self.device_seq,
            self.confidence,
            self.raw,
            self.evidence_sha256,
            self.evidence_boxes_sha256,
        )


class SourceState(enum.Enum):
    CONNECTED = "connected"
    DEGRADED = "degraded"  # connected but not healthy: heartbeats missing, error rate high, ...
    DISCONNECTED = "disconnected"


@dataclass(frozen=True, slots=True)
class SourceHealth:
    state: SourceState
    detail: str = ""
    last_seen: datetime | None = None  # when the device last said anything


class SourceError(StudioError):
    """A card source could not do what was asked."""


class SourceUnavailable(SourceError):
    """The source cannot be opened: missing device, missing dependency, bad configuration."""


class SourceDisconnected(SourceError):
    """The device went away while open."""


class CardSource(Protocol):
    @property
    def source_id(self) -> str: ...

    async def open(self) -> None:
        """Connect to the device; raise `SourceUnavailable` with a clear reason if it cannot."""
        ...

    async def close(self) -> None:
        """Disconnect; safe to call twice, and on a source that never opened."""
        ...

    def health(self) -> SourceHealth: ...

    def reports(self) -> AsyncIterator[DeviceReport]:
        """What the device sees, as it sees it; raises `SourceDisconnected` if the device goes away."""
        ...

    async def __aenter__(self) -> Self: ...

    async def __aexit__(self, kind: type[BaseException] | None, error: BaseException | None,
                        traceback: TracebackType | None) -> None: ...  # fmt: skip


class ManagedSource(ABC):
    """The lifecycle every driver shares: `async with source:` opens it, and closes it whatever happens inside."""

    @abstractmethod
    async def open(self) -> None: ...

    @abstractmethod
    async def close(self) -> None: ...

    async def __aenter__(self) -> Self:
        await self.open()
        return self

    async def __aexit__(self, kind: type[BaseException] | None, error: BaseException | None,
                        traceback: TracebackType | None) -> None:  # fmt: skip
        await self.close()
