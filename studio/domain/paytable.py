"""Bet types, pay tables and how each bet resolves against the facts of a finished deal.

Rules held here (seeds 000 and 002): Player 1:1; Banker 1:1 less 5% commission; Tie 8:1, Player and Banker push on a
tie; Player Pair and Banker Pair 11:1 (first two cards of that hand of equal rank); Perfect Pair 25:1 on one hand and
200:1 on both (first two cards identical in rank and suit); Either Pair 5:1; Player and Banker Bonus: natural win 1:1,
natural tie push, non-natural win by 9/8/7/6/5/4 pays 30/10/6/4/2/1, anything else loses. "2 Way" places both pair
bets, "3 Way" both pair bets and the Tie.

Every figure is configuration: a pay table is read from a mapping (parsed TOML) and must name every bet type, so a
table can never silently offer a bet it has no terms for. Pays are "X to 1" as exact fractions.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from typing import Any

from studio.domain.errors import ConfigError
from studio.domain.money import Rounding
from studio.domain.rules import Outcome, Winner, winner_of


class BetType(enum.Enum):
    PLAYER = "player"
    BANKER = "banker"
    TIE = "tie"
    PLAYER_PAIR = "player_pair"
    BANKER_PAIR = "banker_pair"
    EITHER_PAIR = "either_pair"
    PERFECT_PAIR = "perfect_pair"
    PLAYER_BONUS = "player_bonus"
    BANKER_BONUS = "banker_bonus"

    # A member is its own key: a group commit looks bet types up in its counts some tens of times per bet, and an
    # Enum's own hash (of its name) is a Python call. Members are singletons that compare by identity, so the
    # identity hash is consistent with it (as `procedure.Phase`).
    __hash__ = object.__hash__

    @classmethod
    def parse(cls, text: str) -> BetType:
        try:
            return cls(text.strip().lower().replace("-", "_").replace(" ", "_"))
        except ValueError:
            names = ", ".join(b.value for b in cls)
            raise ConfigError(f"unknown bet type {text!r} (expected one of: {names})") from None


# Shortcuts a player can place with one chip: the same stake on each of the listed bets.
SHORTCUTS: dict[str, tuple[BetType, ...]] = {
    "two_way": (BetType.PLAYER_PAIR, BetType.BANKER_PAIR),
    "three_way": (BetType.PLAYER_PAIR, BetType.BANKER_PAIR, BetType.TIE),
}


@dataclass(frozen=True, slots=True)
class DealFacts:
    """What a bet can depend on: the totals, naturals, hand sizes and pairs of a finished deal."""

    player_total: int
    banker_total: int
    player_natural: bool
    banker_natural: bool
    player_card_count: int
    banker_card_count: int
    player_pair: bool
    banker_pair: bool
    player_perfect_pair: bool
    banker_perfect_pair: bool

    @property
    def winner(self) -> Winner:
        return winner_of(self.player_total, self.banker_total)

    @classmethod
    def of(cls, outcome: Outcome) -> DealFacts:
        return cls(
            player_total=outcome.player_total,
            banker_total=outcome.banker_total,
            player_natural=outcome.player_natural,
            banker_natural=outcome.banker_natural,
            player_card_count=len(outcome.player),
            banker_card_count=len(outcome.banker),
            player_pair=outcome.player_pair,
            banker_pair=outcome.banker_pair,
            player_perfect_pair=outcome.player_perfect_pair,
            banker_perfect_pair=outcome.banker_perfect_pair,
        )


class Verdict(enum.Enum):
    WIN = "win"
    LOSE = "lose"
    PUSH = "push"  # the stake comes back: the bet neither won nor lost
    REFUND = "refund"  # the round was voided: the stake comes back


@dataclass(frozen=True, slots=True)
class Resolution:
    verdict: Verdict
    pays: Fraction = Fraction(0)  # "X to 1" on a win
    commission: Fraction = Fraction(0)  # share of the win the house keeps


LOSE = Resolution(Verdict.LOSE)
PUSH = Resolution(Verdict.PUSH)


def _win(pays: Fraction, commission: Fraction = Fraction(0)) -> Resolution:
    return Resolution(Verdict.WIN, pays, commission)


@dataclass(frozen=True, slots=True)
class MainBetTerms:
    """Player or Banker: wins when its side has the higher total; pushes on a tie.

    `three_card_seven` is the no-commission variant's exception: when this side wins with a three-card total of 7
    the bet resolves this way (a push, or a smaller win) instead of paying `pays`.
    """

    side: Winner
    pays: Fraction
    commission: Fraction = Fraction(0)
    three_card_seven: Resolution | None = None

    def resolve(self, facts: DealFacts) -> Resolution:
        winner = facts.winner
        if winner is Winner.TIE:
            return PUSH
        if winner is not self.side:
            return LOSE
        total, cards = (
            (facts.player_total, facts.player_card_count)
            if self.side is Winner.PLAYER
            else (facts.banker_total, facts.banker_card_count)
        )
        if self.three_card_seven is not None and total == 7 and cards == 3:
            return self.three_card_seven
        return _win(self.pays, self.commission)


@dataclass(frozen=True, slots=True)
class TieTerms:
    pays: Fraction

    def resolve(self, facts: DealFacts) -> Resolution:
        return _win(self.pays) if facts.winner is Winner.TIE else LOSE


@dataclass(frozen=True, slots=True)
class PairTerms:
    """Player Pair, Banker Pair or Either Pair: the first two cards of the hand(s) are of equal rank."""

    bet: BetType
    pays: Fraction

    def resolve(self, facts: DealFacts) -> Resolution:
        if self.bet is BetType.PLAYER_PAIR:
            won = facts.player_pair
        elif self.bet is BetType.BANKER_PAIR:
            won = facts.banker_pair
        else:
            won = facts.player_pair or facts.banker_pair
        return _win(self.pays) if won else LOSE


@dataclass(frozen=True, slots=True)
class PerfectPairTerms:
    """The first two cards of a hand are the same card (rank and suit); more when both hands are."""

    one_hand: Fraction
    both_hands: Fraction

    def resolve(self, facts: DealFacts) -> Resolution:
        if facts.player_perfect_pair and facts.banker_perfect_pair:
            return _win(self.both_hands)
        if facts.player_perfect_pair or facts.banker_perfect_pair:
            return _win(self.one_hand)
        return LOSE


@dataclass(frozen=True, slots=True)
class BonusTerms:
    """Player or Banker Bonus: pays on a natural win, or by the margin of a non-natural win."""

    side: Winner
    natural_win: Fraction
    natural_tie: Fraction | None  # None: the bet pushes on a tie of naturals
    margins: Mapping[int, Fraction]

    def resolve(self, facts: DealFacts) -> Resolution:
        winner = facts.winner
        mine_natural = facts.player_natural if self.side is Winner.PLAYER else facts.banker_natural
        if winner is Winner.TIE:
            if facts.player_natural and facts.banker_natural:
                return PUSH if self.natural_tie is None else _win(self.natural_tie)
            return LOSE
        if winner is not self.side:
            return LOSE
        if mine_natural:
            return _win(self.natural_win)
        pays = self.margins.get(abs(facts.player_total - facts.banker_total))
        return LOSE if pays is None else _win(pays)


BetTerms = MainBetTerms | TieTerms | PairTerms | PerfectPairTerms | BonusTerms


@dataclass(frozen=True, slots=True)
class PayTable:
    name: str
    terms: Mapping[BetType, BetTerms]
    commission_rounding: Rounding = Rounding.DOWN
    payout_rounding: Rounding = Rounding.DOWN

    def resolve(self, bet: BetType, facts: DealFacts) -> Resolution:
        return self.terms[bet].resolve(facts)


# ---------------------------------------------------------------------------------------------------------------------
# Reading a pay table from configuration (a parsed TOML document).


MAX_PAYS = 1_000_000  # no bet pays more than a million to one
MIN_PLACE = -12  # nor in steps finer than 10**-12


def _ratio(value: Any, where: str) -> Fraction:
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise ConfigError(f'{where}: expected a number of units paid to 1, such as "11" or "0.95", got {value!r}')
    text = str(value).strip()
    try:
        # "19/20" is whole numbers only. A decimal's exponent is checked before its exact value is built: "1e-99999999"
        # would keep Fraction busy for ages.
        number = Fraction(text) if "/" in text else Decimal(text)
    except (ValueError, ArithmeticError):  # decimal's InvalidOperation and a zero denominator are ArithmeticErrors
        raise ConfigError(f"{where}: {value!r} is not a number") from None
    if isinstance(number, Decimal):
        if not number.is_finite():
            raise ConfigError(f"{where}: {value!r} is not a number")
        if not number.is_zero() and not MIN_PLACE <= number.adjusted() <= len(str(MAX_PAYS)):
            raise ConfigError(f"{where}: {value!r} is out of range (0, or 10**{MIN_PLACE} to {MAX_PAYS})")
        number = Fraction(number)
    if number < 0:
        raise ConfigError(f"{where}: a payout cannot be negative ({value!r})")
    if number > MAX_PAYS:
        raise ConfigError(f"{where}: {value!r} is over the largest payout, {MAX_PAYS} to 1")
    return number


def _ratio_or_push(value: Any, where: str) -> Fraction | None:
    if isinstance(value, str) and value.strip().lower() == "push":
        return None
    return _ratio(value, where)


def _fields(section: Any, where: str, required: set[str], optional: set[str] = frozenset()) -> dict[str, Any]:  # type: ignore[assignment]
    if not isinstance(section, Mapping):
        raise ConfigError(f"{where}: expected a table of settings, got {section!r}")
    missing = sorted(required - section.keys())
    if missing:
        raise ConfigError(f"{where}: missing {', '.join(missing)}")
    unknown = sorted(section.keys() - required - optional)
    if unknown:
        raise ConfigError(f"{where}: unknown setting {', '.join(unknown)}")
    return dict(section)


def _rounding(value: Any, where: str) -> Rounding:
    try:
        return Rounding(value)
    except ValueError:
        names = ", ".join(r.value for r in Rounding)
        raise ConfigError(f"{where}: unknown rounding {value!r} (expected one of: {names})") from None


def _terms(bet: BetType, section: Any, where: str) -> BetTerms:
    if bet in (BetType.PLAYER, BetType.BANKER):
        f = _fields(section, where, {"pays"}, {"commission", "three_card_seven"})
        commission = _ratio(f.get("commission", "0"), f"{where}.commission")
        if commission > 1:
            raise ConfigError(f"{where}.commission: a commission is a share of the win, at most 1 ({commission})")
        seven = None
        if "three_card_seven" in f:
            seven_pays = _ratio_or_push(f["three_card_seven"], f"{where}.three_card_seven")
            seven = PUSH if seven_pays is None else _win(seven_pays)
        side = Winner.PLAYER if bet is BetType.PLAYER else Winner.BANKER
        return MainBetTerms(side, _ratio(f["pays"], f"{where}.pays"), commission, seven)
    if bet is BetType.TIE:
        return TieTerms(_ratio(_fields(section, where, {"pays"})["pays"], f"{where}.pays"))
    if bet in (BetType.PLAYER_PAIR, BetType.BANKER_PAIR, BetType.EITHER_PAIR):
        return PairTerms(bet, _ratio(_fields(section, where, {"pays"})["pays"], f"{where}.pays"))
    if bet is BetType.PERFECT_PAIR:
        f = _fields(section, where, {"one_hand", "both_hands"})
        return PerfectPairTerms(
            _ratio(f["one_hand"], f"{where}.one_hand"), _ratio(f["both_hands"], f"{where}.both_hands")
        )
    f = _fields(section, where, {"natural_win", "natural_tie", "margins"})
    margins_section = f["margins"]
    if not isinstance(margins_section, Mapping) or not margins_section:
        raise ConfigError(f'{where}.margins: expected a table such as {{ 9 = "30", 4 = "1" }}')
    margins: dict[int, Fraction] = {}
    for key, value in margins_section.items():
        if key not in _MARGINS:
            raise ConfigError(f"{where}.margins: {key!r} is not a winning margin (1 to 9)")
        margins[_MARGINS[key]] = _ratio(value, f"{where}.margins.{key}")
    side = Winner.PLAYER if bet is BetType.PLAYER_BONUS else Winner.BANKER
    return BonusTerms(
        side,
        _ratio(f["natural_win"], f"{where}.natural_win"),
        _ratio_or_push(f["natural_tie"], f"{where}.natural_tie"),
        margins,
    )


_MARGINS = {str(margin): margin for margin in range(1, 10)}


def pay_table_from_mapping(data: Mapping[str, Any], name: str) -> PayTable:
    """Build a pay table from a parsed TOML document; raise `ConfigError` naming the first problem."""
    f = _fields(
        data, f"pay table {name!r}", {"bets"}, {"name", "description", "commission_rounding", "payout_rounding"}
    )
    bets = f["bets"]
    if not isinstance(bets, Mapping):
        raise ConfigError(f"pay table {name!r}: [bets] must be a table with one section per bet")
    known = {b.value for b in BetType}
    unknown = sorted(set(bets) - known)
    if unknown:
        raise ConfigError(f"pay table {name!r}: unknown bet {', '.join(unknown)}")
    missing = [b.value for b in BetType if b.value not in bets]
    if missing:
        raise ConfigError(f"pay table {name!r} is missing the bet {', '.join(missing)}")
    terms = {b: _terms(b, bets[b.value], f"pay table {name!r}: bets.{b.value}") for b in BetType}
    return PayTable(
        name=str(f.get("name", name)),
        terms=terms,
        commission_rounding=_rounding(f.get("commission_rounding", "down"), f"pay table {name!r}: commission_rounding"),
        payout_rounding=_rounding(f.get("payout_rounding", "down"), f"pay table {name!r}: payout_rounding"),
    )
