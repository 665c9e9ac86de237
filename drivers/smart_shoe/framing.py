"""Smart-shoe frames on the wire, and the sans-I/O decoder that finds them in a byte stream.

A frame is `STX  stuffed(LEN SEQ_hi SEQ_lo TYPE PAYLOAD CRC_hi CRC_lo)  ETX` (docs/protocols/smart-shoe.md).

Rules held here, and why:
- STX, ETX and DLE never appear inside a stuffed body: each is sent as DLE followed by the byte XOR 0x20. So every
  STX on the wire starts a frame and every ETX ends one; after any damage the decoder resynchronises at the next STX
  without having to guess.
- The CRC is CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF, no reflection, no final XOR; `binascii.crc_hqx`) over the
  unstuffed LEN..PAYLOAD; LEN must also match the body's length. Two independent checks.
- The decoder never raises on input and never holds more than `MAX_FRAME` bytes between calls. Every byte fed comes
  out in exactly one item (a frame or an error, each with its raw bytes) or stays pending: no raw read is lost.
- Output does not depend on how the stream is split: garbage and over-long runs are reported in chunks of exactly
  the bound, or when the next STX arrives, never at the end of a `feed` call.
"""

from __future__ import annotations

import binascii
import enum
import re
from dataclasses import dataclass

from drivers.smart_shoe.messages import Message, MessageType, PayloadError, decode_payload

STX = 0x02
ETX = 0x03
DLE = 0x10

HEADER_SIZE = 4  # LEN, SEQ (2), TYPE
CRC_SIZE = 2
MAX_PAYLOAD = 64
MAX_BODY = HEADER_SIZE + MAX_PAYLOAD + CRC_SIZE
MAX_FRAME = 2 + 2 * MAX_BODY  # on the wire, markers included, if every body byte had to be escaped
SEQ_MODULO = 1 << 16
CRC_INIT = 0xFFFF

_STX_BYTES = bytes((STX,))
_MARKER = re.compile(b"[\x02\x03]")
_BAD_ESCAPE = re.compile(b"\x10(?![\x22\x23\x30])", re.DOTALL)
_KNOWN_TYPES = frozenset(int(message_type) for message_type in MessageType)


def crc16(data: bytes) -> int:
    """CRC-16/CCITT-FALSE; the check value of b"123456789" is 0x29B1."""
    return binascii.crc_hqx(data, CRC_INIT)


def stuff(body: bytes) -> bytes:
    # DLE first, so the DLEs this inserts are not escaped again.
    return body.replace(b"\x10", b"\x10\x30").replace(b"\x02", b"\x10\x22").replace(b"\x03", b"\x10\x23")


def unstuff(stuffed: bytes) -> bytes | None:
    """The body, or None if an escape is invalid (a DLE not followed by 0x22, 0x23 or 0x30)."""
    if DLE not in stuffed:
        return stuffed
    if _BAD_ESCAPE.search(stuffed):
        return None
    # A DLE only ever introduces an escape (escaped bytes are 0x22/0x23/0x30), so these replacements only match
    # whole escape pairs; DLE-DLE goes last because its result is a DLE.
    return stuffed.replace(b"\x10\x22", b"\x02").replace(b"\x10\x23", b"\x03").replace(b"\x10\x30", b"\x10")


def encode_raw(seq: int, type_code: int, payload: bytes) -> bytes:
    """A frame of any type and payload, checked only for sizes: for `encode_frame` and for tests of bad frames."""
    if not 0 <= seq < SEQ_MODULO:
        raise ValueError(f"a sequence number is 0..65535, not {seq}")
    if not 0 <= type_code <= 0xFF or len(payload) > MAX_PAYLOAD:
        raise ValueError(f"type 0x{type_code:x} or payload length {len(payload)} out of range")
    body = bytes((len(payload), seq >> 8, seq & 0xFF, type_code)) + payload
    body += crc16(body).to_bytes(CRC_SIZE, "big")
    return bytes((STX,)) + stuff(body) + bytes((ETX,))


def encode_frame(seq: int, message: Message) -> bytes:
    return encode_raw(seq, message.TYPE, message.payload())


@dataclass(frozen=True, slots=True)
class DecodedFrame:
    """A frame that passed every check; `raw` is exactly what came over the wire, STX to ETX."""

    seq: int
    message: Message
    raw: bytes

    @property
    def raw_hex(self) -> str:
        return self.raw.hex()


class FrameErrorKind(enum.Enum):
    GARBAGE = "garbage"  # bytes outside any frame
    TRUNCATED = "truncated"  # a frame cut short by the next STX, or by the end of the stream
    TOO_LONG = "too_long"  # no ETX within MAX_FRAME bytes of an STX
    BAD_ESCAPE = "bad_escape"
    BAD_LENGTH = "bad_length"  # body too short, LEN too large, or LEN disagreeing with the body
    BAD_CHECKSUM = "bad_checksum"
    UNKNOWN_TYPE = "unknown_type"  # intact (the CRC holds) but not a type this protocol knows
    BAD_PAYLOAD = "bad_payload"  # intact, but the payload does not fit its type


