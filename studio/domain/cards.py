"""Cards, their canonical codes, and the composition of a shoe.

Canonical code: rank `A 2 3 4 5 6 7 8 9 10 J Q K` followed by suit `S H D C` (`QH`, `10S`, `AD`). Parsing also
accepts `T` for ten, lower case, surrounding blanks, and the suit symbols ♠ ♥ ♦ ♣ (and their outline forms).
Output is always canonical.
"""

from __future__ import annotations

import enum
import re
from collections import Counter
from dataclasses import dataclass, field

from studio.domain.errors import InvalidCardCode, InvalidShoe


class Rank(enum.Enum):
    """A card rank; `value` is its baccarat point value (tens and faces count zero)."""

    ACE = "A"
    TWO = "2"
    THREE = "3"
    FOUR = "4"
    FIVE = "5"
    SIX = "6"
    SEVEN = "7"
    EIGHT = "8"
    NINE = "9"
    TEN = "10"
    JACK = "J"
    QUEEN = "Q"
    KING = "K"

    @property
    def code(self) -> str:
        return self.value

    @property
    def points(self) -> int:
        return _POINTS[self]

    @property
    def number(self) -> int:
        """1 for the ace up to 13 for the king, as card scanners number ranks."""
        return _ORDER.index(self) + 1


class Suit(enum.Enum):
    SPADES = "S"
    HEARTS = "H"
    DIAMONDS = "D"
    CLUBS = "C"

    @property
    def code(self) -> str:
        return self.value

    @property
    def symbol(self) -> str:
        return _SYMBOLS[self]


_ORDER = list(Rank)
_RANK_PLACE = {rank: place for place, rank in enumerate(Rank)}
_SUIT_PLACE = {suit: place for place, suit in enumerate(Suit)}
_POINTS = {rank: (index + 1 if index < 9 else 0) for index, rank in enumerate(_ORDER)}
_SYMBOLS = {Suit.SPADES: "♠", Suit.HEARTS: "♥", Suit.DIAMONDS: "♦", Suit.CLUBS: "♣"}

_RANK_BY_TEXT = {rank.code: rank for rank in Rank} | {"T": Rank.TEN}
_SUIT_BY_TEXT = {suit.code: suit for suit in Suit} | {
    "♠": Suit.SPADES,
    "♤": Suit.SPADES,
    "♥": Suit.HEARTS,
    "♡": Suit.HEARTS,
    "♦": Suit.DIAMONDS,
    "♢": Suit.DIAMONDS,
    "♣": Suit.CLUBS,
    "♧": Suit.CLUBS,
}


@dataclass(frozen=True, slots=True, order=False)
class Card:
    rank: Rank
    suit: Suit
    # Derived once at creation: the rules read them for every card of every deal.
    code: str = field(init=False, repr=False, compare=False)
    points: int = field(init=False, repr=False, compare=False)
    index: int = field(init=False, repr=False, compare=False)  # its place in `ALL_CARDS`: suit by suit, ace to king

    def __post_init__(self) -> None:
        object.__setattr__(self, "code", self.rank.code + self.suit.code)
        object.__setattr__(self, "points", self.rank.points)
        object.__setattr__(self, "index", _SUIT_PLACE[self.suit] * len(_ORDER) + _RANK_PLACE[self.rank])

    def __hash__(self) -> int:
        # Equal cards have the same index. The generated hash of (rank, suit) costs two Python-level enum hashes, and
        # the engine looks cards up for every card dealt.
        return self.index

    def __str__(self) -> str:
        return self.code

    @classmethod
    def parse(cls, text: str) -> Card:
        """Read one card code; raise `InvalidCardCode` naming the input if it is not one."""
        return _parse(text)


def _parse(text: str) -> Card:
    if not isinstance(text, str):
        raise InvalidCardCode(repr(text), "a card code is text such as QH, 10S or AD")
    card = _BY_CODE.get(text)  # canonical codes, as the log stores them, need no cleaning
    if card is not None:
        return card
    cleaned = text.strip().upper()
    if len(cleaned) < 2:
        raise InvalidCardCode(text, "a card code is a rank (A 2-10 J Q K, or T) followed by a suit (S H D C)")
    rank_text, suit_text = cleaned[:-1], cleaned[-1]
    suit = _SUIT_BY_TEXT.get(suit_text)
    if suit is None:
        raise InvalidCardCode(text, f"unknown suit {suit_text!r} (expected S, H, D or C)")
    rank = _RANK_BY_TEXT.get(rank_text)
    if rank is None:
        raise InvalidCardCode(text, f"unknown rank {rank_text!r} (expected A, 2-10, T, J, Q or K)")
    return _CARDS[(rank, suit)]


_CARDS = {(rank, suit): Card(rank, suit) for suit in Suit for rank in Rank}
ALL_CARDS: tuple[Card, ...] = tuple(_CARDS.values())
"""The 52 cards of one deck, suit by suit, ace to king."""
_BY_CODE = {card.code: card for card in ALL_CARDS}

DEFAULT_DECKS = 8


def parse_card(text: str) -> Card:
    return _parse(text)


_SEPARATORS = re.compile(r"[\s,;]+")


def parse_cards(text: str) -> list[Card]:
    """Read card codes separated by white space (commas and semicolons are tolerated)."""
    return [_parse(token) for token in _SEPARATORS.split(text) if token]


def shoe_composition(decks: int = DEFAULT_DECKS) -> Counter[Card]:
    """Each of the 52 cards `decks` times: 416 cards for the default 8 decks."""
    if isinstance(decks, bool) or not isinstance(decks, int) or decks < 1:
        raise InvalidShoe(f"a shoe holds a whole, positive number of decks, not {decks!r}")
    return Counter({card: decks for card in ALL_CARDS})


def remove_cards(shoe: Counter[Card], removed: list[Card]) -> Counter[Card]:
    """The shoe left after `removed` were drawn; raise `InvalidShoe` if a card is removed more often than it is held."""
    left = Counter(shoe)
    for card, count in Counter(removed).items():
        if count > left[card]:
            raise InvalidShoe(f"cannot remove {count} × {card.code}: the shoe holds only {left[card]}")
        left[card] -= count
    return +left
