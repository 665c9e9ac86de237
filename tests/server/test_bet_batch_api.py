"""A game server's batch of bets (issue 17): many players' requests in one call, placed in one group commit, each
answered as the single-player route would answer it, in order; refusals stand alone and change nothing."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy.exc import OperationalError

from dealer_ui.routes.bets import MAX_BATCH
from dealer_ui.runtime import Studio
from studio import wallets as wallets_module
from studio.betting import LATE, BetRequest, BettingService
from studio.domain.errors import BetRejected
from studio.domain.procedure import TableState
from studio.wallets import PlacedBet
from tests.server.conftest import Desk

BATCH = "/api/tables/T1/bets/batch"


def _ask(bet_id: str, player: str, bet_type: str, stake: int) -> dict[str, Any]:
    return {"bet_id": bet_id, "player_id": player, "bet_type": bet_type, "stake": stake}


def _stored(folder: Path, game_id: str) -> set[str]:
    """The round's bets as another connection to the database file reads them: committed ones only."""
    with sqlite3.connect(folder / "s.db") as conn:
        return {row[0] for row in conn.execute("SELECT bet_id FROM bet WHERE game_id = ?", (game_id,))}


def _open(desk: Desk, studio: Studio) -> str:
    desk.to_ready()
    desk.ok("open-betting")
    round_ = studio.tables["T1"].service.state.round
    assert round_ is not None
    return round_.game_id


def test_a_batch_places_each_request_alone_and_answers_each_as_the_single_route_would(
    desk: Desk, client: TestClient, studio: Studio, game_server: dict[str, str], tmp_path: Path
) -> None:
    other = {"X-API-Key": studio.users.add_api_key("operator-2")}
    for player in ("p0", "p1", "p2", "p3"):
        client.post(f"/api/wallets/{player}/deposit", json={"amount": 3_000}, headers=game_server).raise_for_status()
    client.post("/api/wallets/q1/deposit", json={"amount": 5_000}, headers=other).raise_for_status()
    game_id = _open(desk, studio)
    asks = [
        _ask("a0", "p0", "banker", 1_000),
        _ask("a1", "p1", "2 way", 500),  # all or none: both pair bets
        _ask("a2", "q1", "banker", 1_000),  # another game server's player: refused alone
        _ask("a3", "p3", "banker", 5_000),  # over the balance
        _ask("a0", "p0", "banker", 1_000),  # a retry of the first: the same bet, not a second one
        _ask("a0", "p0", "tie", 1_000),  # the first one's id for another bet
        _ask("a4", "ghost", "banker", 1_000),  # no wallet
        _ask("a5", "p3", "nonsense", 1_000),  # no such bet type
        _ask("a6", "p2", "player", 3_000),  # the whole balance
    ]
    answer = client.post(BATCH, json={"requests": asks}, headers=game_server)
    assert answer.status_code == 200
    results = answer.json()["results"]
    assert [result["status"] for result in results] == [200, 200, 403, 409, 200, 409, 409, 409, 200]
    assert results[0]["bets"] == results[4]["bets"] == [{"bet_id": "a0", "player_id": "p0", "game_id": game_id,
        "bet_type": "banker", "stake": 1_000, "status": "open", "notice": None}]  # fmt: skip
    assert [(bet["bet_type"], bet["stake"]) for bet in results[1]["bets"]] == [
        ("player_pair", 500),
        ("banker_pair", 500),
    ]
    assert results[2]["detail"] == "player 'q1' belongs to another game server"
    assert results[3]["detail"] == "banker bet of 5000 rejected: balance 3000 is less than the stake"
    assert results[5]["detail"].endswith("bet id 'a0' was used for another bet")
    accepted = {bet["bet_id"] for result in results if result["status"] == 200 for bet in result["bets"]}
    assert _stored(tmp_path, game_id) == accepted == {"a0", "a1:player_pair", "a1:banker_pair", "a6"}
    assert [studio.wallets.balance(p) for p in ("p0", "p1", "p2", "p3", "q1")] == [
        2_000,
        2_000,
        0,
        3_000,
        5_000,
    ]  # refused: unchanged
    for player in ("p0", "p1", "p2", "p3", "q1"):
        assert studio.wallets.balance(player) == studio.wallets.ledger_sum(player)
    for ask, result in zip(asks, results, strict=True):  # each again through the single route: the same answer
        single = client.post("/api/tables/T1/bets", json=ask, headers=game_server)
        assert single.status_code == result["status"]
        assert single.json() == ({"bets": result["bets"]} if result["status"] == 200 else {"detail": result["detail"]})
    assert _stored(tmp_path, game_id) == accepted


