"""The smart shoe as a card source: the framed protocol of docs/protocols/smart-shoe.md over a serial link."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from drivers.serial_options import serial_options
from drivers.serial_source import LinkError, SerialSource
from drivers.smart_shoe.protocol import (
    CardDrawn,
    CutCard,
    DecodedFrame,
    Fault,
    HostSession,
    ShoeInserted,
    ShoeRemoved,
)
from studio.domain.reads import DeviceReport, ReportKind
from studio.ports import Clock

_SIMPLE = {CutCard: ReportKind.CUT_CARD, ShoeRemoved: ReportKind.SHOE_REMOVED, ShoeInserted: ReportKind.SHOE_INSERTED}


class SmartShoeSource(SerialSource):
    default_baud = 115200

    def __init__(self, source_id: str, url: str, baudrate: int | None = None, heartbeat_seconds: float = 1.0,
                 clock: Clock | None = None, **kwargs: Any) -> None:  # fmt: skip
        super().__init__(source_id, url, baudrate, clock, **kwargs)
        self.heartbeat_seconds = heartbeat_seconds
        self._session = HostSession(0.0, heartbeat_interval=heartbeat_seconds)

    @classmethod
    def from_options(cls, source_id: str, options: Mapping[str, Any], clock: Clock) -> SmartShoeSource:
        checked = serial_options(source_id, options, cls.default_baud)
        return cls(source_id, checked.url, checked.baudrate, checked.heartbeat_seconds, clock)

    def _started(self, now: float) -> None:
        self._session = HostSession(now, heartbeat_interval=self.heartbeat_seconds)

    def _device_session(self) -> str | None:
        """The shoe's boot, from its HELLO: its frame numbers start over at each (a new boot is no duplicate)."""
        boot = self._session.boot_id
        return None if boot is None else f"boot-{boot:08x}"

    def _problem(self, now: float) -> str:
        if self._session.heartbeat_overdue(now):
            return f"no frame from the shoe for {now - self._session.last_frame_at:.1f} s"
        return ""

    def _decode(self, data: bytes, now: float) -> tuple[list[DeviceReport], bytes]:
        result = self._session.feed(data, now)
        for error in result.errors:
            self.link_errors.append(LinkError(now, f"{error.kind.value}: {error.reason}", error.raw_hex))
        return [report for frame in result.messages if (report := self._report(frame)) is not None], result.reply

    def _report(self, frame: DecodedFrame) -> DeviceReport | None:
        message = frame.message
        at = self._clock.now()
        if isinstance(message, CardDrawn):
            return DeviceReport(self.source_id, ReportKind.CARD, at, message.card, frame.seq, 1.0, frame.raw_hex,
                                device_session=self._device_session())  # fmt: skip
        if isinstance(message, Fault):
            detail = f"{message.kind.name.lower()} (code {message.code})"
            return DeviceReport(self.source_id, ReportKind.FAULT, at, None, frame.seq, None, frame.raw_hex, detail)
        kind = _SIMPLE.get(type(message))
        if kind is None:
            return None  # HELLO and HEARTBEAT only prove the shoe alive
        return DeviceReport(self.source_id, kind, at, None, frame.seq, None, frame.raw_hex)
