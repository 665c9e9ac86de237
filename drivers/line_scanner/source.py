"""The line card scanner as a card source: one ASCII line per card (docs/protocols/line-scanner.md), 9600 8N1.

A malformed line is a misread: the table suspends for the pit boss with the raw bytes. The scanner has no sequence
numbers and grades no reads (confidence 1.0); the cut card is reported by the dealer.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from drivers.line_scanner.protocol import LineCard, LineDecoder
from drivers.serial_options import serial_options
from drivers.serial_source import SerialSource
from studio.domain.reads import DeviceReport, ReportKind
from studio.ports import Clock


class LineScannerSource(SerialSource):
    default_baud = 9600

    def __init__(self, source_id: str, url: str, baudrate: int | None = None, clock: Clock | None = None,
                 **kwargs: Any) -> None:  # fmt: skip
        super().__init__(source_id, url, baudrate, clock, **kwargs)
        self._decoder = LineDecoder()

    @classmethod
    def from_options(cls, source_id: str, options: Mapping[str, Any], clock: Clock) -> LineScannerSource:
        checked = serial_options(source_id, options, cls.default_baud)
        return cls(source_id, checked.url, checked.baudrate, clock)

    def _started(self, now: float) -> None:
        self._decoder = LineDecoder()

    def _decode(self, data: bytes, now: float) -> tuple[list[DeviceReport], bytes]:
        at = self._clock.now()
        reports = []
        for item in self._decoder.feed(data):
            if isinstance(item, LineCard):
                reports.append(DeviceReport(self.source_id, ReportKind.CARD, at, item.card, None, 1.0, item.raw_hex))
            else:
                reports.append(DeviceReport(self.source_id, ReportKind.MISREAD, at, None, None, None, item.raw_hex,
                                            f"{item.kind.value}: {item.reason}"))  # fmt: skip
        return reports, b""
