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
from studio.domain.player_banker import BankCover, bank_result, points_for, possible_deals, required_bank
from studio.domain.rules import outcome
from studio.domain.settlement import Bet, Void, settle
from studio.settings import load_table_config
from studio.simulation import seeded_shoe
from studio.wallets import PlacedBet, WalletError
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
    # While nobody holds the bank, the house banks the table (seed 001: banking is optional).
    table.open()
    table.betting.place(table.service.state, "gs1", "p1", "b0", "player", 1_000)
    table.deal("9C 2D KH 10S")  # Player 9 wins against the house
    assert table.wallets.balance("p1") == 101_000 and table.wallets.balance("bank") == 400_000
    table.wallets.take_bank("T9", "bank", "gs1", False, required_bank(TABLE.limits))
    table.open()
    with pytest.raises(BetRejected, match="has not approved this round"):
        table.betting.place(table.service.state, "gs1", "p1", "b1", "player", 10_000)
    table.betting.approve_round(table.service.state, "bank")
    with pytest.raises(BetRejected, match="cannot bet against their own bank"):
        table.betting.place(table.service.state, "gs1", "bank", "b0", "player", 10_000)
    table.betting.place(table.service.state, "gs1", "p1", "b1", "player", 10_000)
    table.betting.place(table.service.state, "gs1", "p1", "b2", "tie", 1_000)
    table.deal("9C 2D KH 10S")  # Player 9 against Banker 2: the player bet wins 10,000, the tie loses 1,000
    assert table.wallets.balance("p1") == 101_000 - 11_000 + 20_000
    # The bank paid 10,000, took 1,000, and paid the house 1.5% of 11,000 = 165.
    assert table.wallets.balance("bank") == 400_000 - 10_000 + 1_000 - 165
    assert table.wallets.balance("bank") == table.wallets.ledger_sum("bank")
    # Money is conserved: what the players and the bank hold now, plus the house's commission, is what they had.
    assert table.wallets.balance("bank") + table.wallets.balance("p1") + 165 == 400_000 + 101_000


def test_auto_approve_and_the_api(tmp_path: Path) -> None:
    table_file = tmp_path / "t9.toml"
    table_file.write_text(
        '[table]\nid = "T9"\nbanker = "player"\nbank_min_points = 0\n[procedure]\nburn_after_shuffle = 0\n'
    )
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


