"""Wallets, bets and settlement: limits and policies, the betting window, exactly-once settlement, money conserved."""

from __future__ import annotations

import contextlib
import random
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from studio.betting import LATE, BettingService
from studio.clock import ManualClock
from studio.domain import commands as c
from studio.domain.cards import Card
from studio.domain.errors import BetRejected
from studio.domain.paytable import BetType
from studio.domain.procedure_config import ProcedureConfig
from studio.domain.rules import deal, next_recipient, outcome
from studio.domain.settlement import Void
from studio.settings import load_table_config
from studio.simulation import seeded_shoe
from studio.store_memory import MemoryEventStore
from studio.table_service import TableService
from studio.wallets import WalletError, WalletStore

DEALER = "dealer:ann"
TABLE = load_table_config()
START = datetime(2026, 11, 29, 12, tzinfo=UTC)


class Table:
    """A table service (in memory) whose rounds open and close by hand, and a betting service on a ledger in a SQLite
    file (`db` a path) or a PostgreSQL database (`db` its URL)."""

    def __init__(self, db: Path | str, table_id: str = "T1", player_banker: bool = False) -> None:
        self.clock = ManualClock(START)
        config = ProcedureConfig(burn_after_shuffle=0)
        self.service = TableService(table_id, MemoryEventStore(), self.clock, config)
        self.wallets = WalletStore(db if isinstance(db, str) else f"sqlite:///{db}", self.clock)
        self.betting = BettingService(table_id, self.wallets, TABLE.limits, TABLE.pay_table, self.clock, player_banker)
        self.service.handle(c.ConfirmShuffle(DEALER))
        self.service.handle(c.PlaceCutCard(DEALER))

    def open(self) -> str:
        self.service.handle(c.OpenBetting(DEALER))
        assert self.service.state.round is not None
        return self.service.state.round.game_id

    def bet(self, player: str, bet_id: str, bet_type: str, stake: int) -> None:
        self.betting.place(self.service.state, "gs1", player, bet_id, bet_type, stake)

    def deal(self, codes: str) -> str:
        self.clock.advance(20)
        self.service.handle(c.CloseBetting(DEALER))
        for code in codes.split():
            self.service.handle(c.DrawCard("device:shoe", c.CardRead(Card.parse(code), "shoe")))
        result = self.service.state.last_result
        assert result is not None
        self.betting.settle_round(result.game_id, outcome(list(result.player), list(result.banker)))
        return result.game_id


@pytest.fixture(params=["sqlite", "postgresql"])
def table(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Table]:
    """The ledger tests run on both databases the studio supports."""
    if request.param == "postgresql":
        table = Table(str(request.getfixturevalue("postgres_url")))
    else:
        table = Table(tmp_path / "ledger.db")
    yield table
    table.wallets.close()


def test_a_banker_win_pays_less_commission_and_the_ledger_adds_up(table: Table) -> None:
    table.wallets.deposit("p1", "gs1", 100_000)
    game = table.open()
    table.bet("p1", "b1", "banker", 1_000)
    table.bet("p1", "b2", "player", 2_000)
    table.bet("p1", "b3", "tie", 500)
    assert table.wallets.balance("p1") == 100_000 - 3_500
    assert table.wallets.totals(game) == {"banker": 1_000, "player": 2_000, "tie": 500}
    # Player QH 2C (2), Banker 9D 10S (9): Banker natural 9 wins.
    table.deal("QH 9D 2C 10S")
    assert table.wallets.balance("p1") == 100_000 - 3_500 + 1_950
    assert table.wallets.balance("p1") == table.wallets.ledger_sum("p1")
    kinds = [(e["kind"], e["bet_id"], e["amount"]) for e in table.wallets.entries("p1")]
    assert kinds[-4:] == [("win", "b1", 2_000), ("commission", "b1", -50), ("lose", "b2", 0), ("lose", "b3", 0)]
    # The game server reads each bet's outcome, in settlement order, and pages on from the last id.
    outcomes = table.wallets.outcomes("gs1")
    assert [(o["bet_id"], o["verdict"], o["returned"]) for o in outcomes] == [
        ("b1", "win", 1_950), ("b2", "lose", 0), ("b3", "lose", 0)]  # fmt: skip
    assert table.wallets.outcomes("gs1", after=outcomes[0]["id"])[0]["bet_id"] == "b2"
    assert table.wallets.outcomes("another-server") == []
    assert {row["bet_id"]: row["verdict"] for row in table.wallets.bet_rows("p1")} == {
        "b1": "win", "b2": "lose", "b3": "lose"}  # fmt: skip


