"""The rules of punto banco: point totals, naturals, the third-card rules and the outcome of a deal.

Rules held here (seeds 000-004, DESIGN.md §5):
- A = 1, 2-9 face value, 10/J/Q/K = 0; a hand's total is the sum of its points mod 10.
- Dealing order: 1st and 3rd cards to Player, 2nd and 4th to Banker.
- A two-card 8 or 9 on either side is a natural: both hands stand.
- Player draws on 0-5 and stands on 6-7.
- If the Player stood, the Banker draws on 0-5 and stands on 6-7. If the Player drew, the Banker acts on its total and
  the value of the Player's third card: 0-2 draw; 3 draws unless it is 8; 4 draws on 2-7; 5 draws on 4-7; 6 draws on
  6-7; 7 stands.
- No hand ever holds more than three cards. Equal totals are a tie.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass

from studio.domain.cards import Card
from studio.domain.errors import InvalidDeal


class Side(enum.Enum):
    PLAYER = "player"
    BANKER = "banker"


class Winner(enum.Enum):
    PLAYER = "player"
    BANKER = "banker"
    TIE = "tie"


# The first four cards of a deal, in order: 1st and 3rd to Player, 2nd and 4th to Banker. Only the third cards depend
# on the totals.
DEALING_ORDER = (Side.PLAYER, Side.BANKER, Side.PLAYER, Side.BANKER)


def total(points: Sequence[int]) -> int:
    return sum(points) % 10


def winner_of(player_total: int, banker_total: int) -> Winner:
    """The higher total wins; equal totals are a tie."""
    if player_total > banker_total:
        return Winner.PLAYER
    if banker_total > player_total:
        return Winner.BANKER
    return Winner.TIE


def hand_total(cards: Sequence[Card]) -> int:
    return total([card.points for card in cards])


def is_natural(cards: Sequence[Card]) -> bool:
    return len(cards) == 2 and hand_total(cards) >= 8


def player_draws(player_total: int) -> bool:
    """Whether a Player's two-card total (no natural on the table) calls for a third card."""
    return player_total <= 5


# For each Banker two-card total 3-6: the values of the Player's third card on which the Banker draws.
_BANKER_DRAWS_ON = {
    3: frozenset({0, 1, 2, 3, 4, 5, 6, 7, 9}),
    4: frozenset({2, 3, 4, 5, 6, 7}),
    5: frozenset({4, 5, 6, 7}),
    6: frozenset({6, 7}),
}


def banker_draws(banker_total: int, player_third: int | None) -> bool:
    """Whether the Banker's two-card total (no natural on the table) calls for a third card.

    `player_third` is the point value of the Player's third card, or None if the Player stood.
    """
    if player_third is None:
        return banker_total <= 5
    if banker_total <= 2:
        return True
    if banker_total >= 7:
        return False
    return player_third in _BANKER_DRAWS_ON[banker_total]


def next_recipient_by_points(player: Sequence[int], banker: Sequence[int]) -> Side | None:
    """Who receives the next card of a partial deal given as point values, or None when the deal is complete.

    Raises `InvalidDeal` if the cards could not have been dealt in this way.
    """
    p, b = len(player), len(banker)
    if p + b < 4:
        if p == b:
            return Side.PLAYER
        if p == b + 1:
            return Side.BANKER
        raise InvalidDeal(f"{p} Player and {b} Banker cards break the dealing order P, B, P, B")
    if p < 2 or b < 2:
        raise InvalidDeal(f"{p} Player and {b} Banker cards break the dealing order P, B, P, B")
    player_two, banker_two = total(player[:2]), total(banker[:2])
    if player_two >= 8 or banker_two >= 8:
        expected: tuple[int, int] = (2, 2)
        nxt = None
    elif player_draws(player_two):
        if p == 2:
            if b != 2:
                raise InvalidDeal("the Banker drew before the Player's third card")
            return Side.PLAYER
        draws = banker_draws(banker_two, player[2])
        expected = (3, 3 if draws else 2)
        nxt = Side.BANKER if draws and b == 2 else None
    else:
        draws = banker_draws(banker_two, None)
        expected = (2, 3 if draws else 2)
        nxt = Side.BANKER if draws and b == 2 else None
    if p > expected[0] or b > expected[1]:
        raise InvalidDeal(f"the rules give Player {expected[0]} and Banker {expected[1]} cards here, not {p} and {b}")
    return nxt


