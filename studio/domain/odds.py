"""Exact odds of a baccarat deal from a given shoe: a combinatorial kernel, no sampling.

Two distributions are computed from a shoe (a `Counter[Card]`, full or depleted):

- `deal_distribution`: the joint law of the final totals, the naturals and the number of cards in each hand, which is
  all that the main-game bets (player, banker, tie, their bonuses and the no-commission variants) depend on;
- `pair_distribution`: the joint law of the pair / perfect-pair events on the first two cards of each hand, which is
  all that the pair side bets depend on.

Model. The shoe is shuffled uniformly at random and the deal takes cards from its front in the order P, B, P, B, then
third cards as `studio.domain.rules` says. Weights are exact integers:

- `deal_distribution` counts ordered sequences of the first `min(N, 6)` physical cards (N = cards in the shoe). For
  N >= 6 the denominator is therefore N·(N-1)·…·(N-5): for 8 decks 416·415·414·413·412·411. A deal that takes k cards
  is counted once for each way of filling the remaining `min(N, 6) - k` positions. A deal that would need a card the
  shoe does not hold (only possible when N < 6) has weight zero, and the distribution is conditional on the deal
  being completed.
- `pair_distribution` counts ordered sequences of the first four cards: denominator N·(N-1)·(N-2)·(N-3).

Every weight is an integer, `sum(weights.values()) == denominator` holds exactly, and `probability` returns a
`Fraction`. Shoes with fewer than 4 cards are rejected with `InvalidShoe`.

How the main game stays fast (a few milliseconds in pure Python, see bench/odds_bench.py): only point values matter,
so the shoe collapses to ten counts c[0..9]. The first four cards are enumerated as an unordered two-card Player hand
times an unordered two-card Banker hand (55 x 55 combinations, each with its number of orderings and its exact
without-replacement count). Instead of looping over third cards for every one of those combinations, each
combination's weight w is aggregated per (Player total, Banker total) into three moments of the removed-value vector
m (m[x] = how many of the four removed cards have value x):

    S0 = Σ w,   S1[x] = Σ w·m[x],   S2[x][y] = Σ w·m[x]·m[y].

The number of ways to draw a third card of value u is c[u] - m[u], which is linear in m, and two more cards u, v give
(c[u] - m[u])·(c[v] - m[v] - [u = v]), which is quadratic; so every sum over combinations of weight × count of third
cards is a fixed combination of S0, S1 and S2. The third-card loop then runs once per totals key (100 of them)
instead of once per four-card combination (3025). Pairs need ranks and suits, and a few closed-form sums over the
cards of the shoe give their law exactly (see `pair_distribution`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from fractions import Fraction
from typing import Generic, TypeVar

from studio.domain.cards import ALL_CARDS, Card, Rank
from studio.domain.errors import InvalidShoe
from studio.domain.rules import Winner, banker_draws, is_natural, player_draws, winner_of

K = TypeVar("K", bound=Hashable)


@dataclass(frozen=True, slots=True)
class DealClass:
    """What the main-game bets (player, banker, tie, bonuses, no-commission variants) depend on."""

    player_total: int
    banker_total: int
    player_natural: bool
    banker_natural: bool
    player_cards: int  # 2 or 3
    banker_cards: int  # 2 or 3

    @property
    def winner(self) -> Winner:
        return winner_of(self.player_total, self.banker_total)


@dataclass(frozen=True, slots=True)
class PairClass:
    """What the pair side bets depend on: the first two cards of each hand (cards 1,3 = Player; 2,4 = Banker)."""

    player_pair: bool  # equal rank
    banker_pair: bool
    player_perfect_pair: bool  # equal rank and suit
    banker_perfect_pair: bool


@dataclass(frozen=True, slots=True)
class Distribution(Generic[K]):
    """An exact finite distribution: integer weights over classes, with their exact sum as the denominator."""

    weights: dict[K, int]  # exact integer weights, only classes with weight > 0
    denominator: int  # sum(weights.values()) == denominator, exactly

    def __post_init__(self) -> None:
        if any(weight <= 0 for weight in self.weights.values()):
            raise ValueError("a distribution holds only classes of positive weight")
        if self.denominator <= 0 or sum(self.weights.values()) != self.denominator:
            raise ValueError("the weights of a distribution must sum exactly to its positive denominator")

    def probability(self, key: K) -> Fraction:
        """The exact probability of one class (zero for a class that cannot occur)."""
        return Fraction(self.weights.get(key, 0), self.denominator)

    def probability_where(self, predicate: Callable[[K], bool]) -> Fraction:
        """The exact probability that the class satisfies `predicate` (e.g. `lambda d: d.winner is Winner.TIE`)."""
        return Fraction(sum(weight for key, weight in self.weights.items() if predicate(key)), self.denominator)


# --- Static structure of the main game (independent of the shoe, built once from studio.domain.rules) ---------------

_VALUES = range(10)
_CARD_OF_POINTS = {rank.points: Card(rank, ALL_CARDS[0].suit) for rank in Rank}  # a representative card per value


def _natural(two_card_total: int) -> bool:
    # Ask the rules module, with two representative cards of that total, rather than restating the rule here.
    return is_natural([_CARD_OF_POINTS[two_card_total], _CARD_OF_POINTS[0]])


_NATURAL = tuple(_natural(t) for t in _VALUES)

# Unordered two-card hands (a <= b) as (a, b, number of orderings, total).
_HANDS = tuple((a, b, 1 if a == b else 2, (a + b) % 10) for a in _VALUES for b in range(a, 10))


@dataclass(frozen=True, slots=True)
class _Combo:
    """A Banker two-card hand seen from one Player two-card hand: where its weight and moments go."""

    x: int  # the Banker's two values, x <= y
    y: int
    orderings: int
    key: int  # 10 * player_total + banker_total
    needs_s1: bool
    s1: tuple[int, ...]  # the four removed values: S1[key*10 + v] += w for each
    s2: tuple[tuple[int, int], ...]  # (flat index key*100 + 10*u + v with u <= v, m[u]·m[v]) for S2


def _key_needs(player_total: int, banker_total: int) -> tuple[bool, bool]:
    """Which moments a totals key needs: S1 if any third card can be drawn, S2 if two can."""
    if _NATURAL[player_total] or _NATURAL[banker_total]:
        return False, False
    if player_draws(player_total):
        return True, any(banker_draws(banker_total, u) for u in _VALUES)
    return banker_draws(banker_total, None), False


def _build_combos() -> tuple[tuple[_Combo, ...], ...]:
    table = []
    for a, b, _, p in _HANDS:
        row = []
        for x, y, orderings, t in _HANDS:
            key = 10 * p + t
            needs_s1, needs_s2 = _key_needs(p, t)
            removed = Counter((a, b, x, y))
            s1 = tuple(key * 10 + v for v in (a, b, x, y)) if needs_s1 else ()
            s2 = (
                tuple(
                    (key * 100 + 10 * u + v, removed[u] * removed[v])
                    for u in sorted(removed)
                    for v in sorted(removed)
                    if u <= v
                )
                if needs_s2
                else ()
            )
            row.append(_Combo(x, y, orderings, key, needs_s1, s1, s2))
        table.append(tuple(row))
    return tuple(table)


_COMBOS = _build_combos()


def _falling(n: int, k: int) -> int:
    """n·(n-1)·…·(n-k+1), the number of ordered draws of k distinct items out of n (zero when k > n)."""
    result = 1
    for i in range(k):
        result *= n - i
    return result if result > 0 else 0


# A DealClass as an index into a flat list: 16 * (10 * player total + banker total) + shape, where the shape packs
# the four small fields (naturals, numbers of cards).
_BANKER_STRIDE = 16
_SLOTS = 1600


def _shape(player_natural: bool, banker_natural: bool, player_cards: int, banker_cards: int) -> int:
    return 8 * player_natural + 4 * banker_natural + 2 * (player_cards - 2) + (banker_cards - 2)


def _slot(player_total: int, banker_total: int, shape: int) -> int:
    return _BANKER_STRIDE * (10 * player_total + banker_total) + shape


_STAND = _shape(False, False, 2, 2)  # no natural, both stand
_PLAYER_DREW = _shape(False, False, 3, 2)
_BANKER_DREW = _shape(False, False, 2, 3)
_BOTH_DREW = _shape(False, False, 3, 3)

_CLASS_OF_SLOT = {
    _slot(p, t, _shape(pn, bn, pc, bc)): DealClass(p, t, pn, bn, pc, bc)
    for p in _VALUES
    for t in _VALUES
    for pn in (False, True)
    for bn in (False, True)
    for pc in (2, 3)
    for bc in (2, 3)
}


def _check_shoe(shoe: Counter[Card]) -> int:
    for card, count in shoe.items():
        if not isinstance(card, Card):
            raise InvalidShoe(f"a shoe holds cards, not {card!r}")
        if count < 0:
            raise InvalidShoe(f"a shoe cannot hold {count} × {card.code}")
    size = sum(shoe.values())
    if size < 4:
        raise InvalidShoe(f"a deal needs at least 4 cards, the shoe holds only {size}")
    return size


# --- Main game ------------------------------------------------------------------------------------------------------


def deal_distribution(shoe: Counter[Card]) -> Distribution[DealClass]:
    """The exact law of the `DealClass` of the next deal from `shoe` (see the module docstring for the weights)."""
    size = _check_shoe(shoe)
    c = [0] * 10
    for card, count in shoe.items():
        c[card.points] += count
    moments = _four_card_moments(c)
    # A deal of k cards is weighted by the ways to fill the rest of the first min(N, 6) positions, so that all deals
    # share one denominator; a deal that needs more cards than the shoe holds gets weight zero.
    horizon = min(size, 6)
    tail = [_falling(size - k, horizon - k) if k <= horizon else 0 for k in range(7)]
    acc = _third_cards(c, moments, tail)
    weights = {_CLASS_OF_SLOT[index]: weight for index, weight in enumerate(acc) if weight}
    denominator = sum(weights.values())
    if denominator == 0:
        raise InvalidShoe(f"no deal can be completed from this shoe of {size} cards")
    return Distribution(weights, denominator)


def _four_card_moments(c: list[int]) -> tuple[list[int], list[int], list[int]]:
    """Stage 1: the first four cards, aggregated per totals key into the moments S0, S1, S2 (flat lists).

    S0[key] = Σ w, S1[10·key + u] = Σ w·m[u], S2[100·key + 10·u + v] = Σ w·m[u]·m[v] (u <= v only), where w is the
    number of ordered draws of a Player hand and a Banker hand with totals key = 10·player + banker, and m the values
    those four cards removed.
    """
    s0 = [0] * 100
    s1 = [0] * 1000
    s2 = [0] * 10000
    for (a, b, player_orderings, _), row in zip(_HANDS, _COMBOS, strict=True):
        player_weight = player_orderings * c[a] * (c[b] - (a == b))
        if player_weight <= 0:
            continue
        left = c.copy()  # the counts once the Player's two cards are out
        left[a] -= 1
        left[b] -= 1
        for combo in row:
            x = combo.x
            banker_weight = left[x] * (left[combo.y] - (x == combo.y))
            if banker_weight <= 0:
                continue
            w = player_weight * banker_weight * combo.orderings
            s0[combo.key] += w
            if combo.needs_s1:
                for index in combo.s1:
                    s1[index] += w
                for index, coefficient in combo.s2:
                    s2[index] += w * coefficient
    return s0, s1, s2


def _third_cards(c: list[int], moments: tuple[list[int], list[int], list[int]], tail: list[int]) -> list[int]:
    """Stage 2: third cards, once per totals key; weights of the final classes, indexed by `_slot`.

    The flat list stands in for a dict of DealClass: building and hashing a class per term costs more than the
    arithmetic, so the classes are made once, by the caller.
    """
    s0, s1, s2 = moments
    acc = [0] * _SLOTS
    for key in range(100):
        w0 = s0[key]
        if not w0:
            continue
        p, t = divmod(key, 10)
        if _NATURAL[p] or _NATURAL[t]:
            acc[_slot(p, t, _shape(_NATURAL[p], _NATURAL[t], 2, 2))] += w0 * tail[4]
            continue
        m1 = s1[key * 10 : key * 10 + 10]  # m1[u] = Σ w·m[u]
        if player_draws(p):
            for u in _VALUES:
                # Σ w·(c[u] - m[u]): the Player's third card is a u.
                with_u = c[u] * w0 - m1[u]
                if not with_u:
                    continue
                player_final = (p + u) % 10
                if not banker_draws(t, u):
                    acc[_slot(player_final, t, _PLAYER_DREW)] += with_u * tail[5]
                    continue
                base = _slot(player_final, 0, _BOTH_DREW)
                cu, m1u = c[u] * w0, m1[u]
                for v in _VALUES:
                    # Σ w·(c[u] - m[u])·(c[v] - m[v] - [u = v]), expanded into the moments.
                    m2 = s2[key * 100 + 10 * u + v] if u <= v else s2[key * 100 + 10 * v + u]
                    both = cu * c[v] - c[u] * m1[v] - c[v] * m1u + m2
                    if u == v:
                        both -= with_u
                    acc[base + _BANKER_STRIDE * ((t + v) % 10)] += both * tail[6]
        elif banker_draws(t, None):
            for v in _VALUES:
                acc[_slot(p, (t + v) % 10, _BANKER_DREW)] += (c[v] * w0 - m1[v]) * tail[5]
        else:
            acc[_slot(p, t, _STAND)] += w0 * tail[4]
    return acc


# --- Pair side bets -------------------------------------------------------------------------------------------------


def pair_distribution(shoe: Counter[Card]) -> Distribution[PairClass]:
    """The exact law of the `PairClass` of the next deal: ordered first four cards, denominator N·(N-1)·(N-2)·(N-3).

    By exchangeability, Player cards 1 and 3 and Banker cards 2 and 4 behave like any two disjoint pairs of positions.
    Each hand is one of three kinds: `none` (different ranks), `pair` (same rank, different suit), `perfect` (the same
    card twice, from different decks). Given what the Player's two cards removed, the Banker's counts are

        perfect = F2',   pair = G' - F2',   none = (N-2)(N-3) - G',

    with F2 = Σ over cards n(n-1) and G = Σ over ranks R(R-1) (n = copies of a card, R = cards of a rank) taken on the
    shoe left. Both are linear in what the Player removed, so per Player kind it suffices to know Σ w, Σ w·F2' and
    Σ w·G', which are closed-form sums over cards and ranks. The `none` kind is the total minus the other two; the
    totals over every Player draw follow from exchangeability: N(N-1), F2·(N-2)(N-3) and G·(N-2)(N-3).
    """
    size = _check_shoe(shoe)
    by_rank: dict[Rank, list[int]] = {}
    for card, count in shoe.items():
        if count:
            by_rank.setdefault(card.rank, []).append(count)

    def f2(n: int) -> int:
        return n * (n - 1)

    f2_total = sum(f2(n) for counts in by_rank.values() for n in counts)  # F2
    g_total = sum(f2(sum(counts)) for counts in by_rank.values())  # G
    rest = f2(size - 2)  # ordered Banker draws from the N - 2 cards left

    # (Σ w, Σ w·F2', Σ w·G') over the Player's ordered two-card draws of each kind.
    perfect = [0, 0, 0]
    pair = [0, 0, 0]
    for counts in by_rank.values():
        r = sum(counts)
        g_after_two_of_rank = g_total - f2(r) + f2(r - 2)
        for n in counts:  # perfect: the same card twice
            w = f2(n)
            perfect[0] += w
            perfect[1] += w * (f2_total - f2(n) + f2(n - 2))
            perfect[2] += w * g_after_two_of_rank
        # pair: two cards of this rank and different suits, (n1, n2) ordered. Removing one copy of a card lowers F2
        # by 2(n - 1), so Σ n1·n2·F2' = F2·W - 4·Σ n1(n1 - 1)(R - n1), W = Σ n1·n2 = R² - Σ n².
        w_pair = r * r - sum(n * n for n in counts)
        pair[0] += w_pair
        pair[1] += f2_total * w_pair - 4 * sum(f2(n) * (r - n) for n in counts)
        pair[2] += g_after_two_of_rank * w_pair
    everything = [f2(size), f2_total * rest, g_total * rest]
    none = [everything[i] - perfect[i] - pair[i] for i in range(3)]

    weights: dict[PairClass, int] = {}
    for player_kind, (w0, wf, wg) in (("none", none), ("pair", pair), ("perfect", perfect)):
        for banker_kind, weight in (("none", rest * w0 - wg), ("pair", wg - wf), ("perfect", wf)):
            if weight:
                cls = PairClass(
                    player_pair=player_kind != "none",
                    banker_pair=banker_kind != "none",
                    player_perfect_pair=player_kind == "perfect",
                    banker_perfect_pair=banker_kind == "perfect",
                )
                weights[cls] = weight
    return Distribution(weights, sum(weights.values()))
