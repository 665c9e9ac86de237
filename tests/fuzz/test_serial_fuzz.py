"""Fuzzing both serial protocols where tests/drivers does not reach: frames whose checksum holds but whose type and
payload are anything, single-bit errors on the wire, and card lines checked against the documented grammar.

tests/drivers/test_smart_shoe_fuzz.py and tests/drivers/test_line_scanner.py already feed both decoders random
bytes split anyhow; random bytes almost never make a frame with a good CRC, so the payload decoder is fuzzed here.
"""

from __future__ import annotations

import re

from hypothesis import example, given
from hypothesis import strategies as st

from drivers.line_scanner.protocol import LineCard, LineError, encode_line, parse_line
from drivers.smart_shoe.framing import MAX_PAYLOAD, DecodedFrame, Decoder, FrameError, decode_frame, encode_raw
from drivers.smart_shoe.messages import MessageType
from drivers.smart_shoe.protocol import CardDrawn, HostSession, encode_frame
from studio.domain.cards import ALL_CARDS, Card
from tests.fuzz.support import fuzz

seqs = st.integers(0, 0xFFFF)
types = st.sampled_from([int(t) for t in MessageType]) | st.integers(0, 0xFF)
payloads = st.binary(max_size=MAX_PAYLOAD) | st.binary(min_size=2, max_size=5)


@fuzz(500)
@given(seqs, types, payloads)
@example(1, int(MessageType.CARD_DRAWN), b"\x00S").via("rank 0")
@example(1, int(MessageType.CARD_DRAWN), b"\x0ex").via("rank 14, suit x")
@example(1, int(MessageType.FAULT), b"\xff\xff\xff").via("an unknown fault kind")
@example(1, int(MessageType.HELLO), b"\x01\x02").via("a short HELLO")
def test_an_intact_frame_is_a_message_or_an_intact_error(seq: int, type_code: int, payload: bytes) -> None:
    raw = encode_raw(seq, type_code, payload)
    item = decode_frame(raw)
    if isinstance(item, DecodedFrame):
        assert (item.seq, item.raw) == (seq, raw)
        assert encode_frame(seq, item.message) == raw  # nothing was guessed: the message says exactly what came
    else:
        assert item.intact and item.seq == seq and item.reason and item.raw == raw


@fuzz(300)
@given(st.lists(st.tuples(seqs, types, payloads), max_size=6), st.floats(0, 1e6))
def test_the_host_session_takes_any_intact_frames(frames: list[tuple[int, int, bytes]], now: float) -> None:
    host = HostSession(now)
    for seq, type_code, payload in frames:
        result = host.feed(encode_raw(seq, type_code, payload), now)
        assert len(result.messages) + len(result.errors) <= 1
    host.flush(now)


@fuzz(500)
@given(seqs, st.sampled_from(ALL_CARDS), st.data())
def test_no_single_bit_error_on_the_wire_becomes_another_message(seq: int, card: Card, data: st.DataObject) -> None:
    frame = encode_frame(seq, CardDrawn(card))
    bit = data.draw(st.integers(0, 8 * len(frame) - 1))
    corrupted = bytearray(frame)
    corrupted[bit // 8] ^= 1 << (bit % 8)
    decoder = Decoder()
    items = decoder.feed(bytes(corrupted)) + decoder.flush()
    assert all(isinstance(item, FrameError) for item in items), items


CARD_LINE = re.compile(rb"[AHCD](0[1-9]|1[0-3])(\r?\n)?")


@fuzz(500)
@given(st.binary(max_size=6) | st.lists(st.sampled_from(list(b"AHCD0139\r\n ")), max_size=6).map(bytes))
@example(b"A00\n").via("rank 00")
@example(b"h01\n").via("lower case")
@example(b"D13\r\r\n").via("two CRs")
def test_a_line_is_a_card_exactly_when_the_grammar_says_so(line: bytes) -> None:
    item = parse_line(line)
    if CARD_LINE.fullmatch(line):
        assert isinstance(item, LineCard) and encode_line(item.card, b"\n") == line.rstrip(b"\r\n") + b"\n"
    else:
        assert isinstance(item, LineError) and item.raw == line and item.reason
