"""Each player's outcome reaches its game server: a WebSocket stream from a cursor, then live as rounds settle."""

from __future__ import annotations

from pathlib import Path

from fastapi.testclient import TestClient

from dealer_ui.app import create_app
from dealer_ui.runtime import StudioSettings


def test_outcomes_stream_to_their_own_game_server(tmp_path: Path) -> None:
    table = tmp_path / "t1.toml"
    table.write_text('[table]\nid = "T1"\n[procedure]\nburn_after_shuffle = 0\nallow_early_close = true\n')
    app = create_app(StudioSettings(database=str(tmp_path / "s.db"), demo=True, table_files=(table,)))
    with TestClient(app) as client:
        users = app.state.studio.users
        mine, theirs = {"X-API-Key": users.add_api_key("gs1")}, {"X-API-Key": users.add_api_key("gs2")}
        client.post("/api/wallets/p1/deposit", json={"amount": 100_000}, headers=mine)
        client.post("/api/wallets/q1/deposit", json={"amount": 100_000}, headers=theirs)
        client.post("/api/login", json={"name": "dealer", "password": "dealer"})
        client.post("/api/tables/T1/shuffle")
        client.post("/api/tables/T1/cut", json={})
        client.post("/api/tables/T1/open-betting")
        for key, player, bet in ((mine, "p1", "banker"), (theirs, "q1", "player")):
            placed = client.post(
                "/api/tables/T1/bets",
                headers=key,
                json={"bet_id": f"{player}-1", "player_id": player, "bet_type": bet, "stake": 1_000},
            )
            assert placed.status_code == 200, placed.json()
        with client.websocket_connect("/ws/settlements?after=0", headers=mine) as stream:
            client.post("/api/tables/T1/close-betting")
            for code in ("QH", "9D", "2C", "10S"):  # Banker natural 9 wins
                client.post("/api/tables/T1/card", json={"card": code})
            outcome = stream.receive_json()
        assert (outcome["type"], outcome["bet_id"], outcome["verdict"], outcome["returned"]) == (
            "settlement", "p1-1", "win", 1_950)  # fmt: skip
        # The other game server's player is not in this stream; reconnecting after the last id gives nothing more.
        page = client.get(f"/api/settlements?after={outcome['id']}", headers=mine).json()
        assert page["settlements"] == []
        assert [o["bet_id"] for o in client.get("/api/settlements", headers=theirs).json()["settlements"]] == ["q1-1"]


def test_the_stream_needs_a_game_server(tmp_path: Path) -> None:
    app = create_app(StudioSettings(database=str(tmp_path / "s.db"), demo=True))
    with TestClient(app) as client:
        client.post("/api/login", json={"name": "pitboss", "password": "pitboss"})
        try:
            with client.websocket_connect("/ws/settlements") as stream:
                stream.receive_json()
        except Exception as error:
            assert getattr(error, "code", None) == 4403
        else:
            raise AssertionError("a pit boss was given the settlement stream")