def test_a_batch_after_no_more_bets_is_refused_request_by_request(
    desk: Desk, client: TestClient, studio: Studio, game_server: dict[str, str], tmp_path: Path
) -> None:
    client.post("/api/wallets/p0/deposit", json={"amount": 3_000}, headers=game_server).raise_for_status()
    game_id = _open(desk, studio)
    desk.ok("close-betting")
    asks = [_ask("late-1", "p0", "banker", 1_000), _ask("late-2", "p0", "tie", 100)]
    answer = client.post(BATCH, json={"requests": asks}, headers=game_server)
    assert answer.json() == {"results": [{"status": 409, "detail": LATE}] * 2}
    assert _stored(tmp_path, game_id) == set() and studio.wallets.balance("p0") == 3_000


def test_a_full_batch_is_placed_and_one_more_request_is_refused_whole(
    desk: Desk, client: TestClient, studio: Studio, game_server: dict[str, str], tmp_path: Path
) -> None:
    players = [f"p{n}" for n in range(MAX_BATCH // 2)]
    for player in players:
        client.post(f"/api/wallets/{player}/deposit", json={"amount": 10_000}, headers=game_server).raise_for_status()
    game_id = _open(desk, studio)
    asks = [_ask(f"b{n}", players[n % len(players)], ("banker", "tie", "player")[n // len(players)], 1_000)
            for n in range(MAX_BATCH + 1)]  # fmt: skip
    too_many = client.post(BATCH, json={"requests": asks}, headers=game_server)
    assert too_many.status_code == 422
    [error] = too_many.json()["detail"]
    assert error["loc"] == ["body", "requests"] and f"at most {MAX_BATCH} items" in error["msg"]
    assert _stored(tmp_path, game_id) == set()
    assert all(studio.wallets.balance(player) == 10_000 for player in players)
    full = client.post(BATCH, json={"requests": asks[:MAX_BATCH]}, headers=game_server)
    assert [result["status"] for result in full.json()["results"]] == [200] * MAX_BATCH
    assert _stored(tmp_path, game_id) == {f"b{n}" for n in range(MAX_BATCH)}
    for player in players:
        assert studio.wallets.balance(player) == 8_000 == studio.wallets.ledger_sum(player)


def test_a_full_batch_of_the_longest_ids_fits_the_body_limit(
    desk: Desk, client: TestClient, studio: Studio, game_server: dict[str, str]
) -> None:
    _open(desk, studio)
    asks = [
        _ask(f"{n:03d}".ljust(128, "b"), f"{n:03d}".ljust(64, "p"), "player_bonus", 10**12) for n in range(MAX_BATCH)
    ]
    answer = client.post(BATCH, json={"requests": asks}, headers=game_server)
    assert answer.status_code == 200  # not a 413: the batch path has its own, wider limit
    assert [result["detail"] for result in answer.json()["results"]] == [
        f"player_bonus bet of {10**12} rejected: no wallet for player {ask['player_id']!r}" for ask in asks
    ]


def test_a_batch_is_placed_in_one_group_commit(
    desk: Desk, client: TestClient, studio: Studio, game_server: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for player in ("p0", "p1"):
        client.post(f"/api/wallets/{player}/deposit", json={"amount": 3_000}, headers=game_server).raise_for_status()
    _open(desk, studio)
    betting = studio.tables["T1"].betting
    groups: list[list[str]] = []
    place_many = BettingService.place_many

    def recording(state: TableState, requests: list[BetRequest]) -> list[list[PlacedBet] | BetRejected]:
        groups.append([request.bet_id for request in requests])
        return place_many(betting, state, requests)

    monkeypatch.setattr(betting, "place_many", recording)
    asks = [_ask(f"g{n}", f"p{n % 2}", ("banker", "tie", "player_pair")[n // 2], 1_000) for n in range(6)]
    answer = client.post(BATCH, json={"requests": asks}, headers=game_server)
    assert [result["status"] for result in answer.json()["results"]] == [200] * 6
    assert groups == [[ask["bet_id"] for ask in asks]]  # one transaction, in the order asked


def test_a_failed_commit_fails_the_whole_batch_and_places_none_of_it(
    desk: Desk, client: TestClient, studio: Studio, game_server: dict[str, str], tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    client.post("/api/wallets/p0/deposit", json={"amount": 3_000}, headers=game_server).raise_for_status()
    game_id = _open(desk, studio)

    def broken(self: Any, conn: Any) -> None:
        raise OperationalError("INSERT", {}, Exception("disk I/O error"))

    write = wallets_module._Batch.write
    monkeypatch.setattr(wallets_module._Batch, "write", broken)
    asks = [_ask("f1", "p0", "banker", 1_000), _ask("f2", "p0", "tie", 500)]
    answer = client.post(BATCH, json={"requests": asks}, headers=game_server)
    assert answer.status_code == 503 and "nothing was changed" in answer.json()["detail"]
    assert _stored(tmp_path, game_id) == set() and studio.wallets.balance("p0") == 3_000
    monkeypatch.setattr(wallets_module._Batch, "write", write)
    again = client.post(BATCH, json={"requests": asks}, headers=game_server)  # the same ids, once the database is back
    assert [result["status"] for result in again.json()["results"]] == [200, 200]
    assert _stored(tmp_path, game_id) == {"f1", "f2"} and studio.wallets.balance("p0") == 1_500
