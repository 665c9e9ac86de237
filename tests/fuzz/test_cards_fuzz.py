"""Fuzzing the card-code parser: any text is a card or an `InvalidCardCode` naming it, and never anything else.

The oracle is the documented grammar (DESIGN.md §6), written here as a regular expression over ASCII: a rank
`A 2-9 10 T J Q K` and a suit `S H D C`, in either case, with blanks around. Suit symbols are tried on their own.
"""

from __future__ import annotations

import re
import string

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from studio.domain.cards import ALL_CARDS, Card, parse_card, parse_cards
from studio.domain.errors import InvalidCardCode, StudioError
from tests.fuzz.support import fuzz

GRAMMAR = re.compile(r"\s*(A|[2-9]|10|T|J|Q|K)([SHDC])\s*", re.IGNORECASE)
SYMBOLS = {"♠": "S", "♤": "S", "♥": "H", "♡": "H", "♦": "D", "♢": "D", "♣": "C", "♧": "C"}
pieces = st.sampled_from(["A", "a", "1", "10", "T", "t", "J", "q", "K", "0", "S", "h", "D", "c", "X", " ", "\t", ","])
# Text close to card codes, from their own pieces, and any text at all.
near_codes = st.lists(pieces, max_size=5).map("".join)
ascii_text = st.text(alphabet=string.printable, max_size=8) | near_codes


def canonical(rank: str, suit: str) -> str:
    rank = rank.upper()
    return ("10" if rank == "T" else rank) + suit.upper()


@fuzz(500)
@given(ascii_text)
@example(" 10s\n").via("a lower-case ten with blanks around")
@example("1S").via("a rank of one")
def test_ascii_text_parses_exactly_when_the_grammar_says_so(text: str) -> None:
    match = GRAMMAR.fullmatch(text)
    if match:
        assert parse_card(text).code == canonical(*match.groups())
    else:
        with pytest.raises(InvalidCardCode) as raised:
            parse_card(text)
        assert raised.value.text == text and repr(text) in str(raised.value)


@fuzz(300)
@given(st.sampled_from(["A", "7", "10", "T", "q"]), st.sampled_from(sorted(SYMBOLS)), st.sampled_from(["", " "]))
def test_suit_symbols_stand_for_their_letters(rank: str, symbol: str, blank: str) -> None:
    assert parse_card(f"{blank}{rank}{symbol}{blank}").code == canonical(rank, SYMBOLS[symbol])


@fuzz(500)
@given(st.text(max_size=10))
@example("Qſ").via("a character that upper-cases to a suit letter")
@example("ǅ").via("a title-case letter")
@example("\x00").via("a NUL")
def test_any_text_is_a_card_or_an_invalid_card_code(text: str) -> None:
    try:
        card = parse_card(text)
    except InvalidCardCode as error:
        assert error.text == text and str(error).startswith("invalid card code ")
    else:
        assert card in ALL_CARDS and Card.parse(card.code) is card and str(card) == card.code


@fuzz(300)
@given(st.none() | st.binary() | st.integers() | st.floats() | st.lists(st.text(max_size=3)) | st.builds(object))
def test_anything_that_is_not_text_is_an_invalid_card_code(value: object) -> None:
    with pytest.raises(InvalidCardCode):
        parse_card(value)  # type: ignore[arg-type]


@fuzz(300)
@given(st.lists(st.sampled_from(ALL_CARDS), max_size=20), st.lists(st.sampled_from([" ", "\n", ",", ";", "\t "])))
def test_lists_of_codes_split_on_any_separator(cards: list[Card], separators: list[str]) -> None:
    gaps = [separators[i % len(separators)] if separators else " " for i in range(len(cards))]
    text = "".join(card.code.lower() + gap for card, gap in zip(cards, gaps, strict=True))
    assert parse_cards(text) == cards


@fuzz(400)
@given(st.text(max_size=40) | st.lists(near_codes, max_size=8).map(" ".join))
def test_any_text_is_a_list_of_cards_or_names_its_bad_token(text: str) -> None:
    try:
        cards = parse_cards(text)
    except StudioError as error:
        assert isinstance(error, InvalidCardCode) and error.text in text
    else:
        assert all(card in ALL_CARDS for card in cards)
