"""The line format of common baccarat card readers, sans I/O (docs/protocols/line-scanner.md).

One ASCII line per card: a suit letter (`A` spades, `H` hearts, `C` clubs, `D` diamonds) and a two-digit rank
`01`..`13` (01 ace, 11 jack, 12 queen, 13 king), ended by LF or CR LF. `D12` is the queen of diamonds.

Rules held here, and why:
- There is no checksum, so the decoder is strict: exactly three characters, upper case, nothing around them. Any
  other line is a `LineError` carrying its raw bytes, and the table suspends for the pit boss; a misread must never
  become a guessed card.
- LF ends a line; one CR just before it belongs to the terminator. A CR anywhere else is part of a malformed line.
- An empty line carries no card and no sign of a misread (readers send them as keep-alives or after power-up), so
  it is skipped, unless `report_empty_lines` is set. Everything else is reported.
- A line with no LF within `max_line` bytes is cut there and reported; the rest of it, up to its LF, is reported
  too, in chunks of at most `max_line` bytes, and is never read as a card. The buffer never holds more.
- Output does not depend on how the stream is split: lines are cut only at LF or at the bound.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from studio.domain.cards import ALL_CARDS, Card, Suit

MAX_LINE = 32  # bytes of one line, its terminator included; a card line has 4 or 5
SUIT_BY_LETTER: dict[str, Suit] = {"A": Suit.SPADES, "H": Suit.HEARTS, "C": Suit.CLUBS, "D": Suit.DIAMONDS}
LETTER_BY_SUIT: dict[Suit, str] = {suit: letter for letter, suit in SUIT_BY_LETTER.items()}

_CARD_BY_WIRE = {(card.suit, card.rank.number): card for card in ALL_CARDS}
_LF = b"\n"


@dataclass(frozen=True, slots=True)
class LineCard:
    """A card read from one well-formed line; `raw` is the line as received, terminator included."""

    card: Card
    raw: bytes

    @property
    def raw_hex(self) -> str:
        return self.raw.hex()


class LineErrorKind(enum.Enum):
    MALFORMED = "malformed"  # a complete line that is not a card
    EMPTY = "empty"  # only reported with report_empty_lines
    TOO_LONG = "too_long"  # no LF within the bound (the cut-off start, then the rest of that line)
    INCOMPLETE = "incomplete"  # the stream ended inside a line (from `flush`)


@dataclass(frozen=True, slots=True)
class LineError:
    kind: LineErrorKind
    reason: str
    raw: bytes

    @property
    def raw_hex(self) -> str:
        return self.raw.hex()


def encode_line(card: Card, newline: bytes = b"\r\n") -> bytes:
    """The line a reader sends for `card`, as the simulator writes it."""
    if newline not in (b"\n", b"\r\n"):
        raise ValueError(f"a line ends with LF or CR LF, not {newline!r}")
    return f"{LETTER_BY_SUIT[card.suit]}{card.rank.number:02d}".encode("ascii") + newline


def parse_line(raw: bytes) -> LineCard | LineError:
    """Read one line (`raw` with or without its LF / CR LF)."""
    text = raw.removesuffix(b"\n").removesuffix(b"\r") if raw.endswith(b"\n") else raw
    if not text:
        return LineError(LineErrorKind.EMPTY, "empty line", raw)
    reason = _malformation(text)
    if reason is not None:
        return LineError(LineErrorKind.MALFORMED, reason, raw)
    card = _CARD_BY_WIRE[(SUIT_BY_LETTER[chr(text[0])], int(text[1:]))]
    return LineCard(card, raw)


def _malformation(text: bytes) -> str | None:
    """Why `text` (a line without its terminator) is not a card, or None if it is one."""
    for byte in text:
        if byte > 0x7F:
            return f"non-ASCII byte 0x{byte:02x}"
    if b"\r" in text:
        return "carriage return inside the line"
    if len(text) != 3:
        return f"expected a suit letter and two digits, got {len(text)} characters"
    letter = chr(text[0])
    if letter not in SUIT_BY_LETTER:
        return f"unknown suit letter {letter!r} (expected A, H, C or D)"
    digits = text[1:]
    if not digits.isdigit():
        return f"rank {digits.decode('ascii')!r} is not two digits"
    if not 1 <= int(digits) <= 13:
        return f"rank {digits.decode('ascii')} out of range 01-13"
    return None


class LineDecoder:
    """Turns a byte stream, split anywhere, into cards and errors."""

    def __init__(self, *, max_line: int = MAX_LINE, report_empty_lines: bool = False) -> None:
        if max_line < 5:
            raise ValueError(f"max_line {max_line} cannot hold a card line with CR LF")
        self._max = max_line
        self._report_empty = report_empty_lines
        self._buf = bytearray()
        self._discarding = False  # inside the rest of an over-long line, until its LF

    @property
    def pending(self) -> int:
        """Bytes held for the next call; always below `max_line`."""
        return len(self._buf)

    def feed(self, data: bytes) -> list[LineCard | LineError]:
        buf = self._buf
        buf += data
        out: list[LineCard | LineError] = []
        limit = self._max
        pos = 0
        end = len(buf)
        while pos < end:
            newline = buf.find(_LF, pos, min(end, pos + limit))
            if newline < 0:
                if end - pos < limit:
                    break  # wait for the rest of the line
                reason = "rest of an over-long line" if self._discarding else f"no line end within {limit} bytes"
                out.append(LineError(LineErrorKind.TOO_LONG, reason, bytes(buf[pos : pos + limit])))
                self._discarding = True
                pos += limit
                continue
            raw = bytes(buf[pos : newline + 1])
            pos = newline + 1
            if self._discarding:
                self._discarding = False
                out.append(LineError(LineErrorKind.TOO_LONG, "rest of an over-long line", raw))
                continue
            item = parse_line(raw)
            if isinstance(item, LineError) and item.kind is LineErrorKind.EMPTY and not self._report_empty:
                continue
            out.append(item)
        del buf[:pos]
        return out

    def flush(self) -> list[LineError]:
        """Report and drop a line left unfinished, as when the link closes."""
        raw = bytes(self._buf)
        self._buf.clear()
        discarding, self._discarding = self._discarding, False
        if not raw:
            return []
        if discarding:
            return [LineError(LineErrorKind.TOO_LONG, "rest of an over-long line", raw)]
        return [LineError(LineErrorKind.INCOMPLETE, "stream ended inside a line", raw)]
