"""Smart-shoe frames through the decoder: whole, split, byte by byte, concatenated, with garbage, damaged."""

from __future__ import annotations

import pytest

from drivers.smart_shoe.protocol import (
    DLE,
    ETX,
    MAX_FRAME,
    MAX_PAYLOAD,
    STX,
    Ack,
    CardDrawn,
    CutCard,
    DecodedFrame,
    Decoder,
    Fault,
    FaultKind,
    FrameError,
    FrameErrorKind,
    Heartbeat,
    Hello,
    HostSession,
    Message,
    MessageType,
    Nak,
    ShoeInserted,
    ShoeRemoved,
    crc16,
    decode_frame,
    encode_ack,
    encode_card_drawn,
    encode_cut_card,
    encode_fault,
    encode_frame,
    encode_heartbeat,
    encode_hello,
    encode_nak,
    encode_raw,
    encode_shoe_inserted,
    encode_shoe_removed,
)
from studio.domain.cards import parse_card

# Sequence numbers and payloads chosen so that markers show up in every field and must be escaped.
SAMPLES: list[tuple[int, Message]] = [
    (0, Hello(boot_id=0x02031002)),
    (1, CardDrawn(parse_card("QD"))),
    (2, CardDrawn(parse_card("2S"))),
    (3, CardDrawn(parse_card("3H"))),
    (0x10, CardDrawn(parse_card("10C"))),
    (0x0203, CutCard()),
    (0x1003, ShoeRemoved()),
    (0x0302, ShoeInserted()),
    (0xFFFF, Fault(FaultKind.LID_OPEN, 0x0210)),
    (0x1010, Fault(FaultKind.SENSOR, 7)),
    (42, Heartbeat()),
    (0x0202, Ack()),
    (0x0303, Nak()),
]
FRAMES = [encode_frame(seq, message) for seq, message in SAMPLES]
NEXT = encode_card_drawn(7, parse_card("KH"))  # a good frame that follows damaged ones


def decode(*chunks: bytes) -> list[DecodedFrame | FrameError]:
    decoder = Decoder()
    items: list[DecodedFrame | FrameError] = []
    for chunk in chunks:
        items += decoder.feed(chunk)
    return items


def decoded(items: list[DecodedFrame | FrameError]) -> list[tuple[int, Message]]:
    return [(item.seq, item.message) for item in items if isinstance(item, DecodedFrame)]


def test_crc_is_ccitt_false() -> None:
    assert crc16(b"123456789") == 0x29B1


def test_a_card_frame_byte_for_byte() -> None:
    # LEN 2 and SEQ 0x0001: LEN is a marker value, so it goes out as DLE 0x22.
    frame = encode_card_drawn(1, parse_card("QD"))
    body = bytes([0x02, 0x00, 0x01, 0x20, 0x0C, ord("D")])
    assert frame == b"\x02\x10\x22" + body[1:] + crc16(body).to_bytes(2, "big") + b"\x03"


@pytest.mark.parametrize(("seq", "message"), SAMPLES)
def test_every_message_round_trips(seq: int, message: Message) -> None:
    frame = encode_frame(seq, message)
    assert decode(frame) == [DecodedFrame(seq, message, frame)]
    assert decode(frame)[0].raw_hex == frame.hex()


@pytest.mark.parametrize("frame", FRAMES)
def test_markers_never_appear_inside_a_frame(frame: bytes) -> None:
    body = frame[1:-1]
    assert frame[0] == STX and frame[-1] == ETX
    assert STX not in body and ETX not in body
    for index, byte in enumerate(body):
        if byte == DLE:
            assert body[index + 1] in (0x22, 0x23, 0x30)
    assert len(frame) <= MAX_FRAME


def test_encode_helpers_match_encode_frame() -> None:
    card = parse_card("AS")
    assert encode_hello(5, 9) == encode_frame(5, Hello(9))
    assert encode_heartbeat(5) == encode_frame(5, Heartbeat())
    assert encode_card_drawn(5, card) == encode_frame(5, CardDrawn(card))
    assert encode_cut_card(5) == encode_frame(5, CutCard())
    assert encode_shoe_removed(5) == encode_frame(5, ShoeRemoved())
    assert encode_shoe_inserted(5) == encode_frame(5, ShoeInserted())
    assert encode_fault(5, FaultKind.CARD_JAM, 3) == encode_frame(5, Fault(FaultKind.CARD_JAM, 3))
    assert encode_ack(5) == encode_frame(5, Ack())
    assert encode_nak(5) == encode_frame(5, Nak())