def _banked_table(where: Path | str, bank_balance: int) -> Table:
    """A player-banker table whose bank "bank" holds `bank_balance` (auto-approve); `where` a folder for a SQLite file,
    or a PostgreSQL database's URL."""
    table = Table(where if isinstance(where, str) else where / "l.db", "T9", player_banker=True)
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
    """Random rounds of random bets against a bank of random size, some voided, with players and the banker
    disconnecting before and after "no more bets" and bankers who let their approval time run out: the bank never goes
    below zero, every balance and every points balance equals its ledger, and no stake is lost (every bet of a closed
    round is settled or refunded)."""
    table = _banked_table(tmp_path_factory.mktemp("bank"), data.draw(st.integers(365_400, 450_000), label="bank"))
    table.betting.approval_seconds = 5  # less than the 15 s of betting: a timeout leaves the house the rest
    cards = iter(seeded_shoe(8, random.Random(data.draw(st.integers(0, 2**32), label="seed"))))
    # Mostly the bets that cost a bank most (Tie 8:1, Perfect Pair 25:1 or 200:1), so that the cover is tested.
    bet_types = [*(b.value for b in BetType), "2 Way", "3 Way", *["tie", "perfect_pair", "3 Way"] * 4]
    players = [f"p{n}" for n in range(16)]
    for player in players:
        table.wallets.deposit(player, "gs1", 100_000)
    for _ in range(data.draw(st.integers(1, 4), label="rounds")):
        if table.wallets.banker("T9") is None:  # lost to a timeout or a disconnect: the bank is taken again
            auto = data.draw(st.booleans(), label="auto-approve")
            short = required_bank(TABLE.limits) - table.wallets.balance("bank")
            if short > 0:
                table.wallets.deposit("bank", "gs1", short)
            table.wallets.take_bank("T9", "bank", "gs1", auto, required_bank(TABLE.limits))
        game = table.open()
        seat = table.wallets.banker("T9")
        assert seat is not None
        if not seat["auto_approve"]:
            if data.draw(st.booleans(), label="approves"):
                table.betting.approve_round(table.service.state, "bank")
            else:  # the approval time runs out (the timer's call): the house banks the rest of the round
                table.clock.advance(5)
                assert table.betting.expire_approval(table.service.state) == "bank"
        for n in range(data.draw(st.integers(0, 40), label="bets")):
            player = players[n % 16]
            action = data.draw(st.sampled_from(["bet"] * 8 + ["disconnect", "banker disconnects"]), label="action")
            if action == "disconnect":
                before = table.wallets.balance(player)
                stakes = sum(bet.stake for bet in table.wallets.bets(game, player, status="open"))
                table.betting.disconnect(table.service.state, player, "gs1")
                assert table.wallets.balance(player) == before + stakes  # every stake back, none twice
                assert table.wallets.bets(game, player, status="open") == []
                continue
            if action == "banker disconnects":
                table.betting.disconnect(table.service.state, "bank", "gs1")
                continue
            if table.wallets.balance(player) < 50_000:
                table.wallets.deposit(player, "gs1", 100_000)
            with contextlib.suppress(BetRejected):
                table.bet(
                    player, f"{game}-{n}", data.draw(st.sampled_from(bet_types)), data.draw(st.integers(500, 40_000))
                )
        banker = table.wallets.approver(game)
        if data.draw(st.booleans(), label="void"):
            table.service.handle(c.DeclareError(DEALER, "misdeal"))
            if data.draw(st.booleans(), label="disconnect while suspended"):  # after "no more bets": nothing refunded
                open_bets = table.wallets.bets(game, status="open")
                for player in {bet.player_id for bet in open_bets}:
                    table.betting.disconnect(table.service.state, player, "gs1")
                assert table.wallets.bets(game, status="open") == open_bets
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
        assert table.wallets.bets(game, status="open") == []  # every stake settled or refunded: nothing lost
        seat = table.wallets.banker("T9")
        assert seat is None or seat["release_after"] is None  # a disconnected banker's bank ends with its round
        if banker is None:
            assert not any(e["kind"] == "bank" and e["game_id"] == game for e in table.wallets.entries("bank"))
        for who in ("bank", *players):
            assert table.wallets.balance(who) == table.wallets.ledger_sum(who)
            assert table.wallets.points(who) == table.wallets.points_sum(who)
        assert table.wallets.balance("bank") >= 0
    table.wallets.close()


# Credit points (seed 001): a point per whole unit staked as a player, one deducted per unit played against the bank.


def test_points_are_whole_major_units_of_a_bet_settled_as_won_or_lost() -> None:
    bet = Bet("a", BetType.PLAYER, 1_099)  # 10.99 USD
    won, pushed, refunded = (settle([bet], deal, TABLE.pay_table)[0] for deal in (
        outcome([Card.parse("9C"), Card.parse("KD")], [Card.parse("2H"), Card.parse("KS")]),
        outcome([Card.parse("7C"), Card.parse("KD")], [Card.parse("7H"), Card.parse("KS")]),
        Void("misdeal")))  # fmt: skip
    assert (points_for(won, 100), points_for(pushed, 100), points_for(refunded, 100)) == (10, 0, 0)
    assert points_for(won, 1) == 1_099  # a currency without minor units: a point per unit


