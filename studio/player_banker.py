"""Player as banker (seed 001): one player holds the bank against the others at a table in that mode.

Rules held here:
- The bank pays every winning bet and takes every losing stake: for each bet, the bank gains its stake less what
  the bet returns (a push or a refund returns the stake: nothing changes hands).
- The house takes a commission of 1.5% of the total staked against the bank, from the bank, each round.
- To hold the bank a player needs a balance of at least 9 × the table maximum plus 1.5% of that, so that the bank can
  cover a Tie paid 8:1 on a maximum stake, and its commission.
- The banker approves each round before bets are taken (or sets auto-approve).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

from studio.limits import TableLimits
from studio.money import Rounding, round_minor
from studio.paytable import Verdict
from studio.settlement import Settlement

BANK_COMMISSION = Fraction(15, 1000)
COVER_MULTIPLE = 9


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