def test_encoders_refuse_out_of_range_values() -> None:
    with pytest.raises(ValueError):
        encode_raw(65536, 0x20, b"")
    with pytest.raises(ValueError):
        encode_raw(0, 0x20, bytes(MAX_PAYLOAD + 1))
    with pytest.raises(ValueError):
        Hello(boot_id=-1)
    with pytest.raises(ValueError):
        Fault(FaultKind.OTHER, 0x10000)


@pytest.mark.parametrize("frame", FRAMES)
def test_split_at_every_position(frame: bytes) -> None:
    expected = decode(frame)
    for cut in range(len(frame) + 1):
        assert decode(frame[:cut], frame[cut:]) == expected


def test_byte_by_byte_and_concatenated() -> None:
    stream = b"".join(FRAMES)
    expected = [(seq, message) for seq, message in SAMPLES]
    assert decoded(decode(stream)) == expected
    items = decode(*(stream[i : i + 1] for i in range(len(stream))))
    assert decoded(items) == expected
    assert all(isinstance(item, DecodedFrame) for item in items)


def test_garbage_between_frames_is_reported_and_skipped() -> None:
    garbage = [b"\x03\x10\xff", b"noise \x03\x03", b"\x10", b"\x00" * (MAX_FRAME + 5)]
    stream = garbage[0] + FRAMES[0] + garbage[1] + FRAMES[1] + garbage[2] + FRAMES[2] + garbage[3] + FRAMES[3]
    for items in (decode(stream), decode(*(stream[i : i + 1] for i in range(len(stream))))):
        assert decoded(items) == SAMPLES[:4]
        errors = [item for item in items if isinstance(item, FrameError)]
        assert {error.kind for error in errors} == {FrameErrorKind.GARBAGE}
        assert b"".join(error.raw for error in errors) == b"".join(garbage)
        assert all(len(error.raw) <= MAX_FRAME for error in errors)


def test_a_stray_start_marker_costs_only_its_own_bytes() -> None:
    items = decode(b"\x02\x99\x98" + FRAMES[1])
    assert isinstance(items[0], FrameError) and items[0].kind is FrameErrorKind.TRUNCATED
    assert items[0].raw == b"\x02\x99\x98"
    assert decoded(items) == [SAMPLES[1]]


@pytest.mark.parametrize("frame", FRAMES)
def test_truncated_frames_are_reported_and_the_next_frame_survives(frame: bytes) -> None:
    for length in range(1, len(frame)):
        items = decode(frame[:length] + NEXT)
        assert decoded(items) == [(7, CardDrawn(parse_card("KH")))]
        assert isinstance(items[0], FrameError)
        assert items[0].raw == frame[:length]


def test_a_frame_cut_by_the_end_of_the_stream_comes_out_on_flush() -> None:
    decoder = Decoder()
    assert decoder.feed(FRAMES[1][:5]) == []
    assert decoder.pending == 5
    [error] = decoder.flush()
    assert error.kind is FrameErrorKind.TRUNCATED and error.raw == FRAMES[1][:5]
    assert decoder.pending == 0 and decoder.flush() == []


