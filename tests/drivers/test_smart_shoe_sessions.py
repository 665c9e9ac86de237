"""The host and device ends of a smart-shoe link, with injected time: ACK/NAK, duplicates, retransmission, heartbeat."""

from __future__ import annotations

import math
import random

import pytest

from drivers.smart_shoe.protocol import (
    Ack,
    CardDrawn,
    DecodedFrame,
    Decoder,
    DeviceSession,
    FrameErrorKind,
    Heartbeat,
    Hello,
    HostSession,
    Message,
    Nak,
    NoticeKind,
    ShoeInserted,
    Undelivered,
    encode_ack,
    encode_card_drawn,
    encode_frame,
    encode_heartbeat,
    encode_hello,
    encode_nak,
    encode_raw,
)
from studio.domain.cards import ALL_CARDS, parse_card

QD = parse_card("QD")
KH = parse_card("KH")


def messages_of(session: HostSession, data: bytes, now: float = 0.0) -> list[Message]:
    return [frame.message for frame in session.feed(data, now).messages]


# --- host ---------------------------------------------------------------------------------------------------------


def test_a_good_frame_is_handed_on_and_acknowledged() -> None:
    host = HostSession(0.0)
    frame = encode_card_drawn(5, QD)
    result = host.feed(frame, 1.0)
    assert [(item.seq, item.message, item.raw) for item in result.messages] == [(5, CardDrawn(QD), frame)]
    assert result.reply == encode_ack(5)
    assert result.errors == () and result.notices == () and result.duplicates == 0


def test_a_duplicate_is_dropped_and_acknowledged_again() -> None:
    host = HostSession(0.0)
    frame = encode_card_drawn(5, QD)
    host.feed(frame, 1.0)
    result = host.feed(frame, 1.1)
    assert result.messages == () and result.duplicates == 1
    assert result.reply == encode_ack(5)


def test_a_bad_checksum_is_refused_with_a_nak() -> None:
    damaged = bytearray(encode_card_drawn(9, QD))
    damaged[-3] ^= 0x40
    host = HostSession(0.0)
    result = host.feed(bytes(damaged), 1.0)
    assert result.messages == ()
    assert result.reply == encode_nak(9)
    assert [error.kind for error in result.errors] == [FrameErrorKind.BAD_CHECKSUM]
    # The retransmission is then accepted as new.
    assert messages_of(host, encode_card_drawn(9, QD)) == [CardDrawn(QD)]


def test_garbage_and_broken_frames_get_no_answer() -> None:
    host = HostSession(0.0)
    result = host.feed(b"\x99\x98" + encode_card_drawn(9, QD)[:6] + b"\x02\x03", 1.0)
    assert result.reply == b""
    assert [error.kind for error in result.errors] == [
        FrameErrorKind.GARBAGE,
        FrameErrorKind.TRUNCATED,
        FrameErrorKind.BAD_LENGTH,
    ]


def test_an_intact_frame_of_unknown_type_is_acknowledged_and_reported_once() -> None:
    host = HostSession(0.0)
    raw = encode_raw(3, 0x55, b"\x01")
    first = host.feed(raw, 1.0)
    assert first.reply == encode_ack(3)
    assert [error.kind for error in first.errors] == [FrameErrorKind.UNKNOWN_TYPE]
    again = host.feed(raw, 1.1)
    assert again.reply == encode_ack(3) and again.errors == () and again.duplicates == 1


def test_a_gap_in_the_numbers_is_accepted_and_noticed() -> None:
    host = HostSession(0.0)
    host.feed(encode_card_drawn(10, QD), 1.0)
    result = host.feed(encode_card_drawn(13, KH), 1.0)
    assert [item.message for item in result.messages] == [CardDrawn(KH)]
    assert [(notice.kind, notice.seq) for notice in result.notices] == [(NoticeKind.SEQUENCE_JUMP, 13)]


def test_sequence_numbers_wrap_round() -> None:
    host = HostSession(0.0)
    cards = ALL_CARDS[:4]
    frames = [encode_card_drawn(seq, card) for seq, card in zip((65534, 65535, 0, 1), cards, strict=True)]
    result = host.feed(b"".join(frames), 1.0)
    assert [item.message for item in result.messages] == [CardDrawn(card) for card in cards]
    assert result.notices == ()
    # A late retransmission from before the wrap is still recognised.
    assert host.feed(frames[1], 1.1).duplicates == 1


def test_a_number_reused_with_new_content_is_accepted_never_dropped() -> None:
    host = HostSession(0.0)
    host.feed(encode_card_drawn(1, QD) + encode_card_drawn(2, QD), 1.0)
    result = host.feed(encode_card_drawn(1, KH), 1.0)  # e.g. a device restarted without HELLO
    assert [item.message for item in result.messages] == [CardDrawn(KH)]
    assert [notice.kind for notice in result.notices] == [NoticeKind.SEQUENCE_REUSED]