def test_points_are_earned_at_settlement_and_the_bank_is_deducted_as_much(tmp_path: Path) -> None:
    table = _banked_table(tmp_path, 1_000_000)
    for player in ("p1", "p2"):
        table.wallets.deposit(player, "gs1", 100_000)
    table.open()
    table.bet("p1", "b1", "player", 1_050)  # 10.50: 10 points once settled
    table.bet("p1", "b2", "tie", 599)  # 5.99: 5 points
    table.bet("p2", "b3", "banker", 2_000)
    table.bet("p2", "b4", "banker", 1_000)
    table.betting.undo_last(table.service.state, "p2")  # an undone bet earns nothing
    assert table.wallets.points("p1") == 0  # nothing before the settlement
    table.deal("9C 2D KH 10S")  # Player 9 wins: b1 wins, b2 and b3 lose
    assert (table.wallets.points("p1"), table.wallets.points("p2"), table.wallets.points("bank")) == (15, 20, -35)
    table.open()
    table.bet("p1", "b5", "player", 1_000)
    table.bet("p2", "b6", "tie", 500)
    table.deal("7C 7D KH 10S")  # 7 against 7: the player bet pushes (no point), the tie wins (5 points)
    assert (table.wallets.points("p1"), table.wallets.points("p2"), table.wallets.points("bank")) == (15, 25, -40)
    game = table.open()
    table.bet("p1", "b7", "player", 5_000)
    table.service.handle(c.DeclareError(DEALER, "misdeal"))
    table.service.handle(c.VoidRound("pit_boss:bob", "misdeal"))
    table.betting.settle_round(game, Void("misdeal"))  # a voided round moves no point
    assert (table.wallets.points("p1"), table.wallets.points("bank")) == (15, -40)
    for player in ("p1", "p2", "bank"):
        assert table.wallets.points(player) == table.wallets.points_sum(player)  # points are the sum of the entries
    # At a house table too: the points that let a player bank are earned playing anywhere in the studio.
    house = Table(tmp_path / "l.db", "T1")
    house.open()
    house.bet("p1", "h1", "banker", 4_000)
    house.deal("9C 2D KH 10S")
    assert house.wallets.points("p1") == 55
    house.wallets.close()


def test_taking_the_bank_needs_fifty_points_and_refusing_changes_nothing(tmp_path: Path) -> None:
    table = Table(tmp_path / "l.db", "T9", player_banker=True)
    table.betting.bank_min_points = 50
    table.wallets.deposit("rich", "gs1", 1_000_000)
    with pytest.raises(WalletError, match="needs 50 credit points; rich has 0"):
        table.betting.take_bank(table.service.state, "gs1", "rich", False)
    assert table.wallets.banker("T9") is None and table.wallets.events("rich") == []
    table.open()  # nobody holds the bank: the house does, and rich plays against it
    table.bet("rich", "r1", "player", 4_900)
    with pytest.raises(WalletError, match="only between rounds"):
        table.betting.take_bank(table.service.state, "gs1", "rich", False)
    table.deal("9C 2D KH 10S")
    with pytest.raises(WalletError, match="needs 50 credit points; rich has 49"):
        table.betting.take_bank(table.service.state, "gs1", "rich", False)
    table.open()
    table.bet("rich", "r2", "banker", 1_000)
    table.deal("9C 2D KH 10S")  # a lost bet earns its points as a won one does
    assert table.betting.take_bank(table.service.state, "gs1", "rich", False) == 365_400
    assert table.wallets.banker("T9")["player_id"] == "rich"  # type: ignore[index]
    assert [(e["kind"], e["actor"]) for e in table.wallets.events("rich")] == [("bank_taken", "gs1")]


# The banker's approval timer (seed 001: 35 s as banker).


def test_a_banker_who_does_not_approve_in_time_loses_the_bank_to_the_house(tmp_path: Path) -> None:
    table = Table(tmp_path / "l.db", "T9", player_banker=True)
    table.betting.approval_seconds = 5  # shorter than the 15 s of betting: the house takes the rest of the round
    table.wallets.deposit("bank", "gs1", 400_000)
    table.wallets.deposit("p1", "gs1", 100_000)
    table.wallets.take_bank("T9", "bank", "gs1", False, required_bank(TABLE.limits))
    game = table.open()
    table.clock.advance(4.9)
    assert table.betting.expire_approval(table.service.state) is None  # 0.1 s left
    with pytest.raises(BetRejected, match="not approved this round"):
        table.bet("p1", "b1", "player", 1_000)
    table.clock.advance(0.1)
    assert table.betting.expire_approval(table.service.state) == "bank"
    assert table.betting.expire_approval(table.service.state) is None  # once
    assert table.wallets.banker("T9") is None
    [event] = table.wallets.events("bank")[-1:]
    assert (event["kind"], event["game_id"], event["actor"]) == ("bank_timed_out", game, "studio")
    assert "did not approve" in event["detail"]
    with pytest.raises(BetRejected, match="does not hold the bank"):
        table.betting.approve_round(table.service.state, "bank")
    table.bet("p1", "b1", "player", 1_000)  # against the house now
    table.deal("9C 2D KH 10S")
    assert table.wallets.balance("bank") == 400_000 and table.wallets.balance("p1") == 101_000
    assert table.wallets.approver(game) is None


