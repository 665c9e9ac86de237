"""Player as banker (seed 001): one player holds the bank against the others at a table in that mode.

Rules held here:
- The bank pays every winning bet and takes every losing stake: for each bet, the bank gains its stake less what
  the bet returns (a push or a refund returns the stake: nothing changes hands).
- The house takes a commission of 1.5% of the total staked against the bank, from the bank, each round.
- To hold the bank a player needs a balance of at least 9 × the table maximum plus 1.5% of that, so that the bank can
  cover a Tie paid 8:1 on a maximum stake, and its commission.
- The banker approves each round before bets are taken (or sets auto-approve).
- The bank must always cover what is bet against it: a bet is accepted only while the bank's balance covers the
  worst outcome of every bet accepted against it this round, with the house's commission (`BankCover`). A player
  holds one bank at a time and does not bet anywhere while holding it, so nothing else draws on the bank's balance.
- Credit points (seed 001, "Points de Crédit"): a player earns one point per whole major unit (a dollar, `unit` minor
  units) of each bet's stake when the bet is settled by a result it won or lost; the banker is deducted one point per
  whole major unit of each bet so settled against the bank. A bet that pushed or was refunded (undone, voided, refunded
  on a disconnect) was never in play and moves no point. So, at a player's bank, what the players earn on a round is
  exactly what the bank is deducted. Holding the bank needs `MIN_BANK_POINTS` (50) points besides the balance.
- The banker's approval timer (seed 001: 35 seconds as banker): a banker who has not approved a round
  `approval_seconds` after its betting opened, or when its betting closes if that comes first, loses the bank
  (`approval_deadline`); the table is banked by the house from then on, until a player takes the bank again.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from fractions import Fraction

from studio.domain.limits import TableLimits
from studio.domain.money import Rounding, round_minor
from studio.domain.paytable import BetType, DealFacts, PayTable, Verdict
from studio.domain.rules import banker_draws, player_draws
from studio.domain.settlement import Settlement

BANK_COMMISSION = Fraction(15, 1000)
COVER_MULTIPLE = 9
MIN_BANK_POINTS = 50  # seed 001: "un minimum de 50 Points de Crédit"
APPROVAL_SECONDS = 35  # seed 001: "35 secondes en tant que Croupier"


def table_maximum(limits: TableLimits) -> int:
    return max(limit.maximum for limit in limits.bets.values())


def required_bank(limits: TableLimits) -> int:
    """The balance a player needs to hold the bank: 9 × the table maximum, plus 1.5% of it (rounded up)."""
    cover = COVER_MULTIPLE * table_maximum(limits)
    return cover + round_minor(cover * BANK_COMMISSION, Rounding.UP)


@dataclass(frozen=True, slots=True)
class BankResult:
    staked: int  # the total staked against the bank
    gross: int  # what the bank won (positive) or paid out (negative) on the bets
    commission: int  # the house's 1.5% of `staked`

    @property
    def net(self) -> int:
        return self.gross - self.commission


def bank_result(settlements: Sequence[Settlement], rounding: Rounding = Rounding.DOWN) -> BankResult:
    """What the bank makes of a settled round. Bets that pushed or were refunded were never in play against the bank:
    they count neither for its result nor for the commission (a voided round costs the bank nothing)."""
    in_play = [s for s in settlements if s.verdict not in (Verdict.PUSH, Verdict.REFUND)]
    staked = sum(settled.bet.stake for settled in in_play)
    gross = sum(settled.bet.stake - settled.returned for settled in in_play)
    return BankResult(staked, gross, round_minor(staked * BANK_COMMISSION, rounding))


def points_for(settled: Settlement, unit: int) -> int:
    """The credit points a settled bet earns its player (and costs a player's bank): one per whole major unit (`unit`
    minor units) of its stake, rounded down, if a result settled it as won or lost; none for a push or a refund."""
    if settled.verdict in (Verdict.PUSH, Verdict.REFUND):
        return 0
    return settled.bet.stake // unit


def approval_deadline(opened_at: datetime, closes_at: datetime, approval_seconds: int) -> datetime:
    """When a banker who has not approved a round loses the bank: `approval_seconds` after its betting opened, or when
    its betting closes (no bet can be placed against the bank after that), whichever comes first."""
    return min(opened_at + timedelta(seconds=approval_seconds), closes_at)


# ---------------------------------------------------------------------------------------------------------------------
# Covering the bets: what the bank could have to pay at worst.

# A hand's first two cards, as far as any bet can tell: their total, whether they are a pair, and whether that pair is
# "perfect" (same rank and suit, which 8 decks allow for any pair). A pair of equal ranks totals 2 × its points, so
# only even totals can be pairs; any total can be a non-pair (10 + J is a zero that is not a pair).
_TWO_CARD_STARTS = tuple(
    [(total, False, False) for total in range(10)]
    + [(total, True, perfect) for total in range(0, 10, 2) for perfect in (False, True)]
)


@functools.cache
def possible_deals() -> tuple[DealFacts, ...]:
    """Every distinct set of facts a deal from an 8-deck shoe can end with (the third-card rule applied)."""
    found: set[DealFacts] = set()
    for player_start in _TWO_CARD_STARTS:
        for banker_start in _TWO_CARD_STARTS:
            p_total, b_total = player_start[0], banker_start[0]
            if p_total >= 8 or b_total >= 8:  # a natural: both stand
                found.add(_facts(player_start, banker_start, None, None))
                continue
            player_thirds: list[int | None] = list(range(10)) if player_draws(p_total) else [None]
            for third in player_thirds:
                banker_thirds: list[int | None] = list(range(10)) if banker_draws(b_total, third) else [None]
                found.update(_facts(player_start, banker_start, third, card) for card in banker_thirds)
    return tuple(sorted(found, key=repr))


def _facts(player: tuple[int, bool, bool], banker: tuple[int, bool, bool], player_third: int | None,
           banker_third: int | None) -> DealFacts:  # fmt: skip
    (p_total, p_pair, p_perfect), (b_total, b_pair, b_perfect) = player, banker
    two_cards = player_third is None and banker_third is None
    return DealFacts(
        player_total=p_total if player_third is None else (p_total + player_third) % 10,
        banker_total=b_total if banker_third is None else (b_total + banker_third) % 10,
        player_natural=two_cards and p_total >= 8,
        banker_natural=two_cards and b_total >= 8,
        player_card_count=2 if player_third is None else 3,
        banker_card_count=2 if banker_third is None else 3,
        player_pair=p_pair,
        banker_pair=b_pair,
        player_perfect_pair=p_perfect,
        banker_perfect_pair=b_perfect,
    )


# A win can cost the bank up to 2 minor units more than its exact value: the win rounded up, the commission down.
_ROUNDING_SLACK_PER_BET = 2


@dataclass(frozen=True, slots=True)
class BankCover:
    """The bank's loss per unit staked on each bet type, for every way a deal can end (`possible_deals`) that a pay
    table tells apart: the exact worst case of a round's bets, whatever cards come."""

    losses: tuple[Mapping[BetType, Fraction], ...]

    @classmethod
    def of(cls, pay_table: PayTable) -> BankCover:
        patterns = set()
        for deal in possible_deals():
            resolutions = {bet: pay_table.resolve(bet, deal) for bet in BetType}
            patterns.add(tuple((bet, _unit_loss(res.verdict, res.pays, res.commission))
                               for bet, res in resolutions.items()))  # fmt: skip
        return cls(tuple(dict(pattern) for pattern in sorted(patterns)))

    def exposure(self, stakes: Mapping[BetType, int], bets: int) -> int:
        """What the bank needs to hold so that, whatever the cards, it can pay the bets staked (`stakes` per bet type,
        `bets` of them) and the house's commission on them: the worst loss over every way the deal can end, in minor
        units, rounded up. A maximum payout only lowers what is paid, so it is left out (the bound stays safe)."""
        worst = max(sum((loss[bet] * stake for bet, stake in stakes.items()), Fraction(0)) for loss in self.losses)
        staked = sum(stakes.values())
        commission = round_minor(staked * BANK_COMMISSION, Rounding.UP)
        return max(math.ceil(worst), 0) + commission + _ROUNDING_SLACK_PER_BET * bets


def _unit_loss(verdict: Verdict, pays: Fraction, commission: Fraction) -> Fraction:
    """The bank's loss on one unit staked: the win less the commission when the bet wins, the stake back when it
    loses (a gain), nothing on a push."""
    if verdict is Verdict.WIN:
        return pays * (1 - commission)
    if verdict is Verdict.LOSE:
        return Fraction(-1)
    return Fraction(0)
