"""Player as banker (seed 001): the bank's requirement, approvals, its result and the house's 1.5% commission."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from dealer_ui.app import create_app
from dealer_ui.runtime import StudioSettings
from studio.cards import Card
from studio.errors import BetRejected, ConfigError
from studio.paytable import BetType
from studio.player_banker import bank_result, required_bank
from studio.rules import outcome
from studio.settings import load_table_config
from studio.settlement import Bet, Void, settle
from studio.wallets import WalletError
from tests.test_betting import Table

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
