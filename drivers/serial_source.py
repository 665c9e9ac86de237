"""What the two serial card sources share: the link, the read loop, health and the record of link errors.

A subclass turns bytes into device reports (and bytes to answer with) through its sans-I/O protocol.
"""

from __future__ import annotations

import time
from abc import abstractmethod
from collections import deque
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass

from drivers.serial_link import SerialLink
from studio.clock import SystemClock
from studio.domain.reads import DeviceReport
from studio.ports import Clock
from studio.sources import ManagedSource, SourceDisconnected, SourceHealth, SourceState

LINK_ERRORS_KEPT = 100


@dataclass(frozen=True, slots=True)
class LinkError:
    """Bytes the protocol could not use (damaged frame, garbage), kept with their reason for surveillance."""

    at: float
    reason: str
    raw_hex: str


class SerialSource(ManagedSource):
    default_baud = 9600

    def __init__(
        self,
        source_id: str,
        url: str,
        baudrate: int | None = None,
        clock: Clock | None = None,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._id = source_id
        self._link = SerialLink(url, baudrate or self.default_baud)
        self._clock = clock or SystemClock()
        self._monotonic = monotonic
        self.link_errors: deque[LinkError] = deque(maxlen=LINK_ERRORS_KEPT)

    @property
    def source_id(self) -> str:
        return self._id

    async def open(self) -> None:
        await self._link.open()
        self._started(self._monotonic())

    async def close(self) -> None:
        await self._link.close()

    def health(self) -> SourceHealth:
        if not self._link.is_open:
            return SourceHealth(SourceState.DISCONNECTED, "closed")
        problem = self._problem(self._monotonic())
        return SourceHealth(SourceState.DEGRADED if problem else SourceState.CONNECTED, problem)

    async def reports(self) -> AsyncIterator[DeviceReport]:
        while self._link.is_open:
            data = await self._link.read()
            if not data:
                continue
            now = self._monotonic()
            reports, reply = self._decode(data, now)
            for report in reports:
                yield report
            # Acknowledge only once the reports have been taken (the supervisor logs each card durably before it
            # asks for the next): a host that dies in between leaves the device retransmitting, not a card lost.
            await self._link.write(reply)
        raise SourceDisconnected(f"{self._id}: closed")

    # What a protocol provides.

    @abstractmethod
    def _started(self, now: float) -> None:
        """A fresh connection: reset the protocol's state."""

    @abstractmethod
    def _decode(self, data: bytes, now: float) -> tuple[list[DeviceReport], bytes]:
        """Reports for the bytes just read, and the bytes to answer the device with."""

    def _problem(self, now: float) -> str:
        """Why the source is degraded, or "" if it is healthy."""
        return ""
