"""Card codes, parsing and shoe composition (DESIGN.md §6: card codes)."""

from __future__ import annotations

from collections import Counter

import pytest

from studio.domain.cards import ALL_CARDS, Card, Rank, Suit, parse_card, parse_cards, remove_cards, shoe_composition
from studio.domain.errors import InvalidCardCode, InvalidShoe

RANK_CODES = ["A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K"]
SUIT_CODES = ["S", "H", "D", "C"]
ALL_CODES = [rank + suit for suit in SUIT_CODES for rank in RANK_CODES]


def test_there_are_52_distinct_canonical_codes() -> None:
    assert len(ALL_CARDS) == 52
    assert len(set(ALL_CARDS)) == 52
    assert sorted(card.code for card in ALL_CARDS) == sorted(ALL_CODES)


@pytest.mark.parametrize("code", ALL_CODES)
def test_every_canonical_code_round_trips(code: str) -> None:
    card = parse_card(code)
    assert card.code == code
    assert str(card) == code
    assert Card.parse(code) == card


def test_parse_gives_rank_and_suit() -> None:
    assert parse_card("QH") == Card(Rank.QUEEN, Suit.HEARTS)
    assert parse_card("10S") == Card(Rank.TEN, Suit.SPADES)
    assert parse_card("AD") == Card(Rank.ACE, Suit.DIAMONDS)
    assert parse_card("7C") == Card(Rank.SEVEN, Suit.CLUBS)


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("TS", "10S"),
        ("th", "10H"),
        ("qh", "QH"),
        ("aD", "AD"),
        ("10c", "10C"),
        ("  KS ", "KS"),
        ("\t9d\n", "9D"),
        ("Q♠", "QS"),
        ("10♥", "10H"),
        ("a♦", "AD"),
        ("T♣", "10C"),
        ("7♤", "7S"),
        ("7♡", "7H"),
        ("7♢", "7D"),
        ("7♧", "7C"),
    ],
)
def test_lenient_input_gives_canonical_output(text: str, canonical: str) -> None:
    assert parse_card(text).code == canonical


@pytest.mark.parametrize("text", ["", "X", "1S", "11H", "QX", "QHH", "   ", "10", "S", "0S", "JJ", "Q H"])
def test_invalid_codes_raise_naming_the_input(text: str) -> None:
    with pytest.raises(InvalidCardCode) as info:
        parse_card(text)
    assert repr(text) in str(info.value)
    assert info.value.text == text
    assert "\n" not in str(info.value)


def test_invalid_code_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="invalid card code"):
        parse_card("ZZ")


@pytest.mark.parametrize("value", [None, 5, 10.0, b"QH", ["QH"]])
def test_non_text_raises_invalid_card_code(value: object) -> None:
    with pytest.raises(InvalidCardCode) as info:
        parse_card(value)  # type: ignore[arg-type]
    assert repr(value) in str(info.value)


def test_parse_cards_splits_on_whitespace_and_commas() -> None:
    cards = parse_cards(" QH 10s\n\tad,  T♣,,9D;2c ")
    assert [card.code for card in cards] == ["QH", "10S", "AD", "10C", "9D", "2C"]


def test_parse_cards_on_blank_text_is_empty() -> None:
    assert parse_cards("") == []
    assert parse_cards(" \n , ") == []


def test_parse_cards_reports_the_bad_token() -> None:
    with pytest.raises(InvalidCardCode, match="'QX'"):
        parse_cards("QH QX 10S")


def test_full_shoe_has_416_cards_eight_of_each() -> None:
    shoe = shoe_composition(8)
    assert sum(shoe.values()) == 416
    assert len(shoe) == 52
    assert set(shoe.values()) == {8}
    assert shoe[parse_card("QH")] == 8


def test_default_shoe_is_eight_decks() -> None:
    assert shoe_composition() == shoe_composition(8)


def test_single_deck_shoe() -> None:
    shoe = shoe_composition(1)
    assert sum(shoe.values()) == 52
    assert set(shoe.values()) == {1}


@pytest.mark.parametrize("decks", [0, -1, True, False, 1.5, 8.0, "8", None])
def test_impossible_deck_counts_raise(decks: object) -> None:
    with pytest.raises(InvalidShoe, match="decks"):
        shoe_composition(decks)  # type: ignore[arg-type]


def test_remove_cards_takes_the_drawn_cards() -> None:
    shoe = shoe_composition(8)
    left = remove_cards(shoe, parse_cards("QH QH 10S"))
    assert left[parse_card("QH")] == 6
    assert left[parse_card("10S")] == 7
    assert left[parse_card("AD")] == 8
    assert sum(left.values()) == 413


def test_remove_cards_drops_exhausted_cards() -> None:
    shoe = shoe_composition(1)
    left = remove_cards(shoe, [parse_card("KS")])
    assert parse_card("KS") not in left
    assert len(left) == 51


def test_remove_cards_leaves_the_input_unchanged() -> None:
    shoe = shoe_composition(2)
    before = Counter(shoe)
    remove_cards(shoe, parse_cards("AS AS KD"))
    assert shoe == before


def test_removing_more_copies_than_held_raises_and_leaves_input_unchanged() -> None:
    shoe = shoe_composition(1)
    before = Counter(shoe)
    with pytest.raises(InvalidShoe) as info:
        remove_cards(shoe, parse_cards("AS QH QH"))
    message = str(info.value)
    assert "QH" in message
    assert "2" in message
    assert "1" in message
    assert "AS" not in message
    assert shoe == before


def test_removing_a_card_the_shoe_lacks_raises() -> None:
    shoe = remove_cards(shoe_composition(1), [parse_card("9C")])
    with pytest.raises(InvalidShoe, match=r"9C.*0"):
        remove_cards(shoe, [parse_card("9C")])


POINTS = {"A": 1, "2": 2, "3": 3, "4": 4, "5": 5, "6": 6, "7": 7, "8": 8, "9": 9, "10": 0, "J": 0, "Q": 0, "K": 0}
NUMBERS = {"A": 1, "2": 2, "3": 3, "4": 4, "5": 5, "6": 6, "7": 7, "8": 8, "9": 9, "10": 10, "J": 11, "Q": 12, "K": 13}


@pytest.mark.parametrize("code", RANK_CODES)
def test_rank_points_and_number(code: str) -> None:
    rank = Rank(code)
    assert rank.code == code
    assert rank.points == POINTS[code]
    assert rank.number == NUMBERS[code]
    assert Card(rank, Suit.CLUBS).points == POINTS[code]


def test_suit_symbols() -> None:
    assert [suit.symbol for suit in Suit] == ["♠", "♥", "♦", "♣"]
    assert [suit.code for suit in Suit] == SUIT_CODES


def test_a_cards_index_is_its_place_in_all_cards_and_its_hash() -> None:
    assert [card.index for card in ALL_CARDS] == list(range(52))
    made_anew = Card(Rank.QUEEN, Suit.HEARTS)  # not the parsed card object, an equal one
    parsed = Card.parse("QH")
    assert made_anew == parsed and made_anew is not parsed
    assert made_anew.index == parsed.index == ALL_CARDS.index(parsed)
    assert hash(made_anew) == hash(parsed)
    assert {made_anew: 1}[parsed] == 1
    assert len({*ALL_CARDS, *(Card(card.rank, card.suit) for card in ALL_CARDS)}) == 52
