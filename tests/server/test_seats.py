"""Seats through the public API (issue 14, point 3; seed 004): a game server takes, changes and leaves seats for its
players between rounds; one who joins mid-round waits for the next; a seated player passes, or sits the round out; at
a table with seats only seated, active players bet. Every change is in the table's log (the game server its actor, the
player by id) and on the results feed, by seat number and nickname only; the public state and the console show the
seats. Bad input is a 422 and wrong roles 401/403, changing nothing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from dealer_ui.runtime import Studio
from studio.clock import ManualClock
from studio.domain.audit import audit
from studio.table_service import TableService
from tests.server.conftest import NATURAL, T1, T2, Desk, sign_in, studio_app
from tests.server.test_feed import messages

SEATED_T1 = T1.replace('id = "T1"\n', 'id = "T1"\nseats = 5\n')


@pytest.fixture
def app(tmp_path: Path, clock: ManualClock) -> FastAPI:
    """T1 with five seats (and T2 without), otherwise the tables of the other server tests."""
    return studio_app(tmp_path, clock, SEATED_T1, T2)


@pytest.fixture
def other_server(studio: Studio) -> dict[str, str]:
    return {"X-API-Key": studio.users.add_api_key("operator-2")}


def post(client: TestClient, key: dict[str, str], action: str, body: Any, table: str = "T1") -> Any:
    path = f"/api/tables/{table}/seats" + (f"/{action}" if action else "")
    return client.post(path, json=body, headers=key)


def take(client: TestClient, key: dict[str, str], player: str, nickname: str, seat: int | None = None) -> Any:
    response = post(client, key, "", {"player_id": player, "nickname": nickname, "seat": seat})
    assert response.status_code == 200, response.text
    return response.json()


def bet(client: TestClient, key: dict[str, str], bet_id: str, player: str, table: str = "T1") -> Any:
    body = {"bet_id": bet_id, "player_id": player, "bet_type": "banker", "stake": 1_000}
    return client.post(f"/api/tables/{table}/bets", json=body, headers=key)


def fund(client: TestClient, key: dict[str, str], *players: str) -> None:
    for player in players:
        assert client.post(f"/api/wallets/{player}/deposit", json={"amount": 100_000}, headers=key).status_code == 200


def statuses(client: TestClient, key: dict[str, str]) -> list[str]:
    seats = client.get("/api/tables/T1/public", headers=key).json()["seats"]
    return [f"{seat['seat']}:{seat['nickname']}:{seat['status']}" for seat in seats]


def seat_messages(client: TestClient, key: dict[str, str]) -> list[dict[str, Any]]:
    kinds = ("seat_taken", "seat_changed", "seat_left", "round_passed", "sat_out")
    return [message for message in messages(client, key) if message["type"] in kinds]


def test_a_game_server_seats_its_player_and_the_table_sees_the_seat_and_nickname_only(
    client: TestClient, desk: Desk, game_server: dict[str, str], other_server: dict[str, str]
) -> None:
    answer = take(client, game_server, "p1", "Ann", 3)
    assert [entry["kind"] for entry in answer["logged"]] == ["SeatTaken"]
    record = list(desk.studio.store.read("T1"))[-1]
    assert record.actor == "game_server:operator-1"  # attributable: the game server, the player by id
    assert record.data == {"seat": 3, "player_id": "p1", "game_server": "operator-1", "nickname": "Ann",
                           "first_round": 1}  # fmt: skip
    assert answer["seats"][2] == {"seat": 3, "nickname": "Ann", "status": "seated", "player_id": "p1"}
    # Another operator sees the seat and the nickname, never the player's id.
    theirs = client.get("/api/tables/T1/seats", headers=other_server).json()["seats"]
    assert theirs[2] == {"seat": 3, "nickname": "Ann", "status": "seated", "player_id": None}
    assert [seat["status"] for seat in theirs] == ["free", "free", "seated", "free", "free"]
    (message,) = seat_messages(client, other_server)
    assert message == {"table": "T1", "seq": record.seq, "type": "seat_taken", "at": message["at"], "seat": 3,
                       "nickname": "Ann", "first_round": 1}  # fmt: skip
    assert statuses(client, other_server)[2] == "3:Ann:seated"
    # Not a chat notice: the table's chat stays the players' own.
    assert not desk.studio.chat.messages("T1", limit=20)


def test_changing_and_leaving_seats_between_rounds_is_on_the_feed(
    client: TestClient, desk: Desk, game_server: dict[str, str]
) -> None:
    take(client, game_server, "p1", "Ann", 3)
    take(client, game_server, "p2", "Bea")  # the first free seat
    moved = post(client, game_server, "change", {"player_id": "p1", "seat": 5})
    assert moved.status_code == 200 and moved.json()["logged"][0]["kind"] == "SeatChanged"
    assert post(client, game_server, "leave", {"player_id": "p2"}).status_code == 200
    feed = seat_messages(client, game_server)
    assert [(m["type"], m.get("from_seat"), m["seat"], m["nickname"]) for m in feed] == [
        ("seat_taken", None, 3, "Ann"), ("seat_taken", None, 1, "Bea"), ("seat_changed", 3, 5, "Ann"),
        ("seat_left", None, 1, "Bea"),
    ]  # fmt: skip
    assert not any("p1" in json.dumps(m) or "p2" in json.dumps(m) or "operator" in json.dumps(m) for m in feed)
    assert statuses(client, game_server) == ["1:None:free", "2:None:free", "3:None:free", "4:None:free", "5:Ann:seated"]


def test_only_seated_active_players_bet_and_one_who_joins_mid_round_waits_for_the_next(
    client: TestClient, desk: Desk, game_server: dict[str, str]
) -> None:
    fund(client, game_server, "p1", "p2", "p3")
    take(client, game_server, "p1", "Ann", 1)
    desk.to_ready()
    desk.ok("open-betting")
    joined = take(client, game_server, "p2", "Bea", 2)  # mid-round
    assert joined["seats"][1] == {"seat": 2, "nickname": "Bea", "status": "waiting", "player_id": "p2"}
    assert bet(client, game_server, "b1", "p1").status_code == 200
    waiting = bet(client, game_server, "b2", "p2")
    assert waiting.status_code == 409
    assert "p2 took seat 2 during round 1: they bet from round 2" in waiting.json()["detail"]
    unseated = bet(client, game_server, "b3", "p3")
    assert unseated.status_code == 409
    assert "only a seated player bets at this table: p3 has no seat" in unseated.json()["detail"]
    assert client.get("/api/wallets/p3", headers=game_server).json()["balance"] == 100_000  # nothing taken
    desk.ok("close-betting")
    assert statuses(client, game_server)[:2] == ["1:Ann:playing", "2:Bea:waiting"]
    desk.deal(*NATURAL)
    desk.ok("open-betting")
    assert statuses(client, game_server)[:2] == ["1:Ann:betting", "2:Bea:betting"]
    assert bet(client, game_server, "b4", "p2").status_code == 200


def test_a_table_without_seats_takes_bets_as_before_and_has_no_seats_to_take(
    client: TestClient, studio: Studio, game_server: dict[str, str]
) -> None:
    refused = post(client, game_server, "", {"player_id": "p1", "nickname": "Ann"}, table="T2")
    assert refused.status_code == 409
    assert refused.json()["detail"]["reason"] == "this table has no seats (table.seats)"
    assert studio.tables["T2"].service.seq == 0
    assert client.get("/api/tables/T2/seats", headers=game_server).json()["seats"] is None
    assert client.get("/api/tables/T2/public", headers=game_server).json()["seats"] is None


def test_a_player_in_the_round_keeps_their_seat_until_it_ends(
    client: TestClient, desk: Desk, game_server: dict[str, str]
) -> None:
    fund(client, game_server, "p1")
    take(client, game_server, "p1", "Ann", 1)
    desk.to_ready()
    desk.ok("open-betting")
    assert bet(client, game_server, "b1", "p1").status_code == 200
    desk.ok("close-betting")
    before = desk.seq
    for action, body in (("leave", {"player_id": "p1"}), ("change", {"player_id": "p1", "seat": 2})):
        refused = post(client, game_server, action, body)
        assert refused.status_code == 409, action
        assert refused.json()["detail"]["reason"] == (
            "p1 plays round 1, under way: seats change only between rounds (once its result or void is in)"
        )
    assert desk.seq == before
    desk.deal(*NATURAL)
    assert post(client, game_server, "leave", {"player_id": "p1"}).status_code == 200


def test_a_seated_player_passes_and_one_who_neither_bets_nor_passes_sits_out(
    client: TestClient, desk: Desk, game_server: dict[str, str]
) -> None:
    fund(client, game_server, "p1", "p2", "p3")
    for number, (player, nickname) in enumerate((("p1", "Ann"), ("p2", "Bea"), ("p3", "Cid")), start=1):
        take(client, game_server, player, nickname, number)
    desk.to_ready()
    desk.ok("open-betting")
    assert bet(client, game_server, "b1", "p1").status_code == 200
    with_bets = post(client, game_server, "pass", {"player_id": "p1"})
    assert with_bets.status_code == 409
    assert with_bets.json()["detail"]["reason"] == "p1 has 1 open bet(s) in round 1: undo them to pass"
    passed = post(client, game_server, "pass", {"player_id": "p2"})
    assert passed.status_code == 200 and passed.json()["logged"][0]["kind"] == "RoundPassed"
    after_pass = bet(client, game_server, "b2", "p2")
    assert after_pass.status_code == 409 and "p2 passed round 1" in after_pass.json()["detail"]
    assert desk.ok("close-betting") == ["BettingClosed", "PlayerSatOut"]  # p3 neither bet nor passed
    game_id = desk.studio.tables["T1"].service.state.round.game_id  # type: ignore[union-attr]
    feed = seat_messages(client, game_server)[3:]
    assert feed == [
        {"table": "T1", "seq": feed[0]["seq"], "type": "round_passed", "at": feed[0]["at"], "round": 1,
         "game_id": game_id, "seat": 2, "nickname": "Bea"},
        {"table": "T1", "seq": feed[1]["seq"], "type": "sat_out", "at": feed[1]["at"], "round": 1,
         "game_id": game_id, "seat": 3, "nickname": "Cid"},
    ]  # fmt: skip
    assert statuses(client, game_server)[:3] == ["1:Ann:playing", "2:Bea:passed", "3:Cid:sat_out"]
    sat_out = [r for r in desk.studio.store.read("T1") if r.kind == "PlayerSatOut"]
    assert [(r.actor, r.data["player_id"]) for r in sat_out] == [("dealer:dealer", "p3")]
    # Out of the round, the player who sat out may leave at once; passing after betting closed is refused.
    assert post(client, game_server, "leave", {"player_id": "p3"}).status_code == 200
    late = post(client, game_server, "pass", {"player_id": "p1"})
    assert late.status_code == 409 and late.json()["detail"]["phase"] == "dealing"


def test_the_seats_come_back_after_a_restart_and_the_log_verifies(
    client: TestClient, desk: Desk, game_server: dict[str, str]
) -> None:
    take(client, game_server, "p1", "Ann", 4)
    desk.to_ready()
    desk.ok("open-betting")
    take(client, game_server, "p2", "Bea", 1)
    live = desk.studio.tables["T1"].service.state
    replayed = TableService("T1", desk.studio.store, desk.studio.clock, live.config).state
    assert replayed.seats == live.seats and len(live.seats) == 2
    verdict = audit(desk.studio.store.read("T1"))  # `studio log verify`: the chain and the replay
    assert verdict.ok, verdict.reason


def test_the_console_shows_the_seats(client: TestClient, desk: Desk, game_server: dict[str, str]) -> None:
    take(client, game_server, "p1", "Ann", 2)
    view = client.get("/api/tables/T1", headers=desk.dealer).json()
    assert view["seats"][1] == {"seat": 2, "nickname": "Ann", "status": "seated"}
    assert len(view["seats"]) == 5 and "p1" not in json.dumps(view["seats"])


@pytest.mark.parametrize(
    ("action", "body"),
    [
        ("", {"player_id": "p1", "nickname": "x" * 33}),
        ("", {"player_id": "p1", "nickname": ""}),
        ("", {"player_id": "p 1", "nickname": "Ann"}),
        ("", {"player_id": "p1", "nickname": "Ann", "seat": 0}),
        ("", {"player_id": "p1", "nickname": "Ann", "seat": "two"}),
        ("", {"nickname": "Ann"}),
        ("change", {"player_id": "p1"}),
        ("change", {"player_id": "p1", "seat": -1}),
        ("leave", {}),
        ("pass", {"player_id": "x" * 65}),
    ],
)
def test_bad_input_is_422_and_changes_nothing(
    client: TestClient, desk: Desk, game_server: dict[str, str], action: str, body: dict[str, Any]
) -> None:
    take(client, game_server, "p1", "Ann", 3)
    before = desk.seq
    assert post(client, game_server, action, body).status_code == 422
    assert desk.seq == before


@pytest.mark.parametrize("action", ["", "change", "leave", "pass"])
def test_only_a_game_server_acts_on_seats(client: TestClient, desk: Desk, action: str) -> None:
    body = {"player_id": "p1", "nickname": "Ann", "seat": 1}
    assert post(client, {}, action, body).status_code == 401
    assert post(client, {"X-API-Key": "not-a-key"}, action, body).json()["detail"] == "invalid API key"
    for name in ("dealer", "pitboss", "surveillance", "admin"):
        response = post(client, sign_in(client, name), action, body)
        assert response.status_code == 403, name
    assert client.get("/api/tables/T1/seats", headers=sign_in(client, "dealer")).status_code == 403
    assert desk.seq == 0


def test_a_game_server_moves_only_its_own_players(
    client: TestClient, desk: Desk, game_server: dict[str, str], other_server: dict[str, str]
) -> None:
    fund(client, game_server, "p1")
    refused = post(client, other_server, "", {"player_id": "p1", "nickname": "Ann"})
    assert refused.status_code == 403 and refused.json()["detail"] == "player 'p1' belongs to another game server"
    take(client, other_server, "q1", "Quinn", 2)  # a player without a wallet yet: theirs to seat
    before = desk.seq
    for action, body in (("leave", {"player_id": "q1"}), ("change", {"player_id": "q1", "seat": 4})):
        moved = post(client, game_server, action, body)
        assert moved.status_code == 409 and moved.json()["detail"]["reason"] == "q1 was seated by another game server"
    assert desk.seq == before
