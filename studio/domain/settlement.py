"""Settlement: what each bet returns once a round is final or voided.

A win returns the stake plus the stake times the pay ("X to 1"), less the commission on the win, and never more than
the bet type's maximum payout; a push and a refund return the stake; a loss returns nothing. Fractions of a minor unit
are rounded by the pay table's rounding rules. Amounts are integers of minor units.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from studio.domain.errors import BetRejected
from studio.domain.limits import TableLimits
from studio.domain.money import round_minor
from studio.domain.paytable import SHORTCUTS, BetType, DealFacts, PayTable, Verdict
from studio.domain.rules import Outcome


@dataclass(frozen=True, slots=True)
class Bet:
    bet_id: str
    bet_type: BetType
    stake: int  # minor units


@dataclass(frozen=True, slots=True)
class Void:
    """A voided round: every stake is refunded."""

    reason: str


@dataclass(frozen=True, slots=True)
class Settlement:
    bet: Bet
    verdict: Verdict
    returned: int  # paid back to the player, stake included; 0 on a loss
    commission: int = 0  # kept by the house out of the win
    withheld: int = 0  # the part of the win above the maximum payout

    @property
    def net(self) -> int:
        """What the player gained (positive) or lost (negative) on this bet."""
        return self.returned - self.bet.stake


def expand_shortcut(bet_id: str, shortcut: str, stake: int) -> list[Bet]:
    """A "2 Way" or "3 Way" chip: the same stake on each bet it covers, ids suffixed with the bet type."""
    # "2 Way", "two-way", "2way" and "two_way" all name the same shortcut.
    key = "".join(ch for ch in shortcut.strip().lower() if ch.isalnum()).replace("2", "two").replace("3", "three")
    try:
        covered = SHORTCUTS[key.replace("way", "_way")]
    except KeyError:
        raise BetRejected(shortcut, stake, f"unknown shortcut (expected one of: {', '.join(SHORTCUTS)})") from None
    return [Bet(f"{bet_id}:{bet.value}", bet, stake) for bet in covered]


def settle(
    bets: Iterable[Bet], outcome: Outcome | DealFacts | Void, pay_table: PayTable, limits: TableLimits | None = None
) -> list[Settlement]:
    """Settle every bet against a finished deal (or refund it if the round was voided), in the order given."""
    bets = list(bets)
    for bet in bets:
        if isinstance(bet.stake, bool) or not isinstance(bet.stake, int) or bet.stake <= 0:
            raise BetRejected(bet.bet_type.value, bet.stake, "a stake is a positive whole number of minor units")
    if isinstance(outcome, Void):
        return [Settlement(bet, Verdict.REFUND, bet.stake) for bet in bets]
    facts = DealFacts.of(outcome) if isinstance(outcome, Outcome) else outcome
    settled = []
    for bet in bets:
        resolution = pay_table.resolve(bet.bet_type, facts)
        if resolution.verdict is Verdict.LOSE:
            settled.append(Settlement(bet, Verdict.LOSE, 0))
            continue
        if resolution.verdict is not Verdict.WIN:
            settled.append(Settlement(bet, resolution.verdict, bet.stake))
            continue
        gross = round_minor(bet.stake * resolution.pays, pay_table.payout_rounding)
        commission = round_minor(gross * resolution.commission, pay_table.commission_rounding)
        win = gross - commission
        withheld = 0
        limit = limits.bets.get(bet.bet_type) if limits is not None else None
        if limit is not None and limit.max_payout is not None and win > limit.max_payout:
            withheld, win = win - limit.max_payout, limit.max_payout
        settled.append(Settlement(bet, Verdict.WIN, bet.stake + win, commission, withheld))
    return settled