def test_a_tie_pushes_player_and_banker_and_pays_the_tie(table: Table) -> None:
    table.wallets.deposit("p1", "gs1", 10_000)
    table.open()
    table.bet("p1", "b1", "banker", 1_000)
    table.bet("p1", "b2", "tie", 500)
    table.deal("QH KS 7D 7C")  # 7 - 7, both stand
    assert table.wallets.balance("p1") == 10_000 - 1_500 + 1_000 + 4_500


def test_bets_are_idempotent_and_limited(table: Table) -> None:
    table.wallets.deposit("p1", "gs1", 100_000)
    table.open()
    table.bet("p1", "b1", "banker", 1_000)
    table.bet("p1", "b1", "banker", 1_000)  # the same bet again: placed once
    assert table.wallets.balance("p1") == 99_000
    with pytest.raises(BetRejected, match="was used for another bet"):
        table.bet("p1", "b1", "banker", 2_000)
    with pytest.raises(BetRejected, match=r"under the table minimum of 10\.00 USD"):
        table.bet("p1", "b2", "player", 999)
    with pytest.raises(BetRejected, match=r"over the table maximum of 400.00 USD for this bet \(390.00 USD left\)"):
        table.bet("p1", "b3", "banker", 39_100)
    with pytest.raises(BetRejected, match="balance 100 is less than the stake"):
        table.wallets.deposit("p2", "gs1", 100)
        table.bet("p2", "b4", "banker", 1_000)
    with pytest.raises(BetRejected, match="no wallet"):
        table.bet("ghost", "b5", "banker", 1_000)


def test_a_bet_after_no_more_bets_is_rejected_with_the_reason(table: Table) -> None:
    table.wallets.deposit("p1", "gs1", 10_000)
    with pytest.raises(BetRejected, match=LATE):
        table.bet("p1", "b0", "banker", 1_000)  # no round open
    table.open()
    table.clock.advance(15)  # the timer ran out: no bet, even before the dealer says it
    with pytest.raises(BetRejected, match=LATE):
        table.bet("p1", "b1", "banker", 1_000)
    assert table.wallets.balance("p1") == 10_000


def test_undo_double_and_repeat(table: Table) -> None:
    table.wallets.deposit("p1", "gs1", 100_000)
    game = table.open()
    table.bet("p1", "b1", "banker", 1_000)
    table.bet("p1", "b2", "2 way", 500)
    undone = table.betting.undo_last(table.service.state, "p1")
    assert undone.bet_type is BetType.BANKER_PAIR and table.wallets.balance("p1") == 100_000 - 1_500
    assert undone.status == "cancelled"  # the bet as it now is, not as it was
    doubled = table.betting.double(table.service.state, "gs1", "p1")
    assert sorted((b.bet_type.value, b.stake) for b in doubled) == [("banker", 1_000), ("player_pair", 500)]
    with pytest.raises(BetRejected, match="doubled already"):
        table.betting.double(table.service.state, "gs1", "p1")
    table.deal("QH 9D 2C 10S")
    table.open()
    repeated = table.betting.repeat(table.service.state, "gs1", "p1", game)
    assert sorted((b.bet_type.value, b.stake) for b in repeated) == sorted(
        [("banker", 1_000), ("player_pair", 500), ("banker", 1_000), ("player_pair", 500)])  # fmt: skip
    assert table.wallets.balance("p1") == table.wallets.ledger_sum("p1")


