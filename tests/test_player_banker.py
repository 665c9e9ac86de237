"""Player as banker (seed 001): the bank's requirement, approvals, its result and the house's 1.5% commission."""

from __future__ import annotations

import contextlib
import random
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dealer_ui.app import create_app
from dealer_ui.runtime import StudioSettings
from studio.domain import commands as c
from studio.domain.cards import Card
from studio.domain.errors import BetRejected, ConfigError
from studio.domain.paytable import BetType, DealFacts
from studio.domain.player_banker import BankCover, bank_result, possible_deals, required_bank
from studio.domain.rules import outcome
from studio.domain.settlement import Bet, Void, settle
from studio.settings import load_table_config
from studio.simulation import seeded_shoe
from studio.wallets import WalletError
from tests.test_betting import Table, deal_from, interleave

TABLE = load_table_config()
DEALER = "dealer:ann"


def test_the_bank_needs_nine_table_maximums_plus_one_and_a_half_percent() -> None:
    # The largest maximum of the default table is 400.00 (Player and Banker): 9 × 40,000 = 360,000, + 1.5% = 5,400.
    assert required_bank(TABLE.limits) == 365_400


def test_the_bank_takes_losing_stakes_pays_winners_and_pays_the_house() -> None:
    result = outcome([Card.parse("QH"), Card.parse("2C")], [Card.parse("9D"), Card.parse("10S")])  # Banker 9 wins
    bets = [Bet("a", BetType.BANKER, 10_000), Bet("b", BetType.PLAYER, 20_000), Bet("c", BetType.TIE, 1_000)]
    settled = settle(bets, result, TABLE.pay_table, TABLE.limits)
    bank = bank_result(settled)
    # Banker bet returns 19,500 (the bank pays 9,500); player and tie lose 21,000 to the bank.
    assert (bank.staked, bank.gross, bank.commission, bank.net) == (31_000, 11_500, 465, 11_035)
    refunded = settle(bets, Void("misdeal"), TABLE.pay_table)
    assert bank_result(refunded) == type(bank)(0, 0, 0)  # a void costs the bank nothing


def test_a_round_against_a_player_bank(tmp_path: Path) -> None:
    table = Table(tmp_path / "l.db", "T9", player_banker=True)
    table.wallets.deposit("bank", "gs1", 400_000)
    table.wallets.deposit("p1", "gs1", 100_000)
    with pytest.raises(WalletError, match="needs a balance of 365400"):
        table.wallets.deposit("poor", "gs1", 1_000)
        table.wallets.take_bank("T9", "poor", "gs1", False, required_bank(TABLE.limits))
    table.open()
    with pytest.raises(BetRejected, match="nobody holds the bank"):
        table.betting.place(table.service.state, "gs1", "p1", "b1", "player", 10_000)
    table.wallets.take_bank("T9", "bank", "gs1", False, required_bank(TABLE.limits))
    with pytest.raises(BetRejected, match="has not approved this round"):
        table.betting.place(table.service.state, "gs1", "p1", "b1", "player", 10_000)
    table.betting.approve_round(table.service.state, "bank")
    with pytest.raises(BetRejected, match="cannot bet against their own bank"):
        table.betting.place(table.service.state, "gs1", "bank", "b0", "player", 10_000)
    table.betting.place(table.service.state, "gs1", "p1", "b1", "player", 10_000)
    table.betting.place(table.service.state, "gs1", "p1", "b2", "tie", 1_000)
    table.deal("9C 2D KH 10S")  # Player 9 against Banker 2: the player bet wins 10,000, the tie loses 1,000
    assert table.wallets.balance("p1") == 100_000 - 11_000 + 20_000
    # The bank paid 10,000, took 1,000, and paid the house 1.5% of 11,000 = 165.
    assert table.wallets.balance("bank") == 400_000 - 10_000 + 1_000 - 165
    assert table.wallets.balance("bank") == table.wallets.ledger_sum("bank")
    # Money is conserved: what the players and the bank hold now, plus the house's commission, is what they had.
    assert table.wallets.balance("bank") + table.wallets.balance("p1") + 165 == 400_000 + 100_000