_INTACT = frozenset({FrameErrorKind.UNKNOWN_TYPE, FrameErrorKind.BAD_PAYLOAD})


@dataclass(frozen=True, slots=True)
class FrameError:
    """Bytes that did not make a good frame. `seq` is set when the frame's structure held: certain if `intact`
    (only the meaning is wrong), a best guess after a bad checksum (good enough for a NAK, never for accepting)."""

    kind: FrameErrorKind
    reason: str
    raw: bytes
    seq: int | None = None

    @property
    def intact(self) -> bool:
        return self.kind in _INTACT

    @property
    def raw_hex(self) -> str:
        return self.raw.hex()


def decode_frame(raw: bytes) -> DecodedFrame | FrameError:
    """Check one delimited frame (`raw` runs from its STX to its ETX inclusive)."""
    body = unstuff(raw[1:-1])
    if body is None:
        return FrameError(FrameErrorKind.BAD_ESCAPE, "DLE not followed by an escaped marker", raw)
    if len(body) < HEADER_SIZE + CRC_SIZE:
        return FrameError(FrameErrorKind.BAD_LENGTH, f"body of {len(body)} bytes is shorter than a header", raw)
    length = body[0]
    if length > MAX_PAYLOAD or len(body) != HEADER_SIZE + length + CRC_SIZE:
        return FrameError(FrameErrorKind.BAD_LENGTH, f"LEN {length} does not fit a body of {len(body)} bytes", raw)
    seq = (body[1] << 8) | body[2]
    expected = int.from_bytes(body[-CRC_SIZE:], "big")
    actual = crc16(body[:-CRC_SIZE])
    if actual != expected:
        reason = f"CRC 0x{actual:04x} computed, 0x{expected:04x} received"
        return FrameError(FrameErrorKind.BAD_CHECKSUM, reason, raw, seq)
    try:
        message = decode_payload(body[3], body[HEADER_SIZE:-CRC_SIZE])
    except PayloadError as error:
        unknown = body[3] not in _KNOWN_TYPES
        kind = FrameErrorKind.UNKNOWN_TYPE if unknown else FrameErrorKind.BAD_PAYLOAD
        return FrameError(kind, str(error), raw, seq)
    return DecodedFrame(seq, message, raw)


class Decoder:
    """Turns a byte stream, split anywhere, into frames and errors. Use one per direction of one link."""

    def __init__(self, max_frame: int = MAX_FRAME) -> None:
        if max_frame < 2 + HEADER_SIZE + CRC_SIZE:
            raise ValueError(f"max_frame {max_frame} cannot hold the smallest frame")
        self._max = max_frame
        self._buf = bytearray()

    @property
    def pending(self) -> int:
        """Bytes held for the next call: a frame in progress or a run of garbage, never more than `max_frame`."""
        return len(self._buf)

    def feed(self, data: bytes) -> list[DecodedFrame | FrameError]:
        buf = self._buf
        buf += data
        out: list[DecodedFrame | FrameError] = []
        limit = self._max
        pos = 0
        end = len(buf)
        while pos < end:
            if buf[pos] != STX:
                # Hunting: everything before the next STX is garbage.
                start = buf.find(_STX_BYTES, pos)
                stop = end if start < 0 else start
                while stop - pos >= limit:
                    out.append(_garbage(buf[pos : pos + limit]))
                    pos += limit
                if start < 0:
                    break  # keep the short remainder: the rest of this run may still come
                if stop > pos:
                    out.append(_garbage(buf[pos:stop]))
                pos = stop
                continue
            # In a frame that starts at pos: look for the next marker within the bound.
            found = _MARKER.search(buf, pos + 1, min(end, pos + limit))
            if found is None:
                if end - pos < limit:
                    break  # wait for more
                reason = f"no end marker within {limit} bytes"
                out.append(FrameError(FrameErrorKind.TOO_LONG, reason, bytes(buf[pos : pos + limit])))
                pos += limit  # the rest of that run is garbage until the next STX
                continue
            at = found.start()
            if buf[at] == STX:
                reason = "start marker before the end marker"
                out.append(FrameError(FrameErrorKind.TRUNCATED, reason, bytes(buf[pos:at])))
                pos = at
            else:
                out.append(decode_frame(bytes(buf[pos : at + 1])))
                pos = at + 1
        del buf[:pos]
        return out

    def flush(self) -> list[FrameError]:
        """Report and drop what is pending, as when the link closes."""
        if not self._buf:
            return []
        raw = bytes(self._buf)
        self._buf.clear()
        if raw[0] == STX:
            return [FrameError(FrameErrorKind.TRUNCATED, "stream ended inside a frame", raw)]
        return [_garbage(raw)]


def _garbage(raw: bytes | bytearray) -> FrameError:
    return FrameError(FrameErrorKind.GARBAGE, "bytes outside a frame", bytes(raw))
