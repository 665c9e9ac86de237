"""The console's WebSocket: the whole table state at once, and again after every change; staff only."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient
from starlette.testclient import WebSocketTestSession
from starlette.websockets import WebSocketDisconnect

from tests.server.conftest import Desk, sign_in


def state_with(ws: WebSocketTestSession, seq: int, limit: int = 5) -> dict[str, Any]:
    """The first state message showing the table at `seq` (the console also repeats the state every second)."""
    for _ in range(limit):
        state: dict[str, Any] = ws.receive_json()
        assert state["seq"] <= seq
        if state["seq"] == seq:
            return state
    raise AssertionError(f"no state at seq {seq} in {limit} messages")


def test_the_first_message_is_the_state(client: TestClient, desk: Desk) -> None:
    desk.ok("shuffle")
    with client.websocket_connect("/ws/tables/T1", headers=desk.dealer) as ws:
        state = ws.receive_json()
    assert state["table"] == "T1" and state["seq"] == 1 and state["phase"] == "awaiting_cut"
    assert state["next_action"]["action"] == "cut"


def test_a_command_produces_a_new_state(client: TestClient, desk: Desk) -> None:
    with client.websocket_connect("/ws/tables/T1", headers=desk.dealer) as ws:
        assert ws.receive_json()["phase"] == "awaiting_shuffle"
        desk.ok("shuffle")
        assert state_with(ws, 1)["phase"] == "awaiting_cut"
        desk.ok("cut", json={})
        state = state_with(ws, 3)
        assert state["phase"] == "burning" and state["burn"] == {"reason": "shuffle", "remaining": 2}


def test_a_reconnecting_console_sees_the_true_state(client: TestClient, desk: Desk) -> None:
    with client.websocket_connect("/ws/tables/T1", headers=desk.dealer) as ws:
        ws.receive_json()
    desk.to_ready()
    desk.ok("open-betting")
    with client.websocket_connect("/ws/tables/T1", headers=desk.pit_boss) as ws:
        state = ws.receive_json()
    assert state["phase"] == "betting_open" and state["round"]["number"] == 1 and state["light"] == "green"


def test_the_session_token_may_come_in_the_query(client: TestClient, desk: Desk) -> None:
    token = desk.dealer["Authorization"].removeprefix("Bearer ")
    with client.websocket_connect(f"/ws/tables/T1?token={token}") as ws:
        assert ws.receive_json()["table"] == "T1"


def test_the_session_cookie_is_enough(client: TestClient) -> None:
    client.post("/api/login", json={"name": "surveillance", "password": "surveillance"})
    with client.websocket_connect("/ws/tables/T2") as ws:
        assert ws.receive_json()["table"] == "T2"


@pytest.mark.parametrize(
    ("headers", "path", "code"),
    [
        ({}, "/ws/tables/T1", 4401),
        ({"Authorization": "Bearer forged"}, "/ws/tables/T1", 4401),
        ("game_server", "/ws/tables/T1", 4403),
        ("dealer", "/ws/tables/T9", 4404),
    ],
)
def test_who_may_not_watch_is_closed_with_a_code(
    client: TestClient, game_server: dict[str, str], headers: Any, path: str, code: int
) -> None:
    if headers == "game_server":
        headers = game_server
    elif headers == "dealer":
        headers = sign_in(client, "dealer")
    with pytest.raises(WebSocketDisconnect) as closed, client.websocket_connect(path, headers=headers) as ws:
        ws.receive_json()
    assert closed.value.code == code
    assert closed.value.reason
