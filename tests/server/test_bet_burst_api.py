"""Bets through the API in groups (issue 17): concurrent game-server requests are placed in group commits on the
table's writer; each is answered once durable, each keeps its own refusal, and "no more bets" comes after them all."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

from fastapi.testclient import TestClient

from dealer_ui.runtime import Studio
from studio.betting import LATE
from tests.server.conftest import Desk

PLAYERS = 12
BETS_EACH = 4  # the fourth of each player's 1,000 bets finds the balance spent (3,000 each)


def _bet(client: TestClient, key: dict[str, str], bet_id: str, player: str, bet_type: str, stake: int) -> Any:
    body = {"bet_id": bet_id, "player_id": player, "bet_type": bet_type, "stake": stake}
    return client.post("/api/tables/T1/bets", json=body, headers=key)


def test_concurrent_bets_are_durable_when_answered_and_balances_equal_the_ledger(
    desk: Desk, client: TestClient, studio: Studio, game_server: dict[str, str]
) -> None:
    for n in range(PLAYERS):
        client.post(f"/api/wallets/p{n}/deposit", json={"amount": 3_000}, headers=game_server).raise_for_status()
    desk.to_ready()
    desk.ok("open-betting")
    game_id = studio.tables["T1"].service.state.round.game_id  # type: ignore[union-attr]
    areas = ("banker", "player", "tie", "player_pair")
    asks = [(f"b{n}-{k}", f"p{n}", areas[k], 1_000) for n in range(PLAYERS) for k in range(BETS_EACH)]
    with ThreadPoolExecutor(16) as pool:
        answers = list(pool.map(lambda ask: _bet(client, game_server, *ask), asks))
    accepted = {ask[0] for ask, answer in zip(asks, answers, strict=True) if answer.status_code == 200}
    refused = [answer.json()["detail"] for answer in answers if answer.status_code != 200]
    assert len(accepted) == PLAYERS * 3 and len(refused) == PLAYERS
    assert all("balance 0 is less than the stake" in reason for reason in refused)
    stored = {bet.bet_id for bet in studio.wallets.bets(game_id)}
    assert stored == accepted  # every bet answered 200 is in the database, and no other
    desk.ok("close-betting")
    late = _bet(client, game_server, "after", "p0", "banker", 1_000)
    assert late.status_code == 409 and late.json()["detail"] == LATE
    for n in range(PLAYERS):
        assert studio.wallets.balance(f"p{n}") == 0 == studio.wallets.ledger_sum(f"p{n}")
    assert {bet.bet_id for bet in studio.wallets.bets(game_id)} == accepted


def test_a_bet_for_another_game_servers_player_is_403_and_changes_nothing(
    desk: Desk, client: TestClient, studio: Studio, game_server: dict[str, str]
) -> None:
    other = {"X-API-Key": studio.users.add_api_key("operator-2")}
    client.post("/api/wallets/q1/deposit", json={"amount": 5_000}, headers=other).raise_for_status()
    desk.to_ready()
    desk.ok("open-betting")
    for attempt in ("first", "again"):  # the owner read with the bet, then known without a read
        refused = _bet(client, game_server, f"x-{attempt}", "q1", "banker", 1_000)
        assert refused.status_code == 403 and refused.json()["detail"] == "player 'q1' belongs to another game server"
    assert studio.wallets.balance("q1") == 5_000 == studio.wallets.ledger_sum("q1")
    assert _bet(client, other, "mine", "q1", "banker", 1_000).status_code == 200
    assert studio.wallets.balance("q1") == 4_000


def test_undo_double_and_repeat_run_after_the_bets_before_them(
    desk: Desk, client: TestClient, game_server: dict[str, str]
) -> None:
    client.post("/api/wallets/p1/deposit", json={"amount": 100_000}, headers=game_server).raise_for_status()
    desk.to_ready()
    desk.ok("open-betting")
    assert _bet(client, game_server, "b1", "p1", "banker", 1_000).status_code == 200
    doubled = client.post("/api/tables/T1/bets/double", json={"player_id": "p1"}, headers=game_server)
    assert doubled.status_code == 200 and [b["stake"] for b in doubled.json()["bets"]] == [1_000]
    undone = client.post("/api/tables/T1/bets/undo", json={"player_id": "p1"}, headers=game_server)
    assert undone.status_code == 200 and undone.json()["bets"][0]["status"] == "cancelled"
    balance = client.get("/api/wallets/p1", headers=game_server).json()["balance"]
    assert balance == 100_000 - 1_000