def test_auto_approve_and_the_api(tmp_path: Path) -> None:
    table_file = tmp_path / "t9.toml"
    table_file.write_text('[table]\nid = "T9"\nbanker = "player"\n[procedure]\nburn_after_shuffle = 0\n')
    app = create_app(StudioSettings(database=str(tmp_path / "s.db"), demo=True, table_files=(table_file,)))
    with TestClient(app) as client:
        server = {"X-API-Key": app.state.studio.users.add_api_key("gs1")}
        for player, amount in (("bank", 400_000), ("p1", 50_000)):
            client.post(f"/api/wallets/{player}/deposit", json={"amount": amount}, headers=server)
        taken = client.post("/api/tables/T9/banker", json={"player_id": "bank", "auto_approve": True}, headers=server)
        assert taken.status_code == 200 and taken.json()["required_balance"] == 365_400
        assert client.get("/api/tables/T9/banker", headers=server).json()["banker"]["player_id"] == "bank"
        client.post("/api/login", json={"name": "dealer", "password": "dealer"})
        client.post("/api/tables/T9/shuffle")
        client.post("/api/tables/T9/cut", json={})
        client.post("/api/tables/T9/open-betting")
        client.cookies.clear()
        bet = {"bet_id": "b1", "player_id": "p1", "bet_type": "banker", "stake": 5_000}
        assert client.post("/api/tables/T9/bets", json=bet, headers=server).status_code == 200  # auto-approved
        leave = client.post("/api/tables/T9/banker/leave", json={"player_id": "bank"}, headers=server)
        assert leave.status_code == 409 and "between rounds" in leave.json()["detail"]


def test_a_house_table_has_no_player_bank(tmp_path: Path) -> None:
    app = create_app(StudioSettings(database=str(tmp_path / "s.db"), demo=True))
    with TestClient(app) as client:
        server = {"X-API-Key": app.state.studio.users.add_api_key("gs1")}
        refused = client.post("/api/tables/T1/banker", json={"player_id": "p"}, headers=server)
        assert refused.status_code == 409 and "banked by the house" in refused.json()["detail"]


def test_bad_banker_setting(tmp_path: Path) -> None:
    table_file = tmp_path / "t.toml"
    table_file.write_text('[table]\nbanker = "dealer"\n')
    with pytest.raises(ConfigError, match=r"table\.banker"):
        load_table_config(table_file)
    assert replace(TABLE, player_banker=True).player_banker


# The bank covers what is bet against it (seed 001): never below zero.


def _banked_table(tmp_path: Path, bank_balance: int) -> Table:
    table = Table(tmp_path / "l.db", "T9", player_banker=True)
    table.wallets.deposit("bank", "gs1", bank_balance)
    table.wallets.take_bank("T9", "bank", "gs1", True, required_bank(TABLE.limits))
    return table


def test_the_bank_refuses_a_bet_it_could_not_pay(tmp_path: Path) -> None:
    # The case: twelve players bet Tie 50.00 on a bank holding just the minimum, and a natural tie comes.
    table = _banked_table(tmp_path, required_bank(TABLE.limits))  # 3,654.00
    table.open()
    accepted = []
    for n in range(12):
        table.wallets.deposit(f"p{n}", "gs1", 10_000)
        try:
            table.bet(f"p{n}", f"b{n}", "tie", 5_000)
            accepted.append(n)
        except BetRejected as refused:
            assert "the bank cannot cover this bet: it holds 3654.00" in str(refused)
            assert table.wallets.balance(f"p{n}") == 10_000  # a refused bet takes nothing
    # Each Tie 50.00 can cost the bank 400.00 and 0.75 of commission: 9 fit in 3,654.00, a 10th does not.
    assert accepted == list(range(9))
    table.deal("9C 9D KH 10S")  # Player 9 against Banker 9, a natural tie
    assert table.wallets.balance("bank") == 365_400 - 9 * 40_000 - 675 == 4_725
    assert table.wallets.balance("bank") == table.wallets.ledger_sum("bank")


def test_the_worst_case_counts_bets_that_cannot_win_together_once(tmp_path: Path) -> None:
    # Player and Banker cannot both win: 400 on each costs the bank at worst what one of them wins, plus commission.
    table = _banked_table(tmp_path, required_bank(TABLE.limits))
    table.open()
    for player, side in (("p1", "player"), ("p2", "banker")):
        table.wallets.deposit(player, "gs1", 40_000)
        table.bet(player, f"{player}-b", side, 40_000)
    assert BankCover.of(TABLE.pay_table).exposure({BetType.PLAYER: 40_000, BetType.BANKER: 40_000}, 2) == 1_204


def test_a_banker_holds_one_bank_and_does_not_bet_while_holding_it(tmp_path: Path) -> None:
    table = _banked_table(tmp_path, 1_000_000)
    with pytest.raises(WalletError, match="already holds the bank at T9"):
        table.wallets.take_bank("T8", "bank", "gs1", True, required_bank(TABLE.limits))
    house = Table(tmp_path / "l.db", "T1")
    house.open()
    with pytest.raises(BetRejected, match="holds the bank at T9 and cannot bet"):
        house.bet("bank", "x1", "player", 1_000)
    house.wallets.close()