def test_only_recent_frames_count_as_duplicates() -> None:
    host = HostSession(0.0, duplicate_window=2)
    frames = [encode_card_drawn(seq, QD) for seq in range(3)]
    host.feed(b"".join(frames), 1.0)
    assert host.feed(frames[2], 1.0).duplicates == 1
    assert host.feed(frames[1], 1.0).duplicates == 1
    result = host.feed(frames[0], 1.0)  # fell out of the window: taken as new
    assert result.duplicates == 0 and len(result.messages) == 1


def test_hello_with_a_new_boot_id_starts_the_numbers_over() -> None:
    host = HostSession(0.0)
    first_boot = encode_hello(0, 0xAAAA) + encode_card_drawn(1, QD) + encode_card_drawn(2, KH)
    result = host.feed(first_boot, 1.0)
    assert [notice.kind for notice in result.notices] == [NoticeKind.DEVICE_HELLO]
    assert host.boot_id == 0xAAAA
    # The same boot's HELLO again is a duplicate.
    assert host.feed(encode_hello(0, 0xAAAA), 1.0).duplicates == 1
    # After a restart the very same frames are new cards: nothing is dropped.
    second_boot = host.feed(first_boot.replace(encode_hello(0, 0xAAAA), encode_hello(0, 0xBBBB)), 2.0)
    assert [item.message for item in second_boot.messages] == [Hello(0xBBBB), CardDrawn(QD), CardDrawn(KH)]
    assert [notice.kind for notice in second_boot.notices] == [NoticeKind.DEVICE_RESTARTED]
    assert second_boot.duplicates == 0


def test_host_messages_from_the_device_side_are_ignored() -> None:
    host = HostSession(0.0)
    result = host.feed(encode_ack(4), 1.0)
    assert result.messages == () and result.reply == b""
    assert [notice.kind for notice in result.notices] == [NoticeKind.UNEXPECTED_MESSAGE]


def test_host_feed_byte_by_byte() -> None:
    host = HostSession(0.0)
    stream = encode_hello(0, 1) + encode_card_drawn(1, QD) + encode_card_drawn(2, KH)
    got: list[Message] = []
    reply = b""
    for i in range(len(stream)):
        result = host.feed(stream[i : i + 1], 1.0)
        got += [item.message for item in result.messages]
        reply += result.reply
    assert got == [Hello(1), CardDrawn(QD), CardDrawn(KH)]
    assert reply == encode_ack(0) + encode_ack(1) + encode_ack(2)


def test_host_flush_reports_a_frame_left_unfinished() -> None:
    host = HostSession(0.0)
    host.feed(encode_card_drawn(1, QD)[:4], 1.0)
    result = host.flush(2.0)
    assert [error.kind for error in result.errors] == [FrameErrorKind.TRUNCATED]


def test_heartbeat_overdue() -> None:
    host = HostSession(100.0, heartbeat_interval=1.0, missed_heartbeats=3)
    assert not host.heartbeat_overdue(103.0)
    assert host.heartbeat_overdue(103.01)  # nothing since the session started
    host.feed(encode_heartbeat(0), 103.5)
    assert host.last_frame_at == 103.5
    assert not host.heartbeat_overdue(106.5)
    damaged = bytearray(encode_heartbeat(1))
    damaged[-2] ^= 1
    host.feed(bytes(damaged), 106.0)  # a damaged frame proves nothing
    assert host.heartbeat_overdue(106.6)
    host.feed(encode_card_drawn(2, QD), 106.6)  # any good frame does
    assert not host.heartbeat_overdue(109.0)


def test_host_settings_are_checked() -> None:
    with pytest.raises(ValueError):
        HostSession(0.0, heartbeat_interval=0)


# --- device -------------------------------------------------------------------------------------------------------


def test_device_sends_one_frame_at_a_time_in_order() -> None:
    device = DeviceSession(ack_timeout=0.5)
    assert device.send(Hello(7), 0.0) == encode_hello(0, 7)
    assert device.send(CardDrawn(QD), 0.0) == b""  # queued behind the HELLO
    assert device.in_flight == 0 and device.queued == 1
    assert device.due(0.1) == []
    device.feed(encode_ack(0))
    assert device.due(0.2) == [encode_card_drawn(1, QD)]
    device.feed(encode_ack(1))
    assert device.idle and device.due(0.3) == [] and device.deadline() is None


