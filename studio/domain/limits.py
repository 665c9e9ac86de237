"""Table limits: the minimum and maximum stake and the maximum payout of each bet type, what to do with a stake
under the minimum or over the maximum, how many bets a player may place on one betting area, and a player's own
maximum stake.

Seeds (000): Player and Banker 10-400, Tie 5-50; maximum payout Tie 400, Player 400, Banker 380. A bet type the
table lists no limits for is not offered there. Amounts are integers of minor units.

Rules held here:
- The maximum caps a player's total stake on one bet type (betting area) in a round. A stake over it is rejected
  (seed 000), or, with the table's `over_maximum = "cap"`, accepted up to the maximum with the notice "maximum
  reached"; once an area holds the maximum, nothing more is accepted there (seed 002).
- At most three bets per betting area, per player and round (seed 000 §2.1.1; `max_bets_per_area` per table).
- A player may set their own maximum stake (seed 004): on every table it lowers the maximum of every bet type to it
  (never raises it). It changes at most once a week; the week starts on Friday at midnight at GMT-5, that is
  Friday 05:00 UTC (`own_maximum_week`).
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, time, timedelta
from typing import Any

from studio.domain.errors import BetRejected, ConfigError
from studio.domain.money import format_minor, to_minor
from studio.domain.paytable import BetType


class UnderMinimum(enum.Enum):
    """What happens to a stake under the table minimum."""

    REJECT = "reject"
    RAISE = "raise"  # the stake is raised to the minimum


class OverMaximum(enum.Enum):
    """What happens to a stake that would take a player's total on a bet type over the maximum."""

    REJECT = "reject"  # seed 000
    CAP = "cap"  # accepted up to the maximum, with the notice "maximum reached" (seed 002)


MAXIMUM_REACHED = "maximum reached"
RAISED = "raised to the table minimum"
MAX_BETS_PER_AREA = 3  # seed 000 §2.1.1
MOST_BETS_PER_AREA = 1000  # the largest `max_bets_per_area` a table file may set


class MaximumReached(BetRejected):
    """A betting area already holds the player's maximum for the round: nothing more is accepted there (seed 002)."""


@dataclass(frozen=True, slots=True)
class Taken:
    """The stake accepted for a bet, and the notice for the player when it is not the stake asked for."""

    stake: int
    notice: str | None = None


@dataclass(frozen=True, slots=True)
class BetLimit:
    minimum: int
    maximum: int
    max_payout: int | None = None  # the most a winning bet of this type can win, after commission


@dataclass(frozen=True, slots=True)
class TableLimits:
    bets: Mapping[BetType, BetLimit]
    under_minimum: UnderMinimum = UnderMinimum.REJECT
    currency: str = "USD"
    minor_digits: int = 2
    over_maximum: OverMaximum = OverMaximum.REJECT
    max_bets_per_area: int = MAX_BETS_PER_AREA

    def money(self, amount: int) -> str:
        return f"{format_minor(amount, self.minor_digits)} {self.currency}"

    def accept(self, bet_type: BetType, stake: int) -> int:
        """The stake the table accepts for a player's first bet of this type in a round, or `BetRejected`."""
        return self.take(bet_type, stake).stake

    def take(self, bet_type: BetType, stake: int, staked: int = 0, bets: int = 0, own_maximum: int | None = None,
             cap: bool = False) -> Taken:  # fmt: skip
        """The stake accepted for one more bet on an area where the player already has `bets` bets totalling `staked`
        this round, under the player's own maximum if they set one; or `BetRejected` naming the rule. `cap` cuts the
        stake to the maximum whatever the table's policy (a double, seed 002)."""
        if isinstance(stake, bool) or not isinstance(stake, int) or stake <= 0:
            raise BetRejected(bet_type.value, stake, "a stake is a positive whole number of minor units")
        limit = self.bets.get(bet_type)
        if limit is None:
            raise BetRejected(bet_type.value, stake, "this bet is not offered at this table")
        if bets >= self.max_bets_per_area:
            reason = (f"at most {self.max_bets_per_area} bets per betting area and round: this player has "
                      f"{bets} on {bet_type.value} already")  # fmt: skip
            raise BetRejected(bet_type.value, stake, reason)
        accepted, notice = stake, None
        if stake < limit.minimum:
            if self.under_minimum is not UnderMinimum.RAISE:
                raise BetRejected(bet_type.value, stake, f"under the table minimum of {self.money(limit.minimum)}")
            accepted, notice = limit.minimum, f"{RAISED} of {self.money(limit.minimum)}"
        own = own_maximum is not None and own_maximum < limit.maximum
        maximum = own_maximum if own_maximum is not None and own else limit.maximum
        which = "this player's own maximum stake" if own else "the table maximum"
        room = maximum - staked
        if accepted <= room:
            return Taken(accepted, notice)
        if room <= 0 and (cap or self.over_maximum is OverMaximum.CAP):
            reason = (f"{MAXIMUM_REACHED}: this player's {bet_type.value} bets of this round are at {which} of "
                      f"{self.money(maximum)}; nothing more is accepted there")  # fmt: skip
            raise MaximumReached(bet_type.value, stake, reason)
        if cap or self.over_maximum is OverMaximum.CAP:
            return Taken(room, f"{MAXIMUM_REACHED}: {self.money(room)} accepted, up to {which} of "
                               f"{self.money(maximum)} for {bet_type.value}")  # fmt: skip
        left = f" for this bet ({self.money(max(room, 0))} left)" if staked else ""
        raise BetRejected(bet_type.value, stake, f"over {which} of {self.money(maximum)}{left}")


