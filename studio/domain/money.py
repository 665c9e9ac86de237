"""Exact money: amounts are integers of the currency's minor unit (cents for 2 digits), never floats.

Configuration writes amounts in major units as text or integers ("10", "10.50", 400); `to_minor` converts them and
refuses anything that is not a whole number of minor units, or that is larger than `MAX_MAJOR` (a 64-bit integer
of minor units holds it with 4 decimal places).
"""

from __future__ import annotations

import enum
from decimal import Decimal, Inexact, InvalidOperation, localcontext
from fractions import Fraction

from studio.domain.errors import ConfigError

MAX_MAJOR = 10**14


class Rounding(enum.Enum):
    """How a fractional amount of minor units becomes a whole one."""

    DOWN = "down"  # toward zero
    HALF_EVEN = "half_even"
    UP = "up"  # away from zero


def round_minor(amount: Fraction, rounding: Rounding) -> int:
    """Round a non-negative exact amount of minor units to a whole number of them."""
    if amount < 0:
        raise ValueError(f"amount must not be negative, got {amount}")
    whole, rest = divmod(amount.numerator, amount.denominator)
    if rest == 0:
        return whole
    if rounding is Rounding.DOWN:
        return whole
    if rounding is Rounding.UP:
        return whole + 1
    doubled = 2 * rest
    if doubled > amount.denominator or (doubled == amount.denominator and whole % 2 == 1):
        return whole + 1
    return whole


def to_minor(value: object, digits: int, what: str) -> int:
    """Convert a configured amount in major units ("10.50", 10) to minor units, exactly."""
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise ConfigError(f'{what}: expected an amount such as "10" or "10.50", got {value!r}')
    try:
        amount = Decimal(value) if isinstance(value, int) else Decimal(value.strip())
    except InvalidOperation:
        raise ConfigError(f"{what}: {value!r} is not an amount") from None
    if not amount.is_finite() or amount < 0:
        raise ConfigError(f"{what}: {value!r} is not a non-negative amount")
    if amount.is_zero():
        return 0
    if amount > MAX_MAJOR:
        raise ConfigError(f"{what}: {value!r} is over the largest amount, {MAX_MAJOR}")
    with localcontext() as context:
        context.traps[Inexact] = True  # a digit the context's precision would drop is a fraction of a minor unit
        try:
            minor = amount.scaleb(digits)
        except Inexact:
            minor = None
    if minor is None or minor != minor.to_integral_value():
        raise ConfigError(f"{what}: {value!r} has more than {digits} decimal places")
    return int(minor)


def format_minor(amount: int, digits: int) -> str:
    """`1050` with 2 digits → `"10.50"`."""
    if digits == 0:
        return str(amount)
    sign = "-" if amount < 0 else ""
    whole, part = divmod(abs(amount), 10**digits)
    return f"{sign}{whole}.{part:0{digits}d}"
