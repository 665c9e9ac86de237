"""The results feed: REST pages and a WebSocket stream, public facts only, in seq order, nothing but the suspension
itself while the table is suspended, resumable from the last seq without loss or duplicates; a misbehaving client is
closed alone."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from starlette.testclient import WebSocketTestSession
from starlette.websockets import WebSocketDisconnect

from dealer_ui.app import create_app
from dealer_ui.runtime import Studio, StudioSettings
from studio.clock import ManualClock
from studio.domain.records import Record
from tests.server.conftest import NATURAL, Desk, sign_in

PUBLIC = {"round_opened", "betting_closed", "card", "result", "void", "correction", "table_suspended", "table_resumed",
          "shoe_started", "shoe_ended", "last_hand", "table_closed", "table_opened", "dealer_changed"}  # fmt: skip
ROUND = ["round_opened", "betting_closed", "card", "card", "card", "card", "result"]


def page(client: TestClient, key: dict[str, str], after: int = 0, **query: Any) -> dict[str, Any]:
    response = client.get("/api/feed/T1", headers=key, params={"after": after, **query})
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def messages(client: TestClient, key: dict[str, str], after: int = 0) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = page(client, key, after)["messages"]
    return found


def receive(ws: WebSocketTestSession, count: int) -> list[dict[str, Any]]:
    return [ws.receive_json() for _ in range(count)]


def types(feed: Sequence[dict[str, Any]]) -> list[str]:
    return [message["type"] for message in feed]


def assert_in_order(feed: Sequence[dict[str, Any]]) -> None:
    seqs = [message["seq"] for message in feed]
    assert seqs == sorted(set(seqs)), f"not strictly increasing: {seqs}"
    assert set(types(feed)) <= PUBLIC


def play_round(desk: Desk, cards: Sequence[str] = NATURAL) -> None:
    desk.to_dealing()
    desk.deal(*cards)


def test_the_feed_holds_the_public_facts_of_a_round_in_seq_order(
    client: TestClient, desk: Desk, game_server: dict[str, str]
) -> None:
    desk.to_ready()
    play_round(desk)
    body = page(client, game_server)
    feed = body["messages"]
    assert types(feed) == ["shoe_started", *ROUND]  # no shuffle, burns or anything internal
    assert_in_order(feed)
    assert body["table"] == "T1" and body["next_after"] == desk.seq
    logged = {record.seq: record.kind for record in desk.studio.store.read("T1")}
    kinds = {
        "shoe_started": "CutCardPlaced",
        "round_opened": "BettingOpened",
        "betting_closed": "BettingClosed",
        "card": "CardDealt",
        "result": "RoundCompleted",
    }
    assert all(logged[message["seq"]] == kinds[message["type"]] for message in feed)
    started, opened, closed, *cards, result = feed
    assert (started["shoe"], started["decks"], started["cut_position"]) == (1, 8, 416 - 52)
    assert opened["game_id"] == "T1-20240501-120000-0001" and opened["round"] == 1
    assert opened["closes_at"] == "2024-05-01T12:00:10+00:00" and opened["table"] == "T1"
    assert closed["game_id"] == opened["game_id"]
    assert [(m["position"], m["side"], m["card"]) for m in cards] == [
        (1, "player", "9H"), (2, "banker", "2S"), (3, "player", "KD"), (4, "banker", "3C")
    ]  # fmt: skip
    assert (result["winner"], result["player_total"], result["banker_total"], result["natural"]) == (
        "player",
        9,
        5,
        True,
    )
    assert result["player"] == ["9H", "KD"] and result["banker"] == ["2S", "3C"]


def test_after_n_returns_only_what_came_after(client: TestClient, desk: Desk, game_server: dict[str, str]) -> None:
    desk.to_ready()
    play_round(desk)
    feed = messages(client, game_server)
    for index, message in enumerate(feed):
        assert messages(client, game_server, message["seq"]) == feed[index + 1 :]
    assert messages(client, game_server, desk.seq) == []
    assert messages(client, game_server, desk.seq + 100) == []


def test_pages_continue_from_next_after(client: TestClient, desk: Desk, game_server: dict[str, str]) -> None:
    desk.to_ready()
    play_round(desk)
    play_round(desk, ("8H", "2C", "KS", "3S"))
    collected: list[dict[str, Any]] = []
    after = 0
    while True:
        body = page(client, game_server, after, limit=3)
        assert len(body["messages"]) <= 3
        if not body["messages"]:
            break
        collected += body["messages"]
        after = body["next_after"]
    assert collected == messages(client, game_server)
    assert types(collected) == ["shoe_started", *ROUND * 2]


@pytest.mark.parametrize("query", [{"after": -1}, {"after": "x"}, {"limit": 0}, {"limit": 1001}, {"limit": "all"}])
def test_bad_feed_queries_are_422(client: TestClient, game_server: dict[str, str], query: dict[str, Any]) -> None:
    assert client.get("/api/feed/T1", headers=game_server, params=query).status_code == 422


def test_an_unknown_table_has_no_feed(client: TestClient, game_server: dict[str, str]) -> None:
    assert client.get("/api/feed/T9", headers=game_server).status_code == 404


def suspend_mid_round_and_correct(desk: Desk) -> int:
    """Two cards dealt, an error declared, the first card corrected and a stray card read while suspended; returns
    the seq of the suspension."""
    desk.to_ready()
    desk.to_dealing()
    desk.deal("9H", "2S")
    desk.ok("declare-error", json={"kind": "card exposed"})
    suspended_at = desk.seq
    assert desk.ok("correct", desk.pit_boss, {"position": 1, "card": "8H", "reason": "keyed wrong"}) == [
        "CardCorrected"
    ]
    assert desk.card("5S") == ["CardReadWhileSuspended"]
    return suspended_at


def test_only_the_suspension_is_published_while_the_table_is_suspended(
    client: TestClient, desk: Desk, studio: Studio, game_server: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    published: list[int] = []
    publish = studio.hub.publish

    def spy(records: Sequence[Record]) -> None:
        published.extend(record.seq for record in records)
        publish(records)

    monkeypatch.setattr(studio.hub, "publish", spy)
    with client.websocket_connect("/ws/feed/T1", headers=game_server) as ws:
        suspended_at = suspend_mid_round_and_correct(desk)
        assert max(published) == suspended_at == desk.published  # the suspension at once; what follows waits
        before = messages(client, game_server)
        assert types(before) == ["shoe_started", "round_opened", "betting_closed", "card", "card", "table_suspended"]
        assert page(client, game_server)["next_after"] == suspended_at
        assert messages(client, game_server, before[-1]["seq"]) == []

        assert desk.ok("continue", desk.pit_boss, {"reason": "card replaced"}) == [
            "PlayContinued",
            "TableResumed",
            "BurnRequired",
        ]
        assert published == list(range(1, desk.seq + 1))  # everything, once, in order
        after = messages(client, game_server)
        assert types(after) == [*types(before), "correction", "table_resumed"]
        correction, resumed = after[-2:]
        assert (correction["position"], correction["original"], correction["corrected"]) == (1, "9H", "8H")
        assert correction["game_id"] == before[1]["game_id"] and correction["seq"] > suspended_at
        assert resumed["decision"] == "corrected"

        desk.card("4C")  # the error burn
        desk.deal("KD", "3C")
        full = messages(client, game_server)
        assert types(full) == [*types(after), "card", "card", "result"]
        assert full[-1]["player"] == ["8H", "KD"]
        assert_in_order(full)
        assert receive(ws, len(full)) == full


def test_a_void_is_published_when_the_pit_boss_voids(
    client: TestClient, desk: Desk, game_server: dict[str, str]
) -> None:
    suspend_mid_round_and_correct(desk)
    desk.ok("void", desk.pit_boss, {"reason": "misdeal"})
    feed = messages(client, game_server)
    assert types(feed) == ["shoe_started", "round_opened", "betting_closed", "card", "card", "table_suspended",
                           "correction", "void", "table_resumed"]  # fmt: skip
    void, resumed = feed[-2:]
    assert void["reason"] == "misdeal" and void["game_id"] == feed[1]["game_id"]
    assert resumed["decision"] == "voided"
    assert_in_order(feed)


def test_a_restart_while_suspended_still_holds_back(tmp_path: Path, desk: Desk, game_server: dict[str, str]) -> None:
    """The log is the truth: a studio restarted on the same database serves the same feed, and keeps holding back
    what was logged during a suspension until the pit boss resolves it."""
    suspended_at = suspend_mid_round_and_correct(desk)
    held = messages(desk.client, game_server)
    files = tuple(sorted(tmp_path.glob("t*.toml")))
    settings = StudioSettings(database=str(tmp_path / "s.db"), demo=True, table_files=files)
    desk.client.__exit__(None, None, None)  # the first studio stops
    with TestClient(create_app(settings, ManualClock(desk.studio.clock.now()))) as again:
        restarted: Studio = again.app.state.studio  # type: ignore[attr-defined]
        assert restarted.tables["T1"].service.published_seq == suspended_at
        assert messages(again, game_server) == held
        boss = sign_in(again, "pitboss")
        assert again.post("/api/tables/T1/continue", headers=boss, json={}).status_code == 200
        assert types(messages(again, game_server)) == [*types(held), "correction", "table_resumed"]


def test_the_stream_replays_the_backlog_then_goes_live(
    client: TestClient, desk: Desk, game_server: dict[str, str]
) -> None:
    desk.to_ready()
    play_round(desk)
    logged = messages(client, game_server)
    with client.websocket_connect("/ws/feed/T1?after=0", headers=game_server) as ws:
        assert receive(ws, len(logged)) == logged
        desk.ok("open-betting")
        live = ws.receive_json()
    assert live["type"] == "round_opened" and live["round"] == 2 and live["seq"] == desk.seq
    assert live == messages(client, game_server, logged[-1]["seq"])[0]


def test_the_stream_starts_after_n(client: TestClient, desk: Desk, game_server: dict[str, str]) -> None:
    desk.to_ready()
    play_round(desk)
    feed = messages(client, game_server)
    with client.websocket_connect(f"/ws/feed/T1?after={feed[3]['seq']}", headers=game_server) as ws:
        assert receive(ws, len(feed) - 4) == feed[4:]


def test_a_client_that_reconnects_with_its_last_seq_misses_nothing_and_gets_nothing_twice(
    client: TestClient, desk: Desk, game_server: dict[str, str]
) -> None:
    desk.to_ready()
    seen: list[dict[str, Any]] = []
    with client.websocket_connect("/ws/feed/T1?after=0", headers=game_server) as ws:
        desk.to_dealing()
        desk.deal("9H", "2S")
        seen += receive(ws, 5)  # the shoe started, the round opened, betting closed, two cards
    last = seen[-1]["seq"]
    desk.deal("KD", "3C")  # while the client is away
    desk.ok("open-betting")
    with client.websocket_connect(f"/ws/feed/T1?after={last}", headers=game_server) as ws:
        seen += receive(ws, 4)  # the backlog: two cards, the result, the next round opened
        desk.ok("close-betting")
        desk.deal("8H")
        seen += receive(ws, 2)  # live
        last = seen[-1]["seq"]
    desk.deal("2C", "KS", "3S")
    with client.websocket_connect(f"/ws/feed/T1?after={last}", headers=game_server) as ws:
        seen += receive(ws, 4)
    assert_in_order(seen)
    assert seen == messages(client, game_server)
    assert types(seen) == ["shoe_started", *ROUND * 2]


def test_a_subscriber_connected_through_a_suspension_gets_the_held_messages_once(
    client: TestClient, desk: Desk, game_server: dict[str, str]
) -> None:
    with client.websocket_connect("/ws/feed/T1", headers=game_server) as ws:
        suspend_mid_round_and_correct(desk)
        seen = receive(ws, 6)
        last = seen[-1]["seq"]
    with client.websocket_connect(f"/ws/feed/T1?after={last}", headers=game_server) as ws:
        desk.ok("continue", desk.pit_boss, json={})
        desk.card("4C")
        desk.deal("KD", "3C")
        seen += receive(ws, 5)
    assert types(seen) == ["shoe_started", "round_opened", "betting_closed", "card", "card", "table_suspended",
                           "correction", "table_resumed", "card", "card", "result"]  # fmt: skip
    assert seen == messages(client, game_server)


def test_the_api_key_may_come_in_the_query(client: TestClient, desk: Desk, game_server: dict[str, str]) -> None:
    desk.to_ready()
    desk.ok("open-betting")
    with client.websocket_connect(f"/ws/feed/T1?token={game_server['X-API-Key']}") as ws:
        assert types(receive(ws, 2)) == ["shoe_started", "round_opened"]


@pytest.mark.parametrize(
    ("who", "path", "code"),
    [
        (None, "/ws/feed/T1", 4401),
        ("forged", "/ws/feed/T1", 4401),
        ("dealer", "/ws/feed/T1", 4403),
        ("game_server", "/ws/feed/T9", 4404),
        ("game_server", "/ws/feed/T1?after=x", 4400),
    ],
)
def test_who_may_not_subscribe_is_closed_with_a_code(
    client: TestClient, game_server: dict[str, str], who: str | None, path: str, code: int
) -> None:
    headers = {"game_server": game_server, "forged": {"X-API-Key": "sk_forged"}, None: {}}.get(who)
    if who == "dealer":
        headers = sign_in(client, "dealer")
    with pytest.raises(WebSocketDisconnect) as closed, client.websocket_connect(path, headers=headers) as ws:
        ws.receive_json()
    assert closed.value.code == code and closed.value.reason


@pytest.mark.parametrize(
    ("sent", "reason"),
    [
        ("x" * 1025, "message too large (1025 bytes; at most 1024)"),
        ("p" * 100_000, "message too large"),
        ("hello", "the feed accepts only pings"),
        ('{"type": "subscribe", "after": 0}', "the feed accepts only pings"),
        (b"\x00\x01binary", "the feed accepts only"),
    ],
    ids=["just-oversized", "far-oversized", "not-a-ping", "json-not-a-ping", "binary"],
)
def test_a_bad_client_message_closes_that_connection_only(
    client: TestClient, desk: Desk, game_server: dict[str, str], sent: str | bytes, reason: str
) -> None:
    desk.to_ready()
    with (
        client.websocket_connect("/ws/feed/T1", headers=game_server) as bad,
        client.websocket_connect("/ws/feed/T1", headers=game_server) as good,
    ):
        desk.ok("open-betting")
        assert types(receive(bad, 2)) == types(receive(good, 2)) == ["shoe_started", "round_opened"]
        if isinstance(sent, bytes):
            bad.send_bytes(sent)
        else:
            bad.send_text(sent)
        with pytest.raises(WebSocketDisconnect) as closed:
            bad.receive_json()
        assert closed.value.code == 1008
        assert closed.value.reason.startswith(reason)
        desk.ok("close-betting")
        desk.deal("9H")
        assert types(receive(good, 2)) == ["betting_closed", "card"]
    assert desk.studio.hub.subscribers("T1") == 0


@pytest.mark.parametrize("ping", ["ping", '{"type":"ping"}', '{"type": "ping"}', " ping\n"])
def test_pings_keep_the_connection_open(client: TestClient, desk: Desk, game_server: dict[str, str], ping: str) -> None:
    desk.to_ready()
    with client.websocket_connect("/ws/feed/T1", headers=game_server) as ws:
        ws.send_text(ping)
        ws.send_text(ping)
        desk.ok("open-betting")
        assert types(receive(ws, 2)) == ["shoe_started", "round_opened"]


def test_a_subscriber_too_far_behind_is_dropped_and_resumes_from_the_log(
    client: TestClient, desk: Desk, game_server: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("dealer_ui.hub.QUEUE_LIMIT", 1)  # the last card publishes the card and the result at once
    desk.to_ready()
    with client.websocket_connect("/ws/feed/T1", headers=game_server) as slow:
        desk.to_dealing()
        desk.deal(*NATURAL[:3])
        seen = receive(slow, 6)
        desk.deal(NATURAL[3])
        with pytest.raises(WebSocketDisconnect) as closed:
            slow.receive_json()
    assert closed.value.code == 1013 and closed.value.reason.startswith("too slow")
    with client.websocket_connect(f"/ws/feed/T1?after={seen[-1]['seq']}", headers=game_server) as again:
        seen += receive(again, 2)
    assert seen == messages(client, game_server) and types(seen) == ["shoe_started", *ROUND]