@pytest.mark.parametrize("frame", FRAMES)
def test_no_single_bit_flip_yields_a_wrong_message(frame: bytes) -> None:
    for bit in range(len(frame) * 8):
        damaged = bytearray(frame)
        damaged[bit // 8] ^= 1 << (bit % 8)
        stream = bytes(damaged) + NEXT
        items = decode(stream)
        # Rejected or resynchronised: the damaged frame never decodes, the next one always does.
        assert decoded(items) == [(7, CardDrawn(parse_card("KH")))], f"bit {bit}"
        assert b"".join(item.raw for item in items) == stream
        session = HostSession(0.0)
        result = session.receive(items, 0.0)
        assert [item.message for item in result.messages] == [CardDrawn(parse_card("KH"))]


@pytest.mark.parametrize("frame", FRAMES[:4])
def test_no_single_byte_substitution_yields_a_wrong_message(frame: bytes) -> None:
    for index in range(len(frame)):
        for value in range(256):
            if value == frame[index]:
                continue
            damaged = frame[:index] + bytes((value,)) + frame[index + 1 :]
            assert decoded(decode(damaged + NEXT)) == [(7, CardDrawn(parse_card("KH")))]


def test_a_frame_with_no_end_marker_is_cut_at_the_bound() -> None:
    stream = b"\x02" + b"\x41" * 500 + b"\x03" + FRAMES[1]
    decoder = Decoder()
    items: list[DecodedFrame | FrameError] = []
    for i in range(len(stream)):
        items += decoder.feed(stream[i : i + 1])
        assert decoder.pending < MAX_FRAME
    assert items[0] == FrameError(
        FrameErrorKind.TOO_LONG, f"no end marker within {MAX_FRAME} bytes", stream[:MAX_FRAME]
    )
    assert decoded(items) == [SAMPLES[1]]
    assert b"".join(item.raw for item in items) == stream
    assert items == decode(stream)


def test_the_largest_frame_fits_the_bound() -> None:
    # Every payload byte a marker, so every one is escaped: the worst case the bound must still hold.
    frame = encode_raw(0x0202, 0x55, b"\x02" * MAX_PAYLOAD)
    assert len(frame) <= MAX_FRAME
    [item] = decode(frame)
    assert isinstance(item, FrameError) and item.kind is FrameErrorKind.UNKNOWN_TYPE


@pytest.mark.parametrize(
    ("raw", "kind"),
    [
        (b"\x02\x03", FrameErrorKind.BAD_LENGTH),
        (b"\x02\x00\x00\x01\x04\x03", FrameErrorKind.BAD_LENGTH),
        (b"\x02\x10\x41\x00\x00\x04\x00\x00\x03", FrameErrorKind.BAD_ESCAPE),
        (b"\x02\x00\x00\x01\x04\x00\x10\x03", FrameErrorKind.BAD_ESCAPE),
        (b"\x02\x41" + bytes(0x41 + 5) + b"\x03", FrameErrorKind.BAD_LENGTH),  # LEN above MAX_PAYLOAD
    ],
)
def test_malformed_frames(raw: bytes, kind: FrameErrorKind) -> None:
    [item] = decode(raw)
    assert isinstance(item, FrameError) and item.kind is kind and item.raw == raw and item.seq is None


def test_a_length_that_disagrees_with_the_body_is_refused_even_with_a_good_crc() -> None:
    body = bytes([3, 0, 9, MessageType.CARD_DRAWN, 12, ord("D")])  # LEN says 3, two payload bytes follow
    raw = b"\x02" + body + crc16(body).to_bytes(2, "big") + b"\x03"
    [item] = decode(raw)
    assert isinstance(item, FrameError) and item.kind is FrameErrorKind.BAD_LENGTH


def test_a_bad_checksum_keeps_the_probable_sequence_number() -> None:
    frame = bytearray(encode_card_drawn(0x0105, parse_card("9S")))
    frame[-2] ^= 0x01
    [item] = decode(bytes(frame))
    assert isinstance(item, FrameError)
    assert item.kind is FrameErrorKind.BAD_CHECKSUM and item.seq == 0x0105 and not item.intact


@pytest.mark.parametrize(
    ("type_code", "payload", "kind"),
    [
        (0x55, b"", FrameErrorKind.UNKNOWN_TYPE),
        (MessageType.CARD_DRAWN, bytes([0, ord("S")]), FrameErrorKind.BAD_PAYLOAD),
        (MessageType.CARD_DRAWN, bytes([14, ord("S")]), FrameErrorKind.BAD_PAYLOAD),
        (MessageType.CARD_DRAWN, bytes([1, ord("X")]), FrameErrorKind.BAD_PAYLOAD),
        (MessageType.CARD_DRAWN, bytes([1]), FrameErrorKind.BAD_PAYLOAD),
        (MessageType.FAULT, bytes([9, 0, 0]), FrameErrorKind.BAD_PAYLOAD),
        (MessageType.HELLO, bytes(4), FrameErrorKind.BAD_PAYLOAD),
        (MessageType.HEARTBEAT, b"\x00", FrameErrorKind.BAD_PAYLOAD),
    ],
)
def test_intact_frames_that_cannot_be_understood(type_code: int, payload: bytes, kind: FrameErrorKind) -> None:
    raw = encode_raw(0x0304, type_code, payload)
    item = decode_frame(raw)
    assert isinstance(item, FrameError)
    assert item.kind is kind and item.intact and item.seq == 0x0304 and item.raw == raw
