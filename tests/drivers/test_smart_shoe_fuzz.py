"""Property tests of the smart-shoe protocol: no input crashes, hangs or grows it; good frames always get through."""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from drivers.smart_shoe.framing import stuff, unstuff
from drivers.smart_shoe.protocol import (
    DLE,
    ETX,
    MAX_FRAME,
    STX,
    CardDrawn,
    CutCard,
    DecodedFrame,
    Decoder,
    DeviceMessage,
    DeviceSession,
    Fault,
    FaultKind,
    FrameError,
    FrameErrorKind,
    Heartbeat,
    Hello,
    HostSession,
    ShoeInserted,
    ShoeRemoved,
    encode_frame,
)
from studio.domain.cards import ALL_CARDS

FAST = settings(max_examples=150, deadline=None)

device_messages: st.SearchStrategy[DeviceMessage] = st.one_of(
    st.builds(Hello, boot_id=st.integers(0, 2**32 - 1), version=st.integers(0, 255)),
    st.just(Heartbeat()),
    st.builds(CardDrawn, st.sampled_from(ALL_CARDS)),
    st.just(CutCard()),
    st.just(ShoeRemoved()),
    st.just(ShoeInserted()),
    st.builds(Fault, st.sampled_from(list(FaultKind)), st.integers(0, 0xFFFF)),
)
seqs = st.integers(0, 0xFFFF)
# Bytes rich in markers, so that the structure is exercised and not only the garbage path.
wire_bytes = st.lists(st.one_of(st.sampled_from([STX, ETX, DLE, 0x22, 0x23, 0x30]), st.integers(0, 255))).map(bytes)


def cuts(data: bytes, points: list[int]) -> list[bytes]:
    """`data` split at the given points (taken modulo its length), in order."""
    marks = sorted({point % (len(data) + 1) for point in points} | {0, len(data)})
    return [data[a:b] for a, b in itertools.pairwise(marks)]


@FAST
@given(st.binary(max_size=600) | wire_bytes, st.lists(st.integers(0, 10_000), max_size=12))
def test_any_bytes_split_anyhow_never_raise_and_never_lose_a_byte(data: bytes, points: list[int]) -> None:
    decoder = Decoder()
    items: list[DecodedFrame | FrameError] = []
    for chunk in cuts(data, points):
        items += decoder.feed(chunk)
        assert decoder.pending < MAX_FRAME
    items += decoder.flush()
    assert b"".join(item.raw for item in items) == data
    # How the stream was split changes nothing.
    whole = Decoder()
    assert whole.feed(data) + whole.flush() == items


@FAST
@given(st.lists(st.tuples(seqs, device_messages, st.binary(max_size=300)), max_size=8), st.binary(max_size=50))
def test_frames_between_garbage_without_start_markers_all_come_through(
    frames: list[tuple[int, DeviceMessage, bytes]], lead: bytes
) -> None:
    lead = lead.replace(b"\x02", b"")
    stream = lead
    garbage = lead
    for seq, message, noise in frames:
        clean = noise.replace(b"\x02", b"")
        stream += encode_frame(seq, message) + clean
        garbage += clean
    for chunks in ([stream], [stream[i : i + 1] for i in range(len(stream))]):
        decoder = Decoder()
        items: list[DecodedFrame | FrameError] = []
        for chunk in chunks:
            items += decoder.feed(chunk)
        items += decoder.flush()
        assert [(item.seq, item.message) for item in items if isinstance(item, DecodedFrame)] == [
            (seq, message) for seq, message, _ in frames
        ]
        errors = [item for item in items if isinstance(item, FrameError)]
        assert all(error.kind is FrameErrorKind.GARBAGE for error in errors)
        assert b"".join(error.raw for error in errors) == garbage


@FAST
@given(seqs, device_messages)
def test_encode_then_decode_is_identity(seq: int, message: DeviceMessage) -> None:
    frame = encode_frame(seq, message)
    assert Decoder().feed(frame) == [DecodedFrame(seq, message, frame)]


@FAST
@given(st.binary(max_size=200))
def test_stuffing_round_trips_and_hides_markers(body: bytes) -> None:
    stuffed = stuff(body)
    assert STX not in stuffed and ETX not in stuffed
    assert unstuff(stuffed) == body


@FAST
@given(st.lists(st.binary(max_size=80) | wire_bytes, max_size=10))
def test_sessions_take_any_bytes(chunks: list[bytes]) -> None:
    host = HostSession(0.0)
    device = DeviceSession()
    device.send(CardDrawn(ALL_CARDS[0]), 0.0)
    for index, chunk in enumerate(chunks):
        host.feed(chunk, float(index))
        device.feed(chunk)
        device.due(float(index))
    host.flush(99.0)
