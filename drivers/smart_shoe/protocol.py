"""The smart-shoe protocol, sans I/O: the one module drivers and the simulator import (docs/protocols/smart-shoe.md).

It gathers the messages (`messages`), the framing and the stream decoder (`framing`) and the two session ends
(`sessions`), and adds one `encode_*` helper per message type. Nothing here reads a port, a socket or a clock:
bytes and times go in, values and bytes come out (DESIGN.md §4, habit 1).
"""

from __future__ import annotations

from drivers.smart_shoe.framing import (
    CRC_INIT,
    DLE,
    ETX,
    MAX_FRAME,
    MAX_PAYLOAD,
    SEQ_MODULO,
    STX,
    DecodedFrame,
    Decoder,
    FrameError,
    FrameErrorKind,
    crc16,
    decode_frame,
    encode_frame,
    encode_raw,
)
from drivers.smart_shoe.messages import (
    DEVICE_MESSAGE_CLASSES,
    PROTOCOL_VERSION,
    Ack,
    CardDrawn,
    CutCard,
    DeviceMessage,
    Fault,
    FaultKind,
    Heartbeat,
    Hello,
    HostMessage,
    Message,
    MessageType,
    Nak,
    PayloadError,
    ShoeInserted,
    ShoeRemoved,
    decode_payload,
)
from drivers.smart_shoe.sessions import DeviceSession, HostResult, HostSession, Notice, NoticeKind, Undelivered
from studio.domain.cards import Card

__all__ = [
    "CRC_INIT",
    "DEVICE_MESSAGE_CLASSES",
    "DLE",
    "ETX",
    "MAX_FRAME",
    "MAX_PAYLOAD",
    "PROTOCOL_VERSION",
    "SEQ_MODULO",
    "STX",
    "Ack",
    "CardDrawn",
    "CutCard",
    "DecodedFrame",
    "Decoder",
    "DeviceMessage",
    "DeviceSession",
    "Fault",
    "FaultKind",
    "FrameError",
    "FrameErrorKind",
    "Heartbeat",
    "Hello",
    "HostMessage",
    "HostResult",
    "HostSession",
    "Message",
    "MessageType",
    "Nak",
    "Notice",
    "NoticeKind",
    "PayloadError",
    "ShoeInserted",
    "ShoeRemoved",
    "Undelivered",
    "crc16",
    "decode_frame",
    "decode_payload",
    "encode_ack",
    "encode_card_drawn",
    "encode_cut_card",
    "encode_fault",
    "encode_frame",
    "encode_heartbeat",
    "encode_hello",
    "encode_nak",
    "encode_raw",
    "encode_shoe_inserted",
    "encode_shoe_removed",
]


def encode_hello(seq: int, boot_id: int, version: int = PROTOCOL_VERSION) -> bytes:
    return encode_frame(seq, Hello(boot_id=boot_id, version=version))


def encode_heartbeat(seq: int) -> bytes:
    return encode_frame(seq, Heartbeat())


def encode_card_drawn(seq: int, card: Card) -> bytes:
    return encode_frame(seq, CardDrawn(card))


def encode_cut_card(seq: int) -> bytes:
    return encode_frame(seq, CutCard())


def encode_shoe_removed(seq: int) -> bytes:
    return encode_frame(seq, ShoeRemoved())


def encode_shoe_inserted(seq: int) -> bytes:
    return encode_frame(seq, ShoeInserted())


def encode_fault(seq: int, kind: FaultKind, code: int = 0) -> bytes:
    return encode_frame(seq, Fault(kind, code))


def encode_ack(seq: int) -> bytes:
    """The host's acknowledgement of the device frame numbered `seq`."""
    return encode_frame(seq, Ack())


def encode_nak(seq: int) -> bytes:
    """The host's request to resend the device frame numbered `seq`."""
    return encode_frame(seq, Nak())