def test_device_retransmits_at_once_on_nak() -> None:
    device = DeviceSession(ack_timeout=0.5)
    frame = device.send(CardDrawn(QD), 0.0)
    device.feed(encode_nak(0))
    assert device.deadline() == -math.inf
    assert device.due(0.01) == [frame]
    assert device.due(0.02) == []  # one NAK, one retransmission


def test_device_ignores_answers_for_other_frames_and_damaged_answers() -> None:
    device = DeviceSession(ack_timeout=0.5)
    device.send(CardDrawn(QD), 0.0)
    device.feed(encode_ack(1) + encode_nak(1) + b"\x02\x00\x00\x03")
    assert device.in_flight == 0 and device.due(0.1) == []
    assert device.link_errors == 1


def test_device_retransmits_on_timeout_then_gives_up() -> None:
    device = DeviceSession(ack_timeout=0.5, max_retries=2)
    frame = device.send(CardDrawn(QD), 10.0)
    device.send(CardDrawn(KH), 10.0)
    assert device.deadline() == 10.5
    assert device.due(10.49) == []
    assert device.due(10.5) == [frame]
    assert device.due(11.0) == [frame]
    assert device.take_undelivered() == []
    # Third timeout: two retries spent, give up and move on to the next frame.
    assert device.due(11.5) == [encode_card_drawn(1, KH)]
    assert device.take_undelivered() == [Undelivered(0, CardDrawn(QD), 3)]
    assert device.take_undelivered() == []


def test_device_never_gives_up_a_hello() -> None:
    device = DeviceSession(ack_timeout=1.0, max_retries=1)
    frame = device.send(Hello(3), 0.0)
    for second in range(1, 20):
        assert device.due(float(second)) == [frame]
    assert device.take_undelivered() == []


def test_device_does_not_pile_up_heartbeats() -> None:
    device = DeviceSession()
    assert device.send(Heartbeat(), 0.0) == encode_heartbeat(0)
    assert device.send(Heartbeat(), 1.0) == b""  # the first one is still on its way
    device.feed(encode_ack(0))
    assert device.send(Heartbeat(), 2.0) == encode_heartbeat(1)


def test_device_refuses_host_messages_and_wraps_its_numbers() -> None:
    device = DeviceSession(first_seq=65535)
    with pytest.raises(TypeError):
        device.send(Ack(), 0.0)  # type: ignore[arg-type]
    assert device.send(ShoeInserted(), 0.0) == encode_frame(65535, ShoeInserted())
    device.feed(encode_ack(65535))
    assert device.send(CardDrawn(QD), 0.0) == encode_card_drawn(0, QD)


# --- both ends over a bad line ------------------------------------------------------------------------------------


def noisy(data: bytes, rng: random.Random) -> bytes:
    """A line that loses, doubles, garbles and flips: single-bit damage, which the CRC always catches."""
    out = bytearray()
    for frame in data.split(b"\x03"):
        if not frame:
            continue
        chunk = bytearray(frame + b"\x03")
        roll = rng.random()
        if roll < 0.1:
            continue  # lost
        if roll < 0.2:
            bit = rng.randrange(len(chunk) * 8)
            chunk[bit // 8] ^= 1 << (bit % 8)
        elif roll < 0.25:
            chunk += bytes(chunk)  # doubled
        elif roll < 0.3:
            chunk[:0] = b"\x55\x03\x10"  # line noise before it
        out += chunk
    return bytes(out)


@pytest.mark.parametrize("seed", range(12))
def test_every_card_arrives_once_in_order_over_a_bad_line(seed: int) -> None:
    rng = random.Random(seed)
    cards = rng.sample(ALL_CARDS, 40)
    device = DeviceSession(ack_timeout=0.2, max_retries=50)
    host = HostSession(0.0)
    to_host = device.send(Hello(seed), 0.0)
    for card in cards:
        to_host += device.send(CardDrawn(card), 0.0)
    got: list[Message] = []
    duplicates = naks = 0
    now = 0.0
    while not device.idle and now < 120.0:
        result = host.feed(noisy(to_host, rng), now)
        got += [item.message for item in result.messages]
        duplicates += result.duplicates
        naks += sum(isinstance(item, DecodedFrame) and item.message == Nak() for item in Decoder().feed(result.reply))
        device.feed(noisy(result.reply, rng))
        now += 0.05
        to_host = b"".join(device.due(now))
    assert device.idle and device.take_undelivered() == []
    assert got == [Hello(seed)] + [CardDrawn(card) for card in cards]
    assert duplicates > 0 and naks > 0  # the line did damage, and the protocol repaired it


def test_host_answers_quote_the_device_sequence_number() -> None:
    items = Decoder().feed(encode_ack(12) + encode_nak(13))
    assert [(item.seq, item.message) for item in items if isinstance(item, DecodedFrame)] == [(12, Ack()), (13, Nak())]
