"""The rules of punto banco (DESIGN.md §5): totals, naturals, third-card rules, dealing order and outcomes."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from studio.domain.cards import ALL_CARDS, Card, parse_cards
from studio.domain.errors import InvalidDeal
from studio.domain.rules import (
    Side,
    Winner,
    banker_draws,
    deal,
    hand_total,
    is_natural,
    next_recipient,
    next_recipient_by_points,
    next_recipient_in_order,
    outcome,
    outcome_in_order,
    player_draws,
    total,
)


def cards(text: str) -> list[Card]:
    return parse_cards(text)


# ---------------------------------------------------------------------------------------------------------------------
# The Banker's tableau when the Player drew a third card, written out from the rule:
# 0-2 draw; 3 draws unless the Player's third card is 8; 4 draws on 2-7; 5 on 4-7; 6 on 6-7; 7 stands.
# Rows: Banker two-card total. Columns: point value of the Player's third card, 0 to 9.

TABLEAU = """
          0 1 2 3 4 5 6 7 8 9
    0:    D D D D D D D D D D
    1:    D D D D D D D D D D
    2:    D D D D D D D D D D
    3:    D D D D D D D D S D
    4:    S S D D D D D D S S
    5:    S S S S D D D D S S
    6:    S S S S S S D D S S
    7:    S S S S S S S S S S
