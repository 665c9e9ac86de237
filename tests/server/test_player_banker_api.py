"""Player as banker through the API (seed 001): credit points to take the bank, the banker's approval timer run by the
studio's clock, disconnects reported by a game server, and the last round a reconnecting player is shown."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from dealer_ui.app import create_app
from dealer_ui.runtime import Studio, StudioSettings
from studio.clock import ManualClock
from studio.users import Role
from tests.server.conftest import Desk, session_for
from tests.waiting import wait_until

T9 = """\
[table]
id = "T9"
banker = "player"
bank_min_points = 50
banker_approval_seconds = 4

[procedure]
burn_after_shuffle = 0
betting_seconds = 10
warning_seconds = 3
allow_early_close = true

[[sources]]
id = "T9-keyed"
driver = "memory"
"""
PLAYER_WINS = ("9H", "2S", "KD", "3C")  # Player 9 (natural) against Banker 5


@pytest.fixture
def banked(tmp_path: Path, clock: ManualClock) -> Iterator[tuple[TestClient, Studio, Desk, dict[str, str]]]:
    table_file = tmp_path / "t9.toml"
    table_file.write_text(T9)
    app = create_app(StudioSettings(database=str(tmp_path / "s.db"), demo=True, table_files=(table_file,)), clock)
    with TestClient(app) as client:
        studio: Studio = app.state.studio
        desk = Desk(client, studio, "T9", session_for(studio, "dealer", Role.DEALER),
                    session_for(studio, "pitboss", Role.PIT_BOSS))  # fmt: skip
        server = {"X-API-Key": studio.users.add_api_key("gs1")}
        for player, amount in (("bank", 400_000), ("p1", 100_000), ("p2", 100_000)):
            assert client.post(f"/api/wallets/{player}/deposit", json={"amount": amount}, headers=server).is_success
        desk.ok("shuffle")
        desk.ok("cut", json={})
        yield client, studio, desk, server


def bet(client: TestClient, server: dict[str, str], player: str, bet_id: str, bet_type: str, stake: int) -> Any:
    body = {"bet_id": bet_id, "player_id": player, "bet_type": bet_type, "stake": stake}
    return client.post("/api/tables/T9/bets", json=body, headers=server)


def earn_fifty_points(client: TestClient, desk: Desk, server: dict[str, str]) -> None:
    """A round banked by the house (nobody holds the bank), where "bank" stakes 50.00 as a player."""
    desk.ok("open-betting")
    assert bet(client, server, "bank", "earn", "banker", 5_000).status_code == 200
    desk.ok("close-betting")
    desk.deal(*PLAYER_WINS)


def test_taking_the_bank_needs_points_and_an_unapproved_bank_goes_back_to_the_house(
    banked: tuple[TestClient, Studio, Desk, dict[str, str]], clock: ManualClock
) -> None:
    client, studio, desk, server = banked
    refused = client.post("/api/tables/T9/banker", json={"player_id": "bank"}, headers=server)
    assert refused.status_code == 409
    assert refused.json()["detail"].startswith("holding the bank needs 50 credit points; bank has 0")
    assert client.get("/api/tables/T9/banker", headers=server).json()["banker"] is None  # nothing changed
    earn_fifty_points(client, desk, server)
    wallet = client.get("/api/wallets/bank", headers=server).json()
    assert wallet["points"] == 50 and wallet["balance"] == 400_000 - 5_000
    assert wallet["entries"][-1]["kind"] == "lose" and wallet["entries"][-1]["points"] == 50
    client.post("/api/wallets/bank/deposit", json={"amount": 5_000}, headers=server)
    taken = client.post("/api/tables/T9/banker", json={"player_id": "bank"}, headers=server)
    assert taken.status_code == 200 and taken.json()["required_points"] == 50

    desk.ok("open-betting")
    state = client.get("/api/tables/T9/banker", headers=server).json()
    game = state["round"]["game_id"]
    assert state["approval_seconds"] == 4 and state["round"]["approved_by"] is None
    assert state["round"]["approval_deadline"] == "2024-05-01T12:00:04+00:00"
    early = bet(client, server, "p1", "b1", "player", 1_000)
    assert early.status_code == 409 and "the banker has not approved this round yet" in early.json()["detail"]
    clock.advance(4)  # the studio's timer notices on its own: no request is needed
    wait_until(lambda: studio.wallets.banker("T9") is None, "the bank to go back to the house")
    late = client.post("/api/tables/T9/banker/approve", json={"player_id": "bank"}, headers=server)
    assert late.status_code == 409 and "does not hold the bank" in late.json()["detail"]
    assert bet(client, server, "p1", "b1", "player", 1_000).status_code == 200  # the house banks the rest
    events = client.get("/api/players/bank/bets", headers=server).json()["events"]
    assert [(e["kind"], e["actor"], e["game_id"]) for e in events] == [
        ("bank_taken", "gs1", None), ("bank_timed_out", "studio", game)]  # fmt: skip
    desk.ok("close-betting")
    desk.deal(*PLAYER_WINS)
    assert client.get("/api/wallets/bank", headers=server).json()["balance"] == 400_000  # untouched by the round


def test_disconnects_and_the_last_round_after_a_reconnect(
    banked: tuple[TestClient, Studio, Desk, dict[str, str]],
) -> None:
    client, studio, desk, server = banked
    earn_fifty_points(client, desk, server)
    client.post("/api/wallets/bank/deposit", json={"amount": 5_000}, headers=server)
    assert client.post("/api/tables/T9/banker", json={"player_id": "bank"}, headers=server).status_code == 200
    desk.ok("open-betting")
    game = studio.tables["T9"].service.state.round.game_id  # type: ignore[union-attr]
    assert client.post("/api/tables/T9/banker/approve", json={"player_id": "bank"}, headers=server).status_code == 200
    assert bet(client, server, "p1", "b1", "player", 1_000).status_code == 200
    assert bet(client, server, "p2", "b2", "tie", 500).status_code == 200

    gone = client.post("/api/players/p2/disconnect", headers=server)  # before "no more bets": refunded
    assert gone.status_code == 200, gone.text
    [at_table] = gone.json()["tables"]
    assert [b["bet_id"] for b in at_table["refunded"]] == ["b2"] and gone.json()["balance"] == 100_000
    banker_gone = client.post("/api/players/bank/disconnect", headers=server).json()  # after approving: plays out
    assert banker_gone["tables"][0]["bank"] == "after_round"
    desk.ok("close-betting")
    after = client.post("/api/players/p1/disconnect", headers=server).json()  # after "no more bets": plays out
    assert after["tables"][0]["refunded"] == [] and [b["bet_id"] for b in after["tables"][0]["plays_out"]] == ["b1"]
    desk.deal(*PLAYER_WINS)
    assert client.get("/api/tables/T9/banker", headers=server).json()["banker"] is None  # released at the round's end

    # Reconnected, each sees the last round: its result and what it did to them.
    p1 = client.get("/api/players/p1/bets", headers=server).json()["last_round"]
    assert (p1["game_id"], p1["table_id"], p1["outcome"], p1["role"]) == (game, "T9", "result", "player")
    assert p1["result"]["winner"] == "player" and p1["result"]["player"] == ["9H", "KD"]
    assert (p1["net"], p1["points"]) == (1_000, 10)
    assert [(b["bet_id"], b["verdict"], b["returned"]) for b in p1["bets"]] == [("b1", "win", 2_000)]
    p2 = client.get("/api/players/p2/bets", headers=server).json()["last_round"]
    assert p2["game_id"] == game and p2["net"] == 0 and p2["bets"][0]["status"] == "cancelled"
    bank = client.get("/api/players/bank/bets", headers=server).json()
    assert bank["last_round"]["role"] == "banker" and bank["last_round"]["net"] == -1_000 - 15
    assert bank["last_round"]["points"] == -10
    assert [e["kind"] for e in bank["events"]][-2:] == ["disconnected", "bank_released"]


def test_a_disconnect_is_refused_for_an_unknown_or_another_servers_player(
    banked: tuple[TestClient, Studio, Desk, dict[str, str]],
) -> None:
    client, studio, _, server = banked
    unknown = client.post("/api/players/nobody/disconnect", headers=server)
    assert unknown.status_code == 404 and "no wallet" in unknown.json()["detail"]
    other = {"X-API-Key": studio.users.add_api_key("gs2")}
    assert client.post("/api/players/p1/disconnect", headers=other).status_code == 403
    assert studio.wallets.events("p1") == []  # nothing recorded for a refused report
    idle = client.post("/api/players/p1/disconnect", headers=server).json()
    assert idle["tables"] == [] and studio.wallets.events("p1")[0]["detail"] == "disconnected: no bet or bank in play"
