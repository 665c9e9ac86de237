"""The in-memory twin of a card source: reports pushed by a test or a demo, and a disconnect on demand. Given an
`evidence_dir`, it stands for a camera too: the server serves the crops its reports name from that folder."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any

from studio.domain.errors import ConfigError
from studio.domain.reads import DeviceReport
from studio.sources import ManagedSource, SourceDisconnected, SourceHealth, SourceState, SourceUnavailable

_DISCONNECT = object()
_CLOSED = object()


class MemorySource(ManagedSource):
    def __init__(self, source_id: str, failing_opens: int = 0, evidence_dir: Path | None = None) -> None:
        self._id = source_id
        self.evidence_dir = evidence_dir  # where the crops named by pushed reports lie, as a camera's would
        self._queue: asyncio.Queue[object] = asyncio.Queue()
        self._open = False
        self.failing_opens = failing_opens  # how many of the next opens fail, as an unplugged device would
        self.opens = 0

    @classmethod
    def from_options(cls, source_id: str, options: Mapping[str, Any], clock: object) -> MemorySource:
        unknown = sorted(set(options) - {"failing_opens", "evidence_dir"})
        if unknown:
            raise ConfigError(f"source {source_id!r}: unknown setting {', '.join(unknown)}")
        failing_opens = options.get("failing_opens", 0)
        if isinstance(failing_opens, bool) or not isinstance(failing_opens, int) or failing_opens < 0:
            raise ConfigError(f"source {source_id!r}: failing_opens must be a whole number of at least 0")
        evidence_dir = options.get("evidence_dir")
        if evidence_dir is not None and (not isinstance(evidence_dir, str) or not evidence_dir.strip()):
            raise ConfigError(f"source {source_id!r}: evidence_dir must be a path")
        return cls(source_id, failing_opens, Path(evidence_dir) if evidence_dir is not None else None)

    @property
    def source_id(self) -> str:
        return self._id

    async def open(self) -> None:
        self.opens += 1
        if self.failing_opens > 0:
            self.failing_opens -= 1
            raise SourceUnavailable(f"{self._id}: device not present")
        self._open = True

    async def close(self) -> None:
        if self._open:
            self._open = False
            self._queue.put_nowait(_CLOSED)  # wakes a reader waiting for the next report

    def health(self) -> SourceHealth:
        return SourceHealth(SourceState.CONNECTED if self._open else SourceState.DISCONNECTED)

    def push(self, report: DeviceReport) -> None:
        self._queue.put_nowait(report)

    def disconnect(self) -> None:
        self._queue.put_nowait(_DISCONNECT)

    async def reports(self) -> AsyncIterator[DeviceReport]:
        while self._open:
            item = await self._queue.get()
            if item is _CLOSED:
                continue  # closed since (or a close from an earlier opening): the loop's test says which
            if item is _DISCONNECT:
                self._open = False
                raise SourceDisconnected(f"{self._id}: unplugged")
            assert isinstance(item, DeviceReport)
            yield item
        raise SourceDisconnected(f"{self._id}: closed")
