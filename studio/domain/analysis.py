"""The exact value of every bet for a given shoe: probability of each result, expected value, RTP and house edge.

Expected values are per unit staked, exact fractions, computed from the exact distributions of `studio.domain.odds`
and the table's pay table (commission included, before any rounding to minor units). RTP = 1 + EV; house edge = -EV.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from studio.domain.cards import Card
from studio.domain.odds import DealClass, PairClass, deal_distribution, pair_distribution
from studio.domain.paytable import BetType, DealFacts, PayTable, Resolution, Verdict
from studio.domain.rules import Winner

# Bets decided by the first two cards of each hand only; every other bet is decided by the totals.
PAIR_BETS = frozenset({BetType.PLAYER_PAIR, BetType.BANKER_PAIR, BetType.EITHER_PAIR, BetType.PERFECT_PAIR})


@dataclass(frozen=True, slots=True)
class BetValue:
    bet: BetType
    ev: Fraction  # expected gain per unit staked
    win: Fraction  # probability that the bet wins
    push: Fraction  # probability that the stake comes back

    @property
    def rtp(self) -> Fraction:
        return 1 + self.ev

    @property
    def house_edge(self) -> Fraction:
        return -self.ev


@dataclass(frozen=True, slots=True)
class ShoeAnalysis:
    cards_remaining: int
    banker: Fraction
    player: Fraction
    tie: Fraction
    bets: dict[BetType, BetValue]


def _gain(resolution: Resolution) -> Fraction:
    if resolution.verdict is Verdict.WIN:
        return resolution.pays * (1 - resolution.commission)
    if resolution.verdict is Verdict.LOSE:
        return Fraction(-1)
    return Fraction(0)


def _deal_facts(deal: DealClass) -> DealFacts:
    return DealFacts(
        player_total=deal.player_total,
        banker_total=deal.banker_total,
        player_natural=deal.player_natural,
        banker_natural=deal.banker_natural,
        player_card_count=deal.player_cards,
        banker_card_count=deal.banker_cards,
        player_pair=False,
        banker_pair=False,
        player_perfect_pair=False,
        banker_perfect_pair=False,
    )


def _pair_facts(pairs: PairClass) -> DealFacts:
    # Pair bets read only the pair fields; the totals here are placeholders that no pair bet looks at.
    return DealFacts(0, 0, False, False, 2, 2, pairs.player_pair, pairs.banker_pair, pairs.player_perfect_pair,
                     pairs.banker_perfect_pair)  # fmt: skip


def analyse(shoe: Counter[Card], pay_table: PayTable) -> ShoeAnalysis:
    """Exact analysis of every bet of `pay_table` for the next round dealt from `shoe`."""
    deals = deal_distribution(shoe)
    pairs = pair_distribution(shoe)
    deal_facts = [(_deal_facts(key), weight) for key, weight in deals.weights.items()]
    pair_facts = [(_pair_facts(key), weight) for key, weight in pairs.weights.items()]
    bets: dict[BetType, BetValue] = {}
    for bet in BetType:
        classes, denominator = (pair_facts, pairs.denominator) if bet in PAIR_BETS else (deal_facts, deals.denominator)
        # Sum integer weights per distinct resolution first: a handful of exact fractions instead of one per class.
        by_resolution: Counter[Resolution] = Counter()
        for facts, weight in classes:
            by_resolution[pay_table.resolve(bet, facts)] += weight
        gain = sum((weight * _gain(resolution) for resolution, weight in by_resolution.items()), Fraction(0))
        win = sum(w for r, w in by_resolution.items() if r.verdict is Verdict.WIN)
        push = sum(w for r, w in by_resolution.items() if r.verdict is Verdict.PUSH)
        bets[bet] = BetValue(bet, gain / denominator, Fraction(win, denominator), Fraction(push, denominator))
    by_winner: Counter[Winner] = Counter()
    for facts, weight in deal_facts:
        by_winner[facts.winner] += weight
    return ShoeAnalysis(
        cards_remaining=sum(shoe.values()),
        banker=Fraction(by_winner[Winner.BANKER], deals.denominator),
        player=Fraction(by_winner[Winner.PLAYER], deals.denominator),
        tie=Fraction(by_winner[Winner.TIE], deals.denominator),
        bets=bets,
    )


def as_json(decks: int, analysis: ShoeAnalysis, pay_table: str) -> dict[str, Any]:
    """The analysis as `studio odds --json` prints it (DESIGN.md §6), and the live shoe figures serve it: floats for
    reading, the exact fractions beside them."""
    return {
        "decks": decks,
        "cards_remaining": analysis.cards_remaining,
        "pay_table": pay_table,
        "probabilities": {
            "banker": float(analysis.banker),
            "player": float(analysis.player),
            "tie": float(analysis.tie),
        },
        "exact_probabilities": {
            "banker": str(analysis.banker),
            "player": str(analysis.player),
            "tie": str(analysis.tie),
        },
        "bets": {
            bet.value: {
                "rtp": float(value.rtp),
                "house_edge": float(value.house_edge),
                "ev": str(value.ev),
                "win_probability": float(value.win),
                "push_probability": float(value.push),
            }
            for bet, value in analysis.bets.items()
        },
    }
