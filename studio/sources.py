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

from studio.domain.errors import StudioError
from studio.domain.reads import DeviceReport


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