def next_recipient_in_order(dealt: Sequence[tuple[Side, Card]]) -> Side | None:
    """Who receives the next card of a partial deal held in dealing order, each card with the side it went to, where
    each card went to the side due (the table checks each card as it deals it: `next_recipient` checks a whole deal).

    The same rules as `next_recipient_by_points`, read off the cards' places: the first four go P, B, P, B; the fifth
    is the Player's third card if the Player drew. The table asks this for every card it deals."""
    count = len(dealt)
    if count < len(DEALING_ORDER):
        return DEALING_ORDER[count]
    player_two = (dealt[0][1].points + dealt[2][1].points) % 10
    banker_two = (dealt[1][1].points + dealt[3][1].points) % 10
    if player_two >= 8 or banker_two >= 8:
        return None  # a natural: both stand
    if player_draws(player_two):
        if count == 4:
            return Side.PLAYER
        return Side.BANKER if count == 5 and banker_draws(banker_two, dealt[4][1].points) else None
    return Side.BANKER if count == 4 and banker_draws(banker_two, None) else None


def next_recipient(player: Sequence[Card], banker: Sequence[Card]) -> Side | None:
    """Who receives the next card (Player, Banker, or None: the deal is complete)."""
    return next_recipient_by_points([c.points for c in player], [c.points for c in banker])


@dataclass(frozen=True, slots=True)
class Outcome:
    """Everything about a finished deal that a bet can depend on."""

    player: tuple[Card, ...]
    banker: tuple[Card, ...]
    player_total: int
    banker_total: int
    winner: Winner
    player_natural: bool
    banker_natural: bool
    player_pair: bool
    banker_pair: bool
    player_perfect_pair: bool
    banker_perfect_pair: bool

    @property
    def natural(self) -> bool:
        return self.player_natural or self.banker_natural

    @property
    def margin(self) -> int:
        """By how many points the winner won (0 on a tie)."""
        return abs(self.player_total - self.banker_total)


def outcome(player: Sequence[Card], banker: Sequence[Card]) -> Outcome:
    """The outcome of a complete deal; raises `InvalidDeal` if the deal is impossible or unfinished."""
    pending = next_recipient(player, banker)
    if pending is not None:
        raise InvalidDeal(f"the deal is not finished: the next card goes to the {pending.value}")
    return _outcome(tuple(player), tuple(banker))


def outcome_in_order(dealt: Sequence[tuple[Side, Card]]) -> Outcome:
    """`outcome` of a complete deal held in dealing order, each card with the side it went to, where each card went
    to the side due (as `next_recipient_in_order` has it): the table checks each card as it deals it, so nothing is
    checked again here."""
    return _outcome(tuple([card for side, card in dealt if side is Side.PLAYER]),
                    tuple([card for side, card in dealt if side is Side.BANKER]))  # fmt: skip


def _outcome(player: tuple[Card, ...], banker: tuple[Card, ...]) -> Outcome:
    player_total = sum([card.points for card in player]) % 10  # `hand_total`, the hand's points read once
    banker_total = sum([card.points for card in banker]) % 10
    return Outcome(
        player,
        banker,
        player_total,
        banker_total,
        winner_of(player_total, banker_total),
        len(player) == 2 and player_total >= 8,  # `is_natural`
        len(banker) == 2 and banker_total >= 8,
        player[0].rank is player[1].rank,  # a pair
        banker[0].rank is banker[1].rank,
        player[0].index == player[1].index,  # a perfect pair: the same rank and suit
        banker[0].index == banker[1].index,
    )


def deal(cards: Sequence[Card]) -> tuple[list[Card], list[Card]]:
    """Deal `cards` (in draw order) by the rules; return the two hands. Extra cards are an error."""
    player: list[Card] = []
    banker: list[Card] = []
    for index, card in enumerate(cards):
        side = next_recipient(player, banker)
        if side is None:
            raise InvalidDeal(f"card {index + 1} ({card.code}) is one more than the deal takes")
        (player if side is Side.PLAYER else banker).append(card)
    return player, banker
