"""The messages of the smart-shoe protocol and their payloads (docs/protocols/smart-shoe.md).

Rules held here:
- A message type's high bit says its direction: below 0x80 the device speaks, from 0x80 the host answers.
- Every payload has one fixed length per type; a payload of the wrong length or with an out-of-range field is
  refused (`PayloadError`), never guessed at. A card is a rank number 1..13 (ace .. king, as `Rank.number`) and a
  suit letter in ASCII (`S H D C`), so a hex dump of the evidence log stays readable.
- Multi-byte integers are big-endian.
"""

from __future__ import annotations

import enum
import struct
from dataclasses import dataclass
from typing import ClassVar

from studio.domain.cards import ALL_CARDS, Card

PROTOCOL_VERSION = 1


class MessageType(enum.IntEnum):
    # device -> host
    HELLO = 0x01
    HEARTBEAT = 0x04
    CARD_DRAWN = 0x20
    CUT_CARD = 0x21
    SHOE_REMOVED = 0x30
    SHOE_INSERTED = 0x31
    FAULT = 0x40
    # host -> device
    ACK = 0x80
    NAK = 0x81

    @property
    def from_device(self) -> bool:
        return self < 0x80


class FaultKind(enum.IntEnum):
    OTHER = 0x00
    LID_OPEN = 0x01
    SENSOR = 0x02  # a card sensor failed its self-test or reads out of range
    CARD_JAM = 0x03


class PayloadError(ValueError):
    """A payload that does not match its message type: the frame arrived intact but cannot be understood."""


@dataclass(frozen=True, slots=True)
class Hello:
    """Sent first after every power-up or reset. A new `boot_id` tells the host the sequence numbers start over."""

    TYPE: ClassVar[MessageType] = MessageType.HELLO
    boot_id: int  # 32 bits, different at each boot (a counter or a random number)
    version: int = PROTOCOL_VERSION

    def __post_init__(self) -> None:
        _check_range("boot_id", self.boot_id, 0xFFFF_FFFF)
        _check_range("version", self.version, 0xFF)

    def payload(self) -> bytes:
        return struct.pack(">BI", self.version, self.boot_id)


@dataclass(frozen=True, slots=True)
class Heartbeat:
    TYPE: ClassVar[MessageType] = MessageType.HEARTBEAT

    def payload(self) -> bytes:
        return b""


@dataclass(frozen=True, slots=True)
class CardDrawn:
    TYPE: ClassVar[MessageType] = MessageType.CARD_DRAWN
    card: Card

    def payload(self) -> bytes:
        return bytes((self.card.rank.number, ord(self.card.suit.code)))


@dataclass(frozen=True, slots=True)
class CutCard:
    TYPE: ClassVar[MessageType] = MessageType.CUT_CARD

    def payload(self) -> bytes:
        return b""


@dataclass(frozen=True, slots=True)
class ShoeRemoved:
    TYPE: ClassVar[MessageType] = MessageType.SHOE_REMOVED

    def payload(self) -> bytes:
        return b""


@dataclass(frozen=True, slots=True)
class ShoeInserted:
    TYPE: ClassVar[MessageType] = MessageType.SHOE_INSERTED

    def payload(self) -> bytes:
        return b""


@dataclass(frozen=True, slots=True)
class Fault:
    """The device reports a fault of its own; `code` is the vendor's detail (0 when it has none)."""

    TYPE: ClassVar[MessageType] = MessageType.FAULT
    kind: FaultKind
    code: int = 0

    def __post_init__(self) -> None:
        _check_range("code", self.code, 0xFFFF)

    def payload(self) -> bytes:
        return struct.pack(">BH", self.kind, self.code)


@dataclass(frozen=True, slots=True)
class Ack:
    """The host accepted (or had already accepted) the device frame whose sequence number this frame carries."""

    TYPE: ClassVar[MessageType] = MessageType.ACK

    def payload(self) -> bytes:
        return b""


@dataclass(frozen=True, slots=True)
class Nak:
    """The host received a damaged frame that seemed to carry this sequence number: send it again."""

    TYPE: ClassVar[MessageType] = MessageType.NAK

    def payload(self) -> bytes:
        return b""


DeviceMessage = Hello | Heartbeat | CardDrawn | CutCard | ShoeRemoved | ShoeInserted | Fault
HostMessage = Ack | Nak
Message = DeviceMessage | HostMessage
DEVICE_MESSAGE_CLASSES: tuple[type[DeviceMessage], ...] = (
    Hello,
    Heartbeat,
    CardDrawn,
    CutCard,
    ShoeRemoved,
    ShoeInserted,
    Fault,
)

_EMPTY: dict[MessageType, Message] = {
    MessageType.HEARTBEAT: Heartbeat(),
    MessageType.CUT_CARD: CutCard(),
    MessageType.SHOE_REMOVED: ShoeRemoved(),
    MessageType.SHOE_INSERTED: ShoeInserted(),
    MessageType.ACK: Ack(),
    MessageType.NAK: Nak(),
}
_CARD_BY_WIRE = {(card.rank.number, ord(card.suit.code)): card for card in ALL_CARDS}
_FAULT_KINDS = {kind.value: kind for kind in FaultKind}


def decode_payload(type_code: int, payload: bytes) -> Message:
    """The message a frame of type `type_code` carries; `PayloadError` names what is wrong if it is not one."""
    try:
        message_type = MessageType(type_code)
    except ValueError:
        raise PayloadError(f"unknown message type 0x{type_code:02x}") from None
    empty = _EMPTY.get(message_type)
    if empty is not None:
        _expect_length(message_type, payload, 0)
        return empty
    if message_type is MessageType.CARD_DRAWN:
        _expect_length(message_type, payload, 2)
        card = _CARD_BY_WIRE.get((payload[0], payload[1]))
        if card is None:
            raise PayloadError(f"no card has rank {payload[0]} and suit byte 0x{payload[1]:02x}")
        return CardDrawn(card)
    if message_type is MessageType.FAULT:
        _expect_length(message_type, payload, 3)
        kind_value, code = struct.unpack(">BH", payload)
        kind = _FAULT_KINDS.get(kind_value)
        if kind is None:
            raise PayloadError(f"unknown fault kind 0x{kind_value:02x}")
        return Fault(kind, code)
    # Only HELLO is left.
    _expect_length(message_type, payload, 5)
    version, boot_id = struct.unpack(">BI", payload)
    return Hello(boot_id=boot_id, version=version)


def _expect_length(message_type: MessageType, payload: bytes, length: int) -> None:
    if len(payload) != length:
        raise PayloadError(f"{message_type.name} carries {length} payload bytes, not {len(payload)}")


def _check_range(name: str, value: int, maximum: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= maximum:
        raise ValueError(f"{name} must be an integer from 0 to {maximum}, not {value!r}")