def test_double_is_capped_at_the_maximum(table: Table) -> None:
    table.wallets.deposit("p1", "gs1", 100_000)
    table.open()
    table.bet("p1", "b1", "banker", 30_000)
    (extra,) = table.betting.double(table.service.state, "gs1", "p1")
    assert extra.stake == 10_000  # 40,000 is the Banker maximum


def test_a_void_refunds_every_stake_and_nothing_is_settled_twice(table: Table) -> None:
    table.wallets.deposit("p1", "gs1", 10_000)
    game = table.open()
    table.bet("p1", "b1", "banker", 1_000)
    table.bet("p1", "b2", "tie", 500)
    assert table.betting.settle_round(game, Void("misdeal")) is True
    assert table.wallets.balance("p1") == 10_000
    assert table.betting.settle_round(game, Void("misdeal")) is False
    assert table.wallets.settle(game, "void", [], {}) is False  # the mark refuses a second writer too
    assert table.wallets.balance("p1") == 10_000 == table.wallets.ledger_sum("p1")


def test_deposits_are_checked(table: Table) -> None:
    with pytest.raises(WalletError, match="positive whole number"):
        table.wallets.deposit("p1", "gs1", 0)
    table.wallets.deposit("p1", "gs1", 10)
    with pytest.raises(WalletError, match="belongs to another game server"):
        table.wallets.deposit("p1", "gs2", 10)


BET_TYPES = ["banker", "player", "tie", "player_pair", "banker_pair", "either_pair", "perfect_pair", "player_bonus",
             "banker_bonus", "2 way", "3 way"]  # fmt: skip


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10**6), rounds=st.integers(1, 4))
def test_money_is_conserved_across_random_rounds_and_voids(tmp_path_factory: pytest.TempPathFactory, seed: int,
                                                           rounds: int) -> None:  # fmt: skip
    rng = random.Random(seed)
    table = Table(tmp_path_factory.mktemp("ledger") / "l.db")
    players = [f"p{n}" for n in range(4)]
    for player in players:
        table.wallets.deposit(player, "gs1", 1_000_000)
    cards = iter(seeded_shoe(8, rng))
    house = 0
    for number in range(rounds):
        game = table.open()
        for n in range(rng.randint(1, 12)):
            with contextlib.suppress(BetRejected):
                table.bet(rng.choice(players), f"{game}-{n}", rng.choice(BET_TYPES), rng.randint(500, 5_000))
        staked = sum(b.stake for b in table.wallets.bets(game) if b.status == "open")
        if number % 3 == 2:
            table.betting.settle_round(game, Void("test void"))
            returned = staked
            table.service.handle(c.DeclareError(DEALER, "misdeal"))
            table.service.handle(c.VoidRound("pit_boss:bob", "misdeal"))
            for _ in range(3):
                table.service.handle(c.DrawCard("device:shoe", c.CardRead(next(cards), "shoe")))
        else:
            player_hand, banker_hand = deal_from(cards)
            table.deal(" ".join(card.code for card in interleave(player_hand, banker_hand)))
            returned = sum(row["returned"] or 0 for p in players for row in table.wallets.bet_rows(p)
                           if row["game_id"] == game)  # fmt: skip
        house += staked - returned
    balances = sum(table.wallets.balance(p) for p in players)
    assert balances + house == 4 * 1_000_000  # stakes in = payouts + refunds + house result
    assert all(table.wallets.balance(p) == table.wallets.ledger_sum(p) for p in players)


def deal_from(cards: object) -> tuple[list[Card], list[Card]]:
    drawn = [next(cards) for _ in range(6)]  # type: ignore[call-overload]
    for count in range(4, 7):
        player, banker = deal(drawn[:count])
        if next_recipient(player, banker) is None:
            return player, banker
    raise AssertionError("six cards always complete a deal")


def interleave(player: list[Card], banker: list[Card]) -> list[Card]:
    order = [player[0], banker[0], player[1], banker[1]]
    if len(player) == 3:
        order.append(player[2])
    if len(banker) == 3:
        order.append(banker[2])
    return order
