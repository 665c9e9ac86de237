"""Table limits: the minimum and maximum stake and the maximum payout of each bet type, and what to do with a stake
under the minimum.

Seeds (000): Player and Banker 10-400, Tie 5-50; maximum payout Tie 400, Player 400, Banker 380. A bet type the
table lists no limits for is not offered there. Amounts are integers of minor units.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from studio.domain.errors import BetRejected, ConfigError
from studio.domain.money import format_minor, to_minor
from studio.domain.paytable import BetType


class UnderMinimum(enum.Enum):
    """What happens to a stake under the table minimum."""

    REJECT = "reject"
    RAISE = "raise"  # the stake is raised to the minimum


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

    def money(self, amount: int) -> str:
        return f"{format_minor(amount, self.minor_digits)} {self.currency}"

    def accept(self, bet_type: BetType, stake: int) -> int:
        """The stake the table accepts for this bet (raised to the minimum if the policy says so), or `BetRejected`."""
        if isinstance(stake, bool) or not isinstance(stake, int) or stake <= 0:
            raise BetRejected(bet_type.value, stake, "a stake is a positive whole number of minor units")
        limit = self.bets.get(bet_type)
        if limit is None:
            raise BetRejected(bet_type.value, stake, "this bet is not offered at this table")
        if stake > limit.maximum:
            raise BetRejected(bet_type.value, stake, f"over the table maximum of {self.money(limit.maximum)}")
        if stake < limit.minimum:
            if self.under_minimum is UnderMinimum.RAISE:
                return limit.minimum
            raise BetRejected(bet_type.value, stake, f"under the table minimum of {self.money(limit.minimum)}")
        return stake


def limits_from_mapping(data: Mapping[str, Any], currency: str, minor_digits: int, under_minimum: str) -> TableLimits:
    """Build limits from the `[limits]` tables of a table configuration; raise `ConfigError` on the first problem."""
    try:
        policy = UnderMinimum(under_minimum)
    except ValueError:
        raise ConfigError(f'under_minimum: expected "reject" or "raise", got {under_minimum!r}') from None
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
    return TableLimits(bets, policy, currency, minor_digits)
