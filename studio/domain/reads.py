"""What a device saw: a card read (or not), the cut card, a fault, with the raw evidence behind it."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from datetime import datetime

from studio.domain.cards import Card
from studio.domain.commands import CardRead


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
    device_session: str | None = None  # the device's numbering starts over in each: its boot, an opening

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
            self.device_session,
        )