def test_the_approval_deadline_is_at_the_latest_when_betting_closes(tmp_path: Path) -> None:
    table = Table(tmp_path / "l.db", "T9", player_banker=True)  # 35 s to approve, but 15 s of betting
    table.wallets.deposit("bank", "gs1", 400_000)
    table.wallets.take_bank("T9", "bank", "gs1", False, required_bank(TABLE.limits))
    table.open()
    assert table.betting.approval_deadline(table.service.state) == table.service.state.round.closes_at  # type: ignore[union-attr]
    table.clock.advance(15)
    with pytest.raises(BetRejected, match="ran out: bank no longer holds the bank"):
        table.betting.approve_round(table.service.state, "bank")  # checked on the spot too, not only by the timer
    assert table.wallets.banker("T9") is None


def test_an_approved_or_auto_approving_bank_does_not_time_out(tmp_path: Path) -> None:
    table = Table(tmp_path / "l.db", "T9", player_banker=True)
    table.wallets.deposit("bank", "gs1", 400_000)
    table.wallets.take_bank("T9", "bank", "gs1", False, required_bank(TABLE.limits))
    table.open()
    table.betting.approve_round(table.service.state, "bank")
    table.clock.advance(60)
    assert table.betting.expire_approval(table.service.state) is None
    table.deal("9C 2D KH 10S")
    table.wallets.leave_bank("T9", "bank", "gs1")
    table.wallets.take_bank("T9", "bank", "gs1", True, required_bank(TABLE.limits))
    table.open()
    table.clock.advance(60)
    assert table.betting.expire_approval(table.service.state) is None  # no bet came, so nothing was auto-approved yet
    assert table.wallets.banker("T9") is not None


# Disconnects (seed 001).


@pytest.fixture(params=["sqlite", "postgresql"])
def db(request: pytest.FixtureRequest, tmp_path: Path) -> Path | str:
    """The disconnect tests run on both databases the studio supports (the bank's seat is locked on PostgreSQL)."""
    if request.param == "postgresql":
        return str(request.getfixturevalue("postgres_url"))
    return tmp_path / "l.db"


def test_a_disconnect_refunds_bets_before_no_more_bets_and_plays_out_those_after(db: Path | str) -> None:
    table = _banked_table(db, 1_000_000)
    table.wallets.deposit("p1", "gs1", 100_000)
    game = table.open()
    table.bet("p1", "b1", "player", 1_000)
    table.bet("p1", "b2", "tie", 500)
    done = table.betting.disconnect(table.service.state, "p1", "gs1")
    assert done is not None and [bet.bet_id for bet in done["refunded"]] == ["b1", "b2"] and done["bank"] is None
    assert table.wallets.balance("p1") == 100_000 == table.wallets.ledger_sum("p1")
    assert {row["bet_id"]: row["status"] for row in table.wallets.bet_rows("p1")} == {"b1": "cancelled",
                                                                                      "b2": "cancelled"}  # fmt: skip
    [event] = table.wallets.events("p1")
    assert (event["kind"], event["game_id"], event["actor"]) == ("disconnected", game, "gs1")
    assert "refunded b1, b2" in event["detail"]
    table.bet("p1", "b3", "player", 2_000)  # back again: bets as before
    table.clock.advance(20)
    table.service.handle(c.CloseBetting(DEALER))
    later = table.betting.disconnect(table.service.state, "p1", "gs1")  # after "no more bets": the round plays out
    assert later is not None and later["refunded"] == [] and [b.bet_id for b in later["plays_out"]] == ["b3"]
    for code in ["9C", "2D", "KH", "10S"]:
        table.service.handle(c.DrawCard("device:shoe", c.CardRead(Card.parse(code), "shoe")))
    table.betting.settle_round(
        game,
        outcome(
            list(table.service.state.last_result.player),  # type: ignore[union-attr]
            list(table.service.state.last_result.banker),
        ),
    )  # type: ignore[union-attr]
    assert table.wallets.balance("p1") == 102_000
    assert table.betting.disconnect(table.service.state, "p1", "gs1") is None  # nothing in play: nothing to do
    table.wallets.close()