def test_the_bank_is_not_left_while_its_round_is_in_play(tmp_path: Path) -> None:
    table = _banked_table(tmp_path, 1_000_000)
    table.open()
    table.wallets.deposit("p1", "gs1", 10_000)
    table.bet("p1", "b1", "player", 1_000)
    with pytest.raises(WalletError, match="round in play"):
        table.wallets.leave_bank("T9", "bank")
    table.deal("9C 2D KH 10S")
    table.wallets.leave_bank("T9", "bank")
    assert table.wallets.banker("T9") is None


# One deal for each way the standard pay table tells deals apart (every bet resolved alike): settling against these is
# settling against every possible deal.
DEALS_APART = list({tuple(TABLE.pay_table.resolve(b, d) for b in BetType): d for d in possible_deals()}.values())


@given(st.lists(st.tuples(st.sampled_from(list(BetType)), st.integers(1, 100_000)), min_size=1, max_size=12))
@settings(max_examples=60, deadline=None)
def test_the_cover_is_never_less_than_what_any_deal_costs_the_bank(stakes: list[tuple[BetType, int]]) -> None:
    cover = BankCover.of(TABLE.pay_table)
    totals: Counter[BetType] = Counter()
    for bet_type, stake in stakes:
        totals[bet_type] += stake
    needed = cover.exposure(totals, len(stakes))
    bets = [Bet(f"b{n}", bet_type, stake) for n, (bet_type, stake) in enumerate(stakes)]
    capped = max(-bank_result(settle(bets, deal, TABLE.pay_table, TABLE.limits)).net for deal in DEALS_APART)
    uncapped = max(-bank_result(settle(bets, deal, TABLE.pay_table)).gross for deal in DEALS_APART)
    assert capped <= needed  # never short, maximum payouts or not
    # And tight: above the worst case without maximum payouts only by the house's commission and rounding.
    commission = -(-sum(totals.values()) * 15 // 1000)
    assert needed <= max(uncapped, 0) + commission + 2 * len(stakes)


@given(st.integers(0, 2**32))
@settings(max_examples=300, deadline=None)
def test_every_real_deal_is_one_of_the_possible_deals(seed: int) -> None:
    player, banker = deal_from(iter(seeded_shoe(8, random.Random(seed))))
    assert DealFacts.of(outcome(player, banker)) in set(possible_deals())


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_a_player_bank_never_goes_below_zero(tmp_path_factory: pytest.TempPathFactory, data: st.DataObject) -> None:
    """Random rounds of random bets against a bank of random size, some voided: the bank never goes below zero."""
    table = _banked_table(tmp_path_factory.mktemp("bank"), data.draw(st.integers(365_400, 450_000), label="bank"))
    cards = iter(seeded_shoe(8, random.Random(data.draw(st.integers(0, 2**32), label="seed"))))
    # Mostly the bets that cost a bank most (Tie 8:1, Perfect Pair 25:1 or 200:1), so that the cover is tested.
    bet_types = [*(b.value for b in BetType), "2 Way", "3 Way", *["tie", "perfect_pair", "3 Way"] * 4]
    for n in range(16):
        table.wallets.deposit(f"p{n}", "gs1", 100_000)
    for _ in range(data.draw(st.integers(1, 4), label="rounds")):
        game = table.open()
        for n in range(data.draw(st.integers(0, 40), label="bets")):
            player = f"p{n % 16}"
            if table.wallets.balance(player) < 50_000:
                table.wallets.deposit(player, "gs1", 100_000)
            with contextlib.suppress(BetRejected):
                table.bet(
                    player, f"{game}-{n}", data.draw(st.sampled_from(bet_types)), data.draw(st.integers(500, 40_000))
                )
        if data.draw(st.booleans(), label="void"):
            table.service.handle(c.DeclareError(DEALER, "misdeal"))
            table.service.handle(c.VoidRound("pit_boss:bob", "misdeal"))
            table.betting.settle_round(game, Void("misdeal"))
            for _ in range(3):
                table.service.handle(c.DrawCard("device:shoe", c.CardRead(next(cards), "shoe")))
        elif data.draw(st.booleans(), label="costly deal"):
            # What costs a bank most: a natural tie of two perfect pairs (Tie, both pairs, Perfect Pair 200:1, Either
            # Pair all win), or a natural tie without pairs.
            table.deal(data.draw(st.sampled_from(["4H 4D 4H 4D", "9C 9D KH 10S"])))
        else:
            player_hand, banker_hand = deal_from(cards)
            table.deal(" ".join(card.code for card in interleave(player_hand, banker_hand)))
        assert table.wallets.balance("bank") >= 0
        assert table.wallets.balance("bank") == table.wallets.ledger_sum("bank")
    table.wallets.close()
