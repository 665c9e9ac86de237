"""The card-reader line format: good lines split anyhow, malformed and over-long lines, and fuzzing."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from drivers.line_scanner.protocol import (
    MAX_LINE,
    LineCard,
    LineDecoder,
    LineError,
    LineErrorKind,
    encode_line,
    parse_line,
)
from studio.domain.cards import ALL_CARDS, Card, parse_card

FAST = settings(max_examples=150, deadline=None)


def decode(*chunks: bytes, **options: bool) -> list[LineCard | LineError]:
    decoder = LineDecoder(**options)
    items: list[LineCard | LineError] = []
    for chunk in chunks:
        items += decoder.feed(chunk)
    return items


def cards_of(items: list[LineCard | LineError]) -> list[Card]:
    return [item.card for item in items if isinstance(item, LineCard)]


@pytest.mark.parametrize(
    ("line", "code"),
    [(b"D12\n", "QD"), (b"A01\r\n", "AS"), (b"H13\n", "KH"), (b"C10\r\n", "10C"), (b"D11\n", "JD"), (b"A09\n", "9S")],
)
def test_documented_examples(line: bytes, code: str) -> None:
    assert decode(line) == [LineCard(parse_card(code), line)]


@pytest.mark.parametrize("newline", [b"\n", b"\r\n"])
def test_every_card_round_trips(newline: bytes) -> None:
    stream = b"".join(encode_line(card, newline) for card in ALL_CARDS)
    assert cards_of(decode(stream)) == list(ALL_CARDS)
    assert encode_line(parse_card("QD")) == b"D12\r\n"


def test_split_at_every_position_and_byte_by_byte() -> None:
    stream = encode_line(parse_card("QD")) + encode_line(parse_card("AS"), b"\n") + encode_line(parse_card("10H"))
    expected = decode(stream)
    assert cards_of(expected) == [parse_card("QD"), parse_card("AS"), parse_card("10H")]
    for cut in range(len(stream) + 1):
        assert decode(stream[:cut], stream[cut:]) == expected
    assert decode(*(stream[i : i + 1] for i in range(len(stream)))) == expected


def test_cr_lf_split_across_feeds() -> None:
    decoder = LineDecoder()
    assert decoder.feed(b"D12\r") == []
    assert decoder.feed(b"\n") == [LineCard(parse_card("QD"), b"D12\r\n")]
    assert decoder.pending == 0


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        (b"X12\n", "unknown suit letter 'X' (expected A, H, C or D)"),
        (b"S12\n", "unknown suit letter 'S' (expected A, H, C or D)"),  # S is not spades here: A is
        (b"d12\n", "unknown suit letter 'd' (expected A, H, C or D)"),
        (b"D00\n", "rank 00 out of range 01-13"),
        (b"D14\n", "rank 14 out of range 01-13"),
        (b"D99\n", "rank 99 out of range 01-13"),
        (b"D1\n", "expected a suit letter and two digits, got 2 characters"),
        (b"D123\n", "expected a suit letter and two digits, got 4 characters"),
        (b" D12\n", "expected a suit letter and two digits, got 4 characters"),
        (b"D12 \r\n", "expected a suit letter and two digits, got 4 characters"),
        (b"D1A\n", "rank '1A' is not two digits"),
        (b"D+1\n", "rank '+1' is not two digits"),
        (b"D\xd9\xa1\n", "non-ASCII byte 0xd9"),
        (b"\xff12\n", "non-ASCII byte 0xff"),
        (b"D1\r2\n", "carriage return inside the line"),
        (b"D12\r\r\n", "carriage return inside the line"),
        (b"\x00\x00\x00\n", "unknown suit letter '\\x00' (expected A, H, C or D)"),
    ],
)
def test_malformed_lines_are_errors_with_their_raw_bytes(line: bytes, reason: str) -> None:
    [item] = decode(line + b"H05\n")[:1]
    assert item == LineError(LineErrorKind.MALFORMED, reason, line)
    assert item.raw_hex == line.hex()
    assert cards_of(decode(line + b"H05\n")) == [parse_card("5H")]  # the next line is read as usual


def test_empty_lines_are_skipped_unless_asked_for() -> None:
    stream = b"\n\r\nD12\n\n"
    assert decode(stream) == [LineCard(parse_card("QD"), b"D12\n")]
    reported = decode(stream, report_empty_lines=True)
    assert [item.raw for item in reported] == [b"\n", b"\r\n", b"D12\n", b"\n"]
    assert [isinstance(item, LineError) and item.kind is LineErrorKind.EMPTY for item in reported] == [
        True,
        True,
        False,
        True,
    ]


def test_an_over_long_line_is_cut_at_the_bound_and_never_read_as_a_card() -> None:
    # The tail "D12\n" of the over-long line must not become a queen of diamonds.
    stream = b"Z" * (2 * MAX_LINE + 3) + b"D12\n" + b"H05\n"
    decoder = LineDecoder()
    items: list[LineCard | LineError] = []
    for i in range(len(stream)):
        items += decoder.feed(stream[i : i + 1])
        assert decoder.pending < MAX_LINE
    assert items == decode(stream)
    errors = [item for item in items if isinstance(item, LineError)]
    assert [error.kind for error in errors] == [LineErrorKind.TOO_LONG] * 3
    assert [len(error.raw) for error in errors] == [MAX_LINE, MAX_LINE, 3 + 4]
    assert b"".join(error.raw for error in errors) == stream[: -len(b"H05\n")]
    assert cards_of(items) == [parse_card("5H")]


def test_a_line_of_exactly_the_bound_is_a_plain_malformed_line() -> None:
    line = b"Q" * (MAX_LINE - 1) + b"\n"
    [item] = decode(line)
    assert isinstance(item, LineError) and item.kind is LineErrorKind.MALFORMED


def test_flush_reports_an_unfinished_line() -> None:
    decoder = LineDecoder()
    assert decoder.feed(b"D1") == []
    assert decoder.flush() == [LineError(LineErrorKind.INCOMPLETE, "stream ended inside a line", b"D1")]
    assert decoder.flush() == []
    decoder.feed(b"x" * (MAX_LINE + 2))
    assert [error.kind for error in decoder.flush()] == [LineErrorKind.TOO_LONG]
    assert decoder.feed(b"D12\n") == [LineCard(parse_card("QD"), b"D12\n")]  # flush ended the over-long line


def test_parse_line_and_options() -> None:
    assert parse_line(b"D12") == LineCard(parse_card("QD"), b"D12")
    with pytest.raises(ValueError):
        encode_line(parse_card("QD"), b"\r")
    with pytest.raises(ValueError):
        LineDecoder(max_line=4)


# --- fuzzing --------------------------------------------------------------------------------------------------------

line_bytes = st.lists(st.one_of(st.sampled_from(list(b"\r\nAHCD0123456789")), st.integers(0, 255))).map(bytes)


def cuts(data: bytes, points: list[int]) -> list[bytes]:
    marks = sorted({point % (len(data) + 1) for point in points} | {0, len(data)})
    return [data[a:b] for a, b in itertools.pairwise(marks)]


@FAST
@given(st.binary(max_size=400) | line_bytes, st.lists(st.integers(0, 10_000), max_size=12))
def test_any_bytes_never_raise_stay_bounded_and_lose_nothing(data: bytes, points: list[int]) -> None:
    decoder = LineDecoder(report_empty_lines=True)
    items: list[LineCard | LineError] = []
    for chunk in cuts(data, points):
        items += decoder.feed(chunk)
        assert decoder.pending < MAX_LINE
    items += decoder.flush()
    assert b"".join(item.raw for item in items) == data
    whole = LineDecoder(report_empty_lines=True)
    assert whole.feed(data) + whole.flush() == items


@FAST
@given(
    st.lists(
        st.tuples(st.sampled_from(ALL_CARDS), st.sampled_from([b"\n", b"\r\n"]), st.binary(max_size=60)),
        max_size=10,
    ),
    st.lists(st.integers(0, 10_000), max_size=12),
)
def test_cards_between_bad_lines_all_come_through(entries: list[tuple[Card, bytes, bytes]], points: list[int]) -> None:
    stream = b""
    bad_lines = 0
    for card, newline, noise in entries:
        bad_line = noise.replace(b"\n", b"") + b"\n"
        item = parse_line(bad_line)
        if isinstance(item, LineError) and item.kind is LineErrorKind.MALFORMED:
            stream += bad_line  # a misread line before the card
            bad_lines += 1
        stream += encode_line(card, newline)
    decoder = LineDecoder()
    items: list[LineCard | LineError] = []
    for chunk in cuts(stream, points):
        items += decoder.feed(chunk)
    assert cards_of(items) == [card for card, _, _ in entries]
    assert len([item for item in items if isinstance(item, LineError)]) >= bad_lines  # long ones make two