"""


def _tableau() -> dict[tuple[int, int], bool]:
    grid: dict[tuple[int, int], bool] = {}
    for line in TABLEAU.strip().splitlines()[1:]:
        label, marks = line.split(":")
        for third, mark in enumerate(marks.split()):
            assert mark in {"D", "S"}
            grid[int(label), third] = mark == "D"
    return grid


TABLEAU_CELLS = _tableau()


def test_tableau_has_80_cells() -> None:
    assert len(TABLEAU_CELLS) == 80
    # A spot check of the grid itself against the rule text.
    assert sum(TABLEAU_CELLS.values()) == 10 * 3 + 9 + 6 + 4 + 2


@pytest.mark.parametrize(("banker_two", "player_third"), sorted(TABLEAU_CELLS))
def test_banker_draws_when_player_drew(banker_two: int, player_third: int) -> None:
    assert banker_draws(banker_two, player_third) is TABLEAU_CELLS[banker_two, player_third]


@pytest.mark.parametrize(("banker_two", "draws"), [(0, True), (1, True), (2, True), (3, True), (4, True), (5, True),
                                                    (6, False), (7, False)])  # fmt: skip
def test_banker_draws_when_player_stood(banker_two: int, draws: bool) -> None:
    assert banker_draws(banker_two, None) is draws


@pytest.mark.parametrize(("player_two", "draws"), [(0, True), (1, True), (2, True), (3, True), (4, True), (5, True),
                                                    (6, False), (7, False)])  # fmt: skip
def test_player_draws(player_two: int, draws: bool) -> None:
    assert player_draws(player_two) is draws


@pytest.mark.parametrize(("hand", "expected"), [("AS 2H", 3), ("9S 9H", 8), ("KS QH", 0), ("5S 5H 5D", 5),
                                                ("10S 9H", 9), ("7C 8D 9H", 4), ("AS", 1)])  # fmt: skip
def test_hand_total(hand: str, expected: int) -> None:
    assert hand_total(cards(hand)) == expected


def test_total_of_points() -> None:
    assert total([9, 9, 9]) == 7
    assert total([]) == 0


def test_naturals() -> None:
    assert is_natural(cards("9S KH"))
    assert is_natural(cards("4S 4H"))
    assert is_natural(cards("AS 7H"))
    assert not is_natural(cards("3S 4H"))
    assert not is_natural(cards("4S 4H KD"))  # a three-card 8 is no natural
    assert not is_natural(cards("9S"))


# ---------------------------------------------------------------------------------------------------------------------
# next_recipient over partial deals


@pytest.mark.parametrize(
    ("player", "banker", "expected"),
    [
        ("", "", Side.PLAYER),
        ("2S", "", Side.BANKER),
        ("2S", "3H", Side.PLAYER),
        ("2S 2D", "3H", Side.BANKER),
        # four cards: Player 4 draws
        ("2S 2D", "3H 3C", Side.PLAYER),
        # Player drew a 5; Banker 6 stands on a 5
        ("2S 2D 5C", "3H 3C", None),
        # Player drew a 6; Banker 6 draws on a 6
        ("2S 2D 6C", "3H 3C", Side.BANKER),
        ("2S 2D 6C", "3H 3C AS", None),
        # Player drew an 8; Banker 3 stands on an 8
        ("2S 2D 8C", "AH 2C", None),
        # Player drew a 9; Banker 3 draws
        ("2S 2D 9C", "AH 2C", Side.BANKER),
        # Player stands on 6 and 7; Banker 5 draws, 6 stands
        ("3S 3D", "2H 3C", Side.BANKER),
        ("3S 3D", "2H 3C KS", None),
        ("3S 4D", "3H 3C", None),
        # naturals: both stand
        ("4S 4D", "AH 2C", None),
        ("AH 2C", "5S 4D", None),
        ("9S KD", "8H QC", None),
        ("KS QD", "JH 8C", None),
    ],
)
def test_next_recipient(player: str, banker: str, expected: Side | None) -> None:
    assert next_recipient(cards(player), cards(banker)) is expected


@pytest.mark.parametrize(
    ("player", "banker"),
    [
        ("", "2S"),  # Banker first
        ("", "2S 3S"),
        ("2S 3S", ""),  # two to Player before the Banker's first
        ("2S 3S 4S", ""),
        ("2S", "3S 4S"),  # Banker's second before Player's second
        ("2S 3S 4S", "5S"),  # Player's third before Banker's second
        ("2S 3S 4S 5S", ""),
        ("2S 2D", "3H 3C 4C"),  # Banker before Player's third card
        ("4S 4D 2C", "AH 2C"),  # a third card with a natural on the table
        ("AH 2C", "5S 4D 3C"),
        ("9S KD 2C", "9H QC 2D"),
        ("2S 2D 5C 3D", "3H 3C"),  # a fourth card
        ("2S 2D 6C", "3H 3C AS 2D"),
        ("3S 4D 2C", "3H 3C"),  # Player stood on 7, yet drew
        ("2S 2D 5C", "3H 3C AS"),  # Banker 6 stands on a 5, yet drew
        ("3S 3D", "3H 3C 2C"),  # Player stood; Banker 6 stands, yet drew
        ("2S 2D 8C", "AH 2C 5D"),  # Banker 3 stands on an 8, yet drew
    ],
)
def test_impossible_partial_deals_raise(player: str, banker: str) -> None:
    with pytest.raises(InvalidDeal):
        next_recipient(cards(player), cards(banker))


def test_next_recipient_by_points_matches_cards() -> None:
    assert next_recipient_by_points([0, 5], [7, 0]) is Side.PLAYER
    assert next_recipient_by_points([0, 5, 7], [6, 0]) is Side.BANKER
    assert next_recipient_by_points([0, 6], [6, 0]) is None
    with pytest.raises(InvalidDeal):
        next_recipient_by_points([0, 6, 1], [6, 0])


# ---------------------------------------------------------------------------------------------------------------------
# outcome of complete deals, worked by hand


def test_outcome_player_natural_wins() -> None:
    result = outcome(cards("9S KD"), cards("8H QC"))
    assert result.winner is Winner.PLAYER
    assert (result.player_total, result.banker_total) == (9, 8)
    assert result.player_natural
    assert result.banker_natural
    assert result.natural
    assert result.margin == 1
    assert not result.player_pair
    assert not result.banker_pair


def test_outcome_banker_three_card_win() -> None:
    # Player 2+2 = 4 draws 6 → 0; Banker 3+3 = 6 draws on a 6: A → 7.
    result = outcome(cards("2S 2D 6C"), cards("3H 3C AS"))
    assert result.winner is Winner.BANKER
    assert (result.player_total, result.banker_total) == (0, 7)
    assert not result.player_natural
    assert not result.banker_natural
    assert not result.natural
    assert result.margin == 7
    assert result.player_pair  # 2S 2D: equal rank
    assert not result.player_perfect_pair
    assert result.banker_pair
    assert not result.banker_perfect_pair
    assert [c.code for c in result.player] == ["2S", "2D", "6C"]
    assert [c.code for c in result.banker] == ["3H", "3C", "AS"]


def test_outcome_tie() -> None:
    # Player 3+3 = 6 stands; Banker K+6 = 6 stands.
    result = outcome(cards("3S 3D"), cards("KH 6C"))
    assert result.winner is Winner.TIE
    assert (result.player_total, result.banker_total) == (6, 6)
    assert result.margin == 0
    assert not result.natural


def test_outcome_banker_natural_against_player_two_cards() -> None:
    # Player 5 would draw, but the Banker's natural 9 stops the deal.
    result = outcome(cards("2S 3D"), cards("4H 5C"))
    assert result.winner is Winner.BANKER
    assert result.banker_natural
    assert not result.player_natural
    assert result.natural
    assert result.margin == 4


def test_outcome_tens_are_a_pair_ten_and_king_are_not() -> None:
    # Player 10+10 = 0 draws 7 → 7; Banker 10+K = 0 draws → 9.
    result = outcome(cards("10H 10S 7D"), cards("10C KH 9S"))
    assert result.player_pair
    assert not result.player_perfect_pair
    assert not result.banker_pair
    assert not result.banker_perfect_pair
    assert result.winner is Winner.BANKER
    assert (result.player_total, result.banker_total) == (7, 9)
    assert result.margin == 2


def test_outcome_perfect_pairs_on_both_hands() -> None:
    # Player 4H 4H = 8 natural; Banker QS QS = 0.
    result = outcome(cards("4H 4H"), cards("QS QS"))
    assert result.player_perfect_pair
    assert result.banker_perfect_pair
    assert result.player_pair
    assert result.banker_pair
    assert result.winner is Winner.PLAYER
    assert result.margin == 8


def test_outcome_pair_only_counts_the_first_two_cards() -> None:
    # Player 2S 3S = 5 draws 2D → 7 (2S and 2D are not the first two cards); Banker 5H 2H = 7 stands. Tie 7-7.
    result = outcome(cards("2S 3S 2D"), cards("5H 2H"))
    assert not result.player_pair
    assert result.winner is Winner.TIE
    assert result.player_total == 7


def test_outcome_player_stands_banker_draws() -> None:
    # Player 3+4 = 7 stands; Banker A+4 = 5 draws: 4 → 9.
    result = outcome(cards("3S 4D"), cards("AH 4C 4S"))
    assert result.winner is Winner.BANKER
    assert (result.player_total, result.banker_total) == (7, 9)
    assert result.margin == 2


@pytest.mark.parametrize(
    ("player", "banker"),
    [("", ""), ("2S", "3S"), ("2S 2D", "3H 3C"), ("2S 2D 6C", "3H 3C"), ("3S 3D", "2H 3C")],
)
def test_outcome_of_unfinished_deal_raises(player: str, banker: str) -> None:
    with pytest.raises(InvalidDeal, match="not finished"):
        outcome(cards(player), cards(banker))


def test_outcome_of_impossible_deal_raises() -> None:
    with pytest.raises(InvalidDeal):
        outcome(cards("4S 4D 2C"), cards("AH 2C"))


# ---------------------------------------------------------------------------------------------------------------------
# deal


def test_deal_splits_in_dealing_order() -> None:
    player, banker = deal(cards("2S 3H 2D 3C 6C AS"))
    assert [c.code for c in player] == ["2S", "2D", "6C"]
    assert [c.code for c in banker] == ["3H", "3C", "AS"]


def test_deal_natural_takes_four_cards() -> None:
    player, banker = deal(cards("9S 8H KD QC"))
    assert [c.code for c in player] == ["9S", "KD"]
    assert [c.code for c in banker] == ["8H", "QC"]


def test_deal_player_stands_banker_draws() -> None:
    player, banker = deal(cards("3S AH 4D 4C 4S"))
    assert [c.code for c in player] == ["3S", "4D"]
    assert [c.code for c in banker] == ["AH", "4C", "4S"]


def test_deal_of_a_partial_sequence_gives_partial_hands() -> None:
    player, banker = deal(cards("2S 3H 2D"))
    assert [c.code for c in player] == ["2S", "2D"]
    assert [c.code for c in banker] == ["3H"]


def test_deal_with_a_card_too_many_raises_naming_it() -> None:
    with pytest.raises(InvalidDeal, match=r"card 5 \(JD\)"):
        deal(cards("9S 8H KD QC JD"))


# ---------------------------------------------------------------------------------------------------------------------
# Property: any six cards, dealt by the rules, give a consistent complete deal.

_POINTS = {"A": 1, "2": 2, "3": 3, "4": 4, "5": 5, "6": 6, "7": 7, "8": 8, "9": 9, "10": 0, "J": 0, "Q": 0, "K": 0}


def _points(card: Card) -> int:
    return _POINTS[card.code[:-1]]


def _cards_taken(six: list[Card]) -> int:
    """How many of the cards the rules take, worked out from the rule text and the tableau above."""
    p_two = (_points(six[0]) + _points(six[2])) % 10
    b_two = (_points(six[1]) + _points(six[3])) % 10
    if p_two >= 8 or b_two >= 8:
        return 4
    if p_two <= 5:
        return 6 if TABLEAU_CELLS[b_two, _points(six[4])] else 5
    return 5 if b_two <= 5 else 4


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(ALL_CARDS), min_size=6, max_size=6))
def test_any_six_cards_deal_a_consistent_round(six: list[Card]) -> None:
    taken = _cards_taken(six)
    player, banker = deal(six[:taken])
    assert next_recipient(player, banker) is None
    assert 2 <= len(player) <= 3
    assert 2 <= len(banker) <= 3
    assert len(player) + len(banker) == taken
    # dealing order: P, B, P, B, then the Player's third card, then the Banker's
    assert [player[0], banker[0], player[1], banker[1], *player[2:], *banker[2:]] == six[:taken]
    p_two, b_two = hand_total(player[:2]), hand_total(banker[:2])
    if p_two >= 8 or b_two >= 8:
        assert (len(player), len(banker)) == (2, 2)
    else:
        assert (len(player) == 3) is player_draws(p_two)
        third = player[2].points if len(player) == 3 else None
        assert (len(banker) == 3) is banker_draws(b_two, third)
    if taken < 6:
        with pytest.raises(InvalidDeal, match="one more than the deal takes"):
            deal(six[: taken + 1])
    result = outcome(player, banker)
    assert result.player_total == sum(_points(c) for c in player) % 10
    assert result.banker_total == sum(_points(c) for c in banker) % 10


# ---------------------------------------------------------------------------------------------------------------------
# The table's shortcuts for a deal it checked card by card (`next_recipient_in_order`, `outcome_in_order`) agree with
# the whole checks on every deal.


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(ALL_CARDS), min_size=6, max_size=6))
def test_in_order_shortcuts_agree_with_the_whole_checks(six: list[Card]) -> None:
    dealt: list[tuple[Side, Card]] = []
    player: list[Card] = []
    banker: list[Card] = []
    for card in six:
        expected = next_recipient(player, banker)
        assert next_recipient_in_order(dealt) is expected
        if expected is None:
            break
        dealt.append((expected, card))
        (player if expected is Side.PLAYER else banker).append(card)
    else:
        assert next_recipient_in_order(dealt) is next_recipient(player, banker) is None
    assert outcome_in_order(dealt) == outcome(player, banker)


def test_in_order_shortcuts_on_a_player_draw_and_a_banker_stand() -> None:
    # Player 2 + 3 = 5 draws an 8; Banker 3 stands on a Player's third card of 8.
    dealt = [(Side.PLAYER, Card.parse("2S")), (Side.BANKER, Card.parse("AH")), (Side.PLAYER, Card.parse("3D")),
             (Side.BANKER, Card.parse("2C"))]  # fmt: skip
    assert next_recipient_in_order(dealt) is Side.PLAYER
    dealt.append((Side.PLAYER, Card.parse("8H")))
    assert next_recipient_in_order(dealt) is None
    result = outcome_in_order(dealt)
    assert (result.player_total, result.banker_total, result.winner) == (3, 3, Winner.TIE)
    assert [card.code for card in result.player] == ["2S", "3D", "8H"]
    assert [card.code for card in result.banker] == ["AH", "2C"]