def own_maximum_week(now: datetime) -> datetime:
    """When the week in which `now` falls began, for a player's own maximum: the last Friday 00:00 at GMT-5 (05:00 UTC)
    at or before `now` (seed 004). `now` must be timezone-aware."""
    if now.tzinfo is None or now.utcoffset() is None:
        raise ValueError("a time for the betting-limit week must be timezone-aware")
    eastern = now.astimezone(UTC) - timedelta(hours=5)  # the wall clock at GMT-5 (no daylight saving in the seed)
    friday = eastern.date() - timedelta(days=(eastern.weekday() - 4) % 7)
    return datetime.combine(friday, time(5), UTC)


def next_own_maximum_change(last_change: datetime | None, now: datetime) -> datetime | None:
    """When a player who last changed their own maximum at `last_change` may change it again: None if now."""
    if last_change is None:
        return None
    week = own_maximum_week(now)
    return week + timedelta(days=7) if last_change >= week else None


def limits_from_mapping(
    data: Mapping[str, Any],
    currency: str,
    minor_digits: int,
    under_minimum: str,
    over_maximum: str = "reject",
    max_bets_per_area: object = MAX_BETS_PER_AREA,
) -> TableLimits:
    """Build limits from the `[limits]` tables of a table configuration; raise `ConfigError` on the first problem."""
    try:
        policy = UnderMinimum(under_minimum)
    except ValueError:
        raise ConfigError(f'under_minimum: expected "reject" or "raise", got {under_minimum!r}') from None
    try:
        over = OverMaximum(over_maximum)
    except ValueError:
        raise ConfigError(f'over_maximum: expected "reject" or "cap", got {over_maximum!r}') from None
    per_area = max_bets_per_area
    if isinstance(per_area, bool) or not isinstance(per_area, int) or not 1 <= per_area <= MOST_BETS_PER_AREA:
        expected = f"expected a whole number from 1 to {MOST_BETS_PER_AREA}"
        raise ConfigError(f"max_bets_per_area: {expected}, got {per_area!r}")
    if not isinstance(data, Mapping):
        raise ConfigError("[limits] must be a table with one section per bet, such as [limits.tie]")
    bets: dict[BetType, BetLimit] = {}
    for key, section in data.items():
        where = f"limits.{key}"
        bet = BetType.parse(key)
        if not isinstance(section, Mapping):
            raise ConfigError(f"{where}: expected min, max and optionally max_payout")
        unknown = sorted(set(section) - {"min", "max", "max_payout"})
        if unknown:
            raise ConfigError(f"{where}: unknown setting {', '.join(unknown)}")
        if "min" not in section or "max" not in section:
            raise ConfigError(f"{where}: needs both min and max")
        minimum = to_minor(section["min"], minor_digits, f"{where}.min")
        maximum = to_minor(section["max"], minor_digits, f"{where}.max")
        if not 0 < minimum <= maximum:
            raise ConfigError(f"{where}: expected 0 < min <= max, got min {section['min']} and max {section['max']}")
        payout = section.get("max_payout")
        bets[bet] = BetLimit(
            minimum, maximum, None if payout is None else to_minor(payout, minor_digits, f"{where}.max_payout")
        )
    return TableLimits(bets, policy, currency, minor_digits, over, per_area)
