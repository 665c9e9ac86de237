"""Tests of the exact odds kernel: known 8-deck figures, and a cross-check against brute-force enumeration."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Hashable
from fractions import Fraction
from typing import TypeVar

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from studio.domain.cards import ALL_CARDS, Card, parse_cards, remove_cards, shoe_composition
from studio.domain.errors import InvalidShoe
from studio.domain.odds import DealClass, Distribution, PairClass, deal_distribution, pair_distribution
from studio.domain.rules import Side, Winner, next_recipient_by_points, total

EIGHT_DECK_DENOMINATOR = 416 * 415 * 414 * 413 * 412 * 411


# --- Brute force: walk every ordered deal card by card, with the rules module deciding who gets the next card. ------


def brute_force_deals(shoe: Counter[Card]) -> dict[DealClass, Fraction] | None:
    """P(class | the deal can be completed) by plain recursion over the point values left in the shoe.

    None if no deal can be completed (a tiny shoe). A branch that needs a card the shoe no longer holds dies out.
    """
    counts = Counter({value: 0 for value in range(10)})
    for card, n in shoe.items():
        counts[card.points] += n
    found: dict[DealClass, Fraction] = {}

    def walk(player: list[int], banker: list[int], left: Counter[int], chance: Fraction) -> None:
        side = next_recipient_by_points(player, banker)
        if side is None:
            cls = DealClass(
                player_total=total(player),
                banker_total=total(banker),
                player_natural=len(player) == 2 and total(player) >= 8,
                banker_natural=len(banker) == 2 and total(banker) >= 8,
                player_cards=len(player),
                banker_cards=len(banker),
            )
            found[cls] = found.get(cls, Fraction(0)) + chance
            return
        remaining = sum(left.values())
        for value, n in left.items():
            if n == 0:
                continue
            left[value] -= 1
            hand = player if side is Side.PLAYER else banker
            hand.append(value)
            walk(player, banker, left, chance * Fraction(n, remaining))
            hand.pop()
            left[value] += 1

    walk([], [], counts, Fraction(1))
    completed = sum(found.values(), Fraction(0))
    if not completed:
        return None
    return {cls: p / completed for cls, p in found.items()}


def brute_force_pairs(shoe: Counter[Card]) -> dict[PairClass, Fraction]:
    """P(class) over the first four cards P, B, P, B, by recursion over the exact cards left in the shoe."""
    found: dict[PairClass, Fraction] = {}

    def walk(drawn: list[Card], left: Counter[Card], chance: Fraction) -> None:
        if len(drawn) == 4:
            p1, b1, p2, b2 = drawn
            cls = PairClass(
                player_pair=p1.rank == p2.rank,
                banker_pair=b1.rank == b2.rank,
                player_perfect_pair=p1 == p2,
                banker_perfect_pair=b1 == b2,
            )
            found[cls] = found.get(cls, Fraction(0)) + chance
            return
        remaining = sum(left.values())
        for card, n in list(left.items()):
            if n == 0:
                continue
            left[card] -= 1
            drawn.append(card)
            walk(drawn, left, chance * Fraction(n, remaining))
            drawn.pop()
            left[card] += 1

    walk([], Counter(shoe), Fraction(1))
    return found


K = TypeVar("K", bound=Hashable)


def as_probabilities(distribution: Distribution[K]) -> dict[K, Fraction]:
    return {key: distribution.probability(key) for key in distribution.weights}


def random_shoe(rng: random.Random, size: int, decks: int = 8) -> Counter[Card]:
    return Counter(rng.sample(list(shoe_composition(decks).elements()), size))


# --- Known figures ---------------------------------------------------------------------------------------------------


def test_eight_decks_match_the_published_exact_counts() -> None:
    deals = deal_distribution(shoe_composition(8))
    assert deals.denominator == EIGHT_DECK_DENOMINATOR
    by_winner = {winner: 0 for winner in Winner}
    for cls, weight in deals.weights.items():
        by_winner[cls.winner] += weight
    assert by_winner[Winner.BANKER] == 2_292_252_566_437_888
    assert by_winner[Winner.PLAYER] == 2_230_518_282_592_256
    assert by_winner[Winner.TIE] == 475_627_426_473_216
    assert deals.probability_where(lambda d: d.winner is Winner.TIE) == Fraction(
        475_627_426_473_216, EIGHT_DECK_DENOMINATOR
    )


def test_eight_decks_pair_probabilities() -> None:
    pairs = pair_distribution(shoe_composition(8))
    assert pairs.denominator == 416 * 415 * 414 * 413
    assert pairs.probability_where(lambda c: c.player_pair) == Fraction(31, 415)
    assert pairs.probability_where(lambda c: c.banker_pair) == Fraction(31, 415)
    assert pairs.probability_where(lambda c: c.player_perfect_pair) == Fraction(7, 415)
    assert pairs.probability_where(lambda c: c.banker_perfect_pair) == Fraction(7, 415)
    assert all(c.player_pair for c in pairs.weights if c.player_perfect_pair)
    assert all(c.banker_pair for c in pairs.weights if c.banker_perfect_pair)


@pytest.mark.parametrize("decks", [1, 6, 8])
def test_full_shoes_sum_to_one(decks: int) -> None:
    shoe = shoe_composition(decks)
    deals, pairs = deal_distribution(shoe), pair_distribution(shoe)
    size = 52 * decks
    assert deals.denominator == size * (size - 1) * (size - 2) * (size - 3) * (size - 4) * (size - 5)
    assert sum(as_probabilities(deals).values()) == 1
    assert sum(as_probabilities(pairs).values()) == 1
    assert all(weight > 0 for weight in deals.weights.values())
    # A full shoe is symmetric between the two hands for the pair bets.
    assert pairs.probability_where(lambda c: c.player_pair) == pairs.probability_where(lambda c: c.banker_pair)


def test_classes_are_consistent_with_the_rules() -> None:
    for cls in deal_distribution(shoe_composition(8)).weights:
        assert cls.player_cards in (2, 3) and cls.banker_cards in (2, 3)
        if cls.player_natural or cls.banker_natural:
            assert (cls.player_cards, cls.banker_cards) == (2, 2)
        assert not cls.player_natural or cls.player_total >= 8
        assert not cls.banker_natural or cls.banker_total >= 8


def test_probability_of_an_impossible_class_is_zero() -> None:
    deals = deal_distribution(shoe_composition(8))
    assert deals.probability(DealClass(9, 9, True, True, 3, 3)) == 0


# --- Cross-check against brute force ---------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(6))
def test_deal_distribution_matches_brute_force_on_small_random_shoes(seed: int) -> None:
    rng = random.Random(seed)
    shoe = random_shoe(rng, rng.randint(8, 20), decks=rng.choice([1, 8]))
    assert as_probabilities(deal_distribution(shoe)) == brute_force_deals(shoe)


@pytest.mark.parametrize("seed", range(6))
def test_pair_distribution_matches_brute_force_on_small_random_shoes(seed: int) -> None:
    rng = random.Random(100 + seed)
    shoe = random_shoe(rng, rng.randint(8, 20), decks=rng.choice([1, 2, 8]))
    assert as_probabilities(pair_distribution(shoe)) == brute_force_pairs(shoe)


@pytest.mark.parametrize(
    "codes",
    [
        "AS AS AS AS AS AS AS AS AS AS",  # one card only: every hand is a perfect pair
        "KS KH QD JC 10S KS 5H 5H 9D",  # lopsided: mostly zeros, some duplicated cards
        "AS 2H 3D 4C 5S 6H",  # exactly six cards
        "KS QH 5D 4C 3S",  # five cards: deals that need a sixth card have weight zero
        "KS KH KD KC 10S",  # five zeros: the Banker always needs a sixth card, no deal completes
        "9S 8H 9D 8C",  # four cards, naturals only
        "KS QH 5D 4C",  # four cards: deals that need a fifth card have weight zero
        "KS KH KD KC",  # four zeros: the Player always needs a fifth card, no deal completes
    ],
)
def test_tiny_and_lopsided_shoes_match_brute_force(codes: str) -> None:
    shoe = Counter(parse_cards(codes))
    expected = brute_force_deals(shoe)
    if expected is None:
        with pytest.raises(InvalidShoe, match="no deal can be completed"):
            deal_distribution(shoe)
    else:
        # With fewer than six cards both sides condition on the deal being completed.
        assert as_probabilities(deal_distribution(shoe)) == expected
    assert as_probabilities(pair_distribution(shoe)) == brute_force_pairs(shoe)


def test_five_card_shoe_weights_only_completed_deals() -> None:
    deals = deal_distribution(Counter(parse_cards("KS QH 5D 4C 3S")))
    assert deals.denominator == sum(deals.weights.values())
    assert all(cls.player_cards + cls.banker_cards <= 5 for cls in deals.weights)


# --- Properties ------------------------------------------------------------------------------------------------------


@settings(max_examples=25, deadline=None)
@given(st.lists(st.sampled_from(ALL_CARDS), max_size=300))
def test_depleted_shoes_sum_to_exactly_one(wanted: list[Card]) -> None:
    # Remove up to 300 cards; a card asked for more often than the shoe holds it is simply not removed again.
    held = Counter(shoe_composition(8))
    removed = []
    for card in wanted:
        if held[card]:
            held[card] -= 1
            removed.append(card)
    shoe = remove_cards(shoe_composition(8), removed)
    deals, pairs = deal_distribution(shoe), pair_distribution(shoe)
    assert sum(as_probabilities(deals).values()) == 1
    assert sum(as_probabilities(pairs).values()) == 1
    assert sum(deals.weights.values()) == deals.denominator
    size = 416 - len(removed)
    assert deals.denominator <= size * (size - 1) * (size - 2) * (size - 3) * (size - 4) * (size - 5)
    assert pairs.denominator == size * (size - 1) * (size - 2) * (size - 3)


# --- Invalid shoes ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("codes", ["", "AS", "AS KH", "AS KH 9D"])
def test_fewer_than_four_cards_is_an_invalid_shoe(codes: str) -> None:
    shoe = Counter(parse_cards(codes))
    with pytest.raises(InvalidShoe, match="at least 4 cards"):
        deal_distribution(shoe)
    with pytest.raises(InvalidShoe, match="at least 4 cards"):
        pair_distribution(shoe)


def test_negative_counts_are_an_invalid_shoe() -> None:
    shoe = shoe_composition(1)
    shoe[ALL_CARDS[0]] = -1
    with pytest.raises(InvalidShoe):
        deal_distribution(shoe)


def test_distribution_checks_its_denominator() -> None:
    with pytest.raises(ValueError):
        Distribution({"a": 1, "b": 2}, 4)
    with pytest.raises(ValueError):
        Distribution({"a": 0, "b": 2}, 2)