def test_a_banker_who_disconnects_after_approving_keeps_the_bank_until_the_round_is_settled(db: Path | str) -> None:
    table = Table(db, "T9", player_banker=True)
    table.wallets.deposit("bank", "gs1", 400_000)
    table.wallets.deposit("p1", "gs1", 100_000)
    table.wallets.take_bank("T9", "bank", "gs1", False, required_bank(TABLE.limits))
    game = table.open()
    table.betting.approve_round(table.service.state, "bank")
    table.bet("p1", "b1", "tie", 1_000)
    done = table.betting.disconnect(table.service.state, "bank", "gs1")
    assert done is not None and done["bank"] == "after_round"
    table.bet("p1", "b2", "player", 1_000)  # the round goes on against the bank it approved
    table.clock.advance(60)
    assert table.betting.expire_approval(table.service.state) is None
    table.deal("9C 2D KH 10S")  # Player wins: the bank pays 1,000, takes 1,000, pays the house 30
    assert table.wallets.balance("bank") == 400_000 - 30
    assert table.wallets.banker("T9") is None  # released with the round's settlement
    kinds = [(e["kind"], e["game_id"], e["actor"]) for e in table.wallets.events("bank")]
    assert kinds[-2:] == [("disconnected", game, "gs1"), ("bank_released", game, "studio")]
    table.open()
    table.bet("p1", "b3", "player", 1_000)  # the house banks the next round
    table.deal("9C 2D KH 10S")
    assert table.wallets.balance("bank") == 400_000 - 30
    table.wallets.close()


def test_a_banker_who_disconnects_before_approving_loses_the_bank_at_once(db: Path | str) -> None:
    table = Table(db, "T9", player_banker=True)
    table.wallets.deposit("bank", "gs1", 400_000)
    table.wallets.deposit("p1", "gs1", 100_000)
    table.wallets.take_bank("T9", "bank", "gs1", False, required_bank(TABLE.limits))
    game = table.open()
    done = table.betting.disconnect(table.service.state, "bank", "gs1")
    assert done is not None and done["bank"] == "now" and table.wallets.banker("T9") is None
    assert table.wallets.events("bank")[-1]["kind"] == "bank_released"
    table.bet("p1", "b1", "player", 1_000)  # the house banks the rest of the round
    table.deal("9C 2D KH 10S")
    assert table.wallets.approver(game) is None and table.wallets.balance("bank") == 400_000
    table.wallets.close()


def test_no_timeout_while_suspended_and_no_approval_over_house_bets(tmp_path: Path) -> None:
    table = Table(tmp_path / "l.db", "T9", player_banker=True)
    table.betting.approval_seconds = 5
    table.wallets.deposit("bank", "gs1", 400_000)
    table.wallets.take_bank("T9", "bank", "gs1", False, required_bank(TABLE.limits))
    game = table.open()
    table.service.handle(c.DeclareError(DEALER, "misdeal"))
    table.clock.advance(30)
    assert table.betting.expire_approval(table.service.state) is None  # the pit boss decides first
    assert table.wallets.banker("T9") is not None
    # A bank held while bets of the round were placed against the house cannot take that round over.
    table.wallets.deposit("p1", "gs1", 10_000)
    table.wallets.place(PlacedBet("h1", "gs1", "p1", "T9", game, BetType.PLAYER, 1_000))
    with pytest.raises(WalletError, match="placed against the house already"):
        table.wallets.approve(game, "bank", "T9")
    with pytest.raises(WalletError, match="does not hold the bank at T9"):
        table.wallets.approve(game, "p1", "T9")
    assert table.wallets.approver(game) is None


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("bank_min_points = -1", r"table\.bank_min_points: expected a whole number of at least 0, got -1"),
        ('bank_min_points = "50"', r"table\.bank_min_points"),
        ("banker_approval_seconds = 0", r"table\.banker_approval_seconds: expected a whole number of seconds from 1"),
        ("banker_approval_seconds = 3.5", r"table\.banker_approval_seconds"),
        ("banker_approval_seconds = true", r"table\.banker_approval_seconds"),
    ],
)
def test_bad_player_bank_settings(tmp_path: Path, line: str, message: str) -> None:
    table_file = tmp_path / "t.toml"
    table_file.write_text(f'[table]\nbanker = "player"\n{line}\n')
    with pytest.raises(ConfigError, match=message):
        load_table_config(table_file)


def test_the_player_bank_settings_default_to_the_seed() -> None:
    assert (TABLE.bank_min_points, TABLE.approval_seconds) == (50, 35)
