"""The seeds' betting rules through the public API (issue 14, point 4): three bets per area, repeat before the first
bet, the over-maximum policy, a player's PIN and own maximum; each refusal a 4xx naming the rule, changing nothing."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from dealer_ui.runtime import Studio
from studio.clock import ManualClock
from studio.domain.roles import Role
from tests.server.conftest import NATURAL, T1, Desk, session_for, studio_app

PIN = "73519264"


def _bet(client: TestClient, key: dict[str, str], bet_id: str, bet_type: str, stake: int, player: str = "p1") -> Any:
    body = {"bet_id": bet_id, "player_id": player, "bet_type": bet_type, "stake": stake}
    return client.post("/api/tables/T1/bets", json=body, headers=key)


def _wallet(client: TestClient, key: dict[str, str], player: str = "p1") -> tuple[int, int]:
    body = client.get(f"/api/wallets/{player}", headers=key).json()
    return body["balance"], len(body["entries"])


@pytest.fixture
def betting(desk: Desk, client: TestClient, game_server: dict[str, str]) -> Desk:
    """T1 open for bets, p1 funded with 10,000.00 by the game server."""
    assert client.post("/api/wallets/p1/deposit", json={"amount": 1_000_000}, headers=game_server).status_code == 200
    desk.to_ready()
    desk.ok("open-betting")
    return desk


def test_a_fourth_bet_on_an_area_is_409_and_takes_nothing(betting: Desk, client: TestClient,
                                                           game_server: dict[str, str]) -> None:  # fmt: skip
    for n in range(3):
        assert _bet(client, game_server, f"b{n}", "banker", 1_000).status_code == 200
    before = _wallet(client, game_server)
    refused = _bet(client, game_server, "b3", "banker", 1_000)
    assert refused.status_code == 409
    assert "at most 3 bets per betting area and round: this player has 3 on banker" in refused.json()["detail"]
    assert _wallet(client, game_server) == before
    assert _bet(client, game_server, "t0", "tie", 500).status_code == 200  # another area
    totals = client.get("/api/tables/T1/bets/totals", headers=game_server).json()["totals"]
    assert totals == {"banker": 3_000, "tie": 500}


def test_repeat_is_409_once_the_player_has_bet_in_the_round(betting: Desk, client: TestClient,
                                                             game_server: dict[str, str]) -> None:  # fmt: skip
    previous = betting.studio.tables["T1"].service.state.round
    assert previous is not None
    assert _bet(client, game_server, "b1", "player", 2_000).status_code == 200
    betting.ok("close-betting")
    betting.deal(*NATURAL)
    betting.ok("open-betting")
    assert _bet(client, game_server, "x1", "banker", 1_000).status_code == 200
    before = _wallet(client, game_server)
    repeat = {"player_id": "p1", "previous_game_id": previous.game_id}
    refused = client.post("/api/tables/T1/bets/repeat", json=repeat, headers=game_server)
    assert refused.status_code == 409
    assert "repeat is only for before the player's first bet of the round" in refused.json()["detail"]
    assert _wallet(client, game_server) == before
    assert client.post("/api/tables/T1/bets/undo", json={"player_id": "p1"}, headers=game_server).status_code == 200
    repeated = client.post("/api/tables/T1/bets/repeat", json=repeat, headers=game_server)
    assert repeated.status_code == 200
    assert [(b["bet_type"], b["stake"], b["notice"]) for b in repeated.json()["bets"]] == [("player", 2_000, None)]


def test_a_pin_and_an_own_maximum_that_applies_to_bets(betting: Desk, client: TestClient, game_server: dict[str, str],
                                                       caplog: pytest.LogCaptureFixture) -> None:  # fmt: skip
    caplog.set_level(logging.DEBUG)
    url = "/api/players/p1/own-maximum"
    assert client.get(url, headers=game_server).json() == {
        "player_id": "p1", "max_stake": None, "changed_at": None, "next_change": None, "pin_set": False}  # fmt: skip
    no_pin = client.put(url, json={"max_stake": 2_000, "pin": PIN}, headers=game_server)
    assert no_pin.status_code == 409 and "p1 has no PIN yet" in no_pin.json()["detail"]
    bad = client.put("/api/players/p1/pin", json={"pin": "12ab"}, headers=game_server)
    assert bad.status_code == 422 and bad.json()["detail"] == "a PIN is 4 to 12 digits (0-9)"
    assert client.put("/api/players/p1/pin", json={"pin": PIN}, headers=game_server).json() == {
        "player_id": "p1", "pin_set": True}  # fmt: skip
    replaced = client.put("/api/players/p1/pin", json={"pin": "1111"}, headers=game_server)
    assert replaced.status_code == 403 and "the current PIN of p1 is needed" in replaced.json()["detail"]
    wrong = client.put(url, json={"max_stake": 2_000, "pin": "0000"}, headers=game_server)
    assert wrong.status_code == 403 and "wrong PIN for p1" in wrong.json()["detail"]
    changed = client.put(url, json={"max_stake": 2_000, "pin": PIN}, headers=game_server)
    assert changed.status_code == 200, changed.text
    assert changed.json() == {"player_id": "p1", "max_stake": 2_000, "changed_at": "2024-05-01T12:00:00+00:00",
                              "next_change": "2024-05-03T05:00:00+00:00"}  # fmt: skip  # 1 May 2024 is a Wednesday
    again = client.put(url, json={"max_stake": 3_000, "pin": PIN}, headers=game_server)
    assert again.status_code == 409
    assert "changed their own maximum this week already" in again.json()["detail"]
    assert "next change is possible from 2024-05-03 05:00 UTC" in again.json()["detail"]
    assert client.get(url, headers=game_server).json()["max_stake"] == 2_000
    # The own maximum holds at the table: 20.00 on banker, whatever the table allows.
    assert _bet(client, game_server, "b1", "banker", 1_500).status_code == 200
    over = _bet(client, game_server, "b2", "banker", 1_000)
    assert over.status_code == 409
    assert "over this player's own maximum stake of 20.00 USD for this bet (5.00 USD left)" in over.json()["detail"]
    # Another game server neither reads nor changes it.
    other = {"X-API-Key": betting.studio.users.add_api_key("operator-2")}
    assert client.put(url, json={"max_stake": None, "pin": PIN}, headers=other).status_code == 403
    assert client.get("/api/players/nobody/own-maximum", headers=game_server).status_code == 404
    assert PIN not in caplog.text and all(PIN not in str(record.args) for record in caplog.records)


def test_the_week_turns_on_friday_at_five_utc(betting: Desk, client: TestClient, game_server: dict[str, str],
                                              clock: ManualClock) -> None:  # fmt: skip
    url = "/api/players/p1/own-maximum"
    client.put("/api/players/p1/pin", json={"pin": PIN}, headers=game_server)
    assert client.put(url, json={"max_stake": 2_000, "pin": PIN}, headers=game_server).status_code == 200
    clock.advance((datetime(2024, 5, 3, 4, 59, tzinfo=UTC) - clock.now()).total_seconds())  # Thursday 23:59 at GMT-5
    assert client.put(url, json={"max_stake": None, "pin": PIN}, headers=game_server).status_code == 409
    clock.advance(60)
    removed = client.put(url, json={"max_stake": None, "pin": PIN}, headers=game_server)
    assert removed.status_code == 200 and removed.json()["max_stake"] is None


@pytest.fixture
def capped(tmp_path: Path, clock: ManualClock) -> Iterator[tuple[TestClient, Studio]]:
    app = studio_app(tmp_path, clock, T1.replace('id = "T1"', 'id = "T1"\nover_maximum = "cap"'))
    with TestClient(app) as client:
        yield client, app.state.studio


def test_a_cap_table_accepts_up_to_the_maximum_and_says_maximum_reached(capped: tuple[TestClient, Studio]) -> None:
    client, studio = capped
    key = {"X-API-Key": studio.users.add_api_key("operator-1")}
    assert studio.tables["T1"].config.limits.over_maximum.value == "cap"
    client.post("/api/wallets/p1/deposit", json={"amount": 1_000_000}, headers=key)
    desk = Desk(client, studio, "T1", session_for(studio, "dl", Role.DEALER), session_for(studio, "pb", Role.PIT_BOSS))
    desk.to_ready()
    desk.ok("open-betting")
    assert _bet(client, key, "b1", "tie", 4_000, "p1").json()["bets"][0]["notice"] is None
    capped_bet = _bet(client, key, "b2", "tie", 3_000, "p1")
    assert capped_bet.status_code == 200
    (bet,) = capped_bet.json()["bets"]
    assert bet["stake"] == 1_000
    assert bet["notice"] == "maximum reached: 10.00 USD accepted, up to the table maximum of 50.00 USD for tie"
    full = _bet(client, key, "b3", "tie", 500, "p1")
    assert full.status_code == 409 and full.json()["detail"].startswith("tie bet of 500 rejected: maximum reached")
    assert client.get("/api/wallets/p1", headers=key).json()["balance"] == 1_000_000 - 5_000


def test_an_admin_clears_a_forgotten_pin(betting: Desk, client: TestClient, game_server: dict[str, str]) -> None:
    assert client.put("/api/players/p1/pin", json={"pin": PIN}, headers=game_server).status_code == 200
    assert client.delete("/api/players/p1/pin", headers=game_server).status_code == 403  # not the game server's call
    admin = session_for(betting.studio, "admin", Role.ADMIN)
    assert client.delete("/api/players/p1/pin", headers=admin).json() == {"player_id": "p1", "pin_set": False}
    assert client.delete("/api/players/p1/pin", headers=admin).status_code == 404
    assert client.get("/api/players/p1/own-maximum", headers=game_server).json()["pin_set"] is False
    assert client.put("/api/players/p1/pin", json={"pin": "2468"}, headers=game_server).status_code == 200
    changed = client.put("/api/players/p1/own-maximum", json={"max_stake": 5_000, "pin": "2468"}, headers=game_server)
    assert changed.status_code == 200 and changed.json()["max_stake"] == 5_000
