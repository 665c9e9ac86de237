"""What a game server is told of the table itself (issue 14, point 1): a suspension at once, with a message for players
and nothing more; its end with the pit boss's decision, after what it held back; a shoe started and ended; the last
hand; the table closed and opened; the dealer changed (display name only); the public state of a table joined
mid-round; the same notices in the table chat."""

from __future__ import annotations

import json
from typing import Any

import pytest
from fastapi.testclient import TestClient

from dealer_ui.runtime import DEMO_DEALER_NAME, Studio
from studio.domain.feed import UNDER_INVESTIGATION
from studio.domain.roles import Role
from tests.server.conftest import NATURAL, Desk, add_person, session_for, sign_in
from tests.server.test_feed import assert_in_order, messages, receive, types

STAFF_WORDS = ("pitboss", "pit_boss", "dealer:", "T1-keyed")  # account names and device names


def public(client: TestClient, key: dict[str, str]) -> dict[str, Any]:
    response = client.get("/api/tables/T1/public", headers=key)
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def suspend_mid_round(desk: Desk) -> None:
    desk.to_ready()
    desk.to_dealing()
    desk.deal("9H", "2S")
    desk.ok("declare-error", json={"kind": "card exposed", "detail": "the pit boss saw 2S face up"})


def test_a_suspension_is_announced_at_once_with_a_message_for_players_and_nothing_else(
    client: TestClient, desk: Desk, game_server: dict[str, str]
) -> None:
    with client.websocket_connect("/ws/feed/T1", headers=game_server) as ws:
        desk.to_ready()
        desk.to_dealing()
        desk.deal("9H")
        desk.ok("declare-error", json={"kind": "card exposed", "detail": "2S seen by pit boss"})
        seen = receive(ws, 5)  # shoe started, round opened, betting closed, a card, the suspension
    suspended = seen[-1]
    assert suspended["type"] == "table_suspended" and suspended["seq"] == desk.seq == desk.published
    assert suspended["game_id"] == seen[1]["game_id"]
    assert (suspended["reason"], suspended["message"]) == ("procedure", UNDER_INVESTIGATION)
    assert set(suspended) == {"table", "seq", "type", "at", "game_id", "reason", "message"}
    text = json.dumps(suspended)
    assert "2S" not in text and "card exposed" not in text
    assert not any(word in text for word in STAFF_WORDS)


def test_a_misread_suspension_names_its_category_never_the_read(
    client: TestClient, desk: Desk, studio: Studio, game_server: dict[str, str]
) -> None:
    desk.to_ready()
    desk.ok("open-betting")
    desk.card("QH")  # a card while betting is open: suspends, the read set aside
    suspended = messages(client, game_server)[-1]
    assert (suspended["type"], suspended["reason"]) == ("table_suspended", "procedure")
    assert "QH" not in json.dumps(suspended)
    assert studio.tables["T1"].service.state.suspension is not None


@pytest.mark.parametrize(
    ("action", "body", "decision", "released"),
    [
        ("continue", {"reason": "fine"}, "continued", ["table_resumed"]),
        ("void", {"reason": "misdeal"}, "voided", ["void", "table_resumed"]),
    ],
)
def test_the_end_of_a_suspension_comes_with_the_pit_boss_decision_after_what_it_held(
    client: TestClient,
    desk: Desk,
    game_server: dict[str, str],
    action: str,
    body: dict[str, str],
    decision: str,
    released: list[str],
) -> None:
    suspend_mid_round(desk)
    held_from = desk.seq
    desk.card("5S")  # read while suspended: held (and never on the feed)
    assert messages(client, game_server, held_from) == []
    desk.ok(action, desk.pit_boss, body)
    after = messages(client, game_server, held_from)
    assert types(after) == released
    assert after[-1]["decision"] == decision and set(after[-1]) == {"table", "seq", "type", "at", "decision"}
    assert_in_order(messages(client, game_server))


def test_a_correction_makes_the_decision_corrected_and_carries_the_game_id(
    client: TestClient, desk: Desk, game_server: dict[str, str]
) -> None:
    suspend_mid_round(desk)
    game_id = desk.studio.tables["T1"].service.state.round.game_id  # type: ignore[union-attr]
    desk.ok("correct", desk.pit_boss, {"position": 2, "card": "3S", "reason": "keyed wrong"})
    desk.ok("continue", desk.pit_boss, {"reason": "corrected"})
    correction, resumed = [m for m in messages(client, game_server) if m["type"] in ("correction", "table_resumed")]
    assert (correction["game_id"], correction["original"], correction["corrected"]) == (game_id, "2S", "3S")
    assert resumed["decision"] == "corrected" and resumed["seq"] > correction["seq"]


def test_a_shoe_starts_ends_at_the_cut_card_and_announces_its_last_hand(
    client: TestClient, desk: Desk, game_server: dict[str, str]
) -> None:
    desk.to_ready()
    desk.ok("open-betting")
    desk.ok("cut-card-out")  # the cut card comes out while betting is open: this round is the last
    desk.ok("close-betting")
    desk.deal(*NATURAL)
    feed = messages(client, game_server)
    assert types(feed) == ["shoe_started", "round_opened", "last_hand", "betting_closed", "card", "card", "card",
                           "card", "result", "shoe_ended"]  # fmt: skip
    started, last_hand, ended = feed[0], feed[2], feed[-1]
    assert (started["shoe"], started["decks"], started["cut_position"]) == (1, 8, 416 - 52)
    assert last_hand["round"] == 1 == feed[1]["round"]
    assert feed[-2]["last_hand"] is True
    assert (ended["shoe"], ended["reason"], ended["rounds"], ended["voids"]) == (1, "cut_card", 1, 0)


def test_closing_and_opening_the_table_are_announced_without_the_reason_or_who(
    client: TestClient, desk: Desk, game_server: dict[str, str]
) -> None:
    desk.to_ready()
    desk.ok("close", desk.pit_boss, {"reason": "dealer unwell, pit boss pitboss covering"})
    desk.ok("open", desk.pit_boss)
    closed, opened = messages(client, game_server)[-2:]
    assert (closed["type"], opened["type"]) == ("table_closed", "table_opened")
    assert closed["message"] and "unwell" not in json.dumps(closed)
    assert not any(word in json.dumps([closed, opened]) for word in STAFF_WORDS)


def test_a_dealer_change_shows_the_display_name_never_the_account(
    client: TestClient, desk: Desk, studio: Studio, game_server: dict[str, str]
) -> None:
    desk.to_ready()
    desk.ok("dealer-change")  # the demo dealer, shown as its display name
    desk.card("2C")  # each change burns a card before the next round
    add_person(studio, "marek7", Role.DEALER)  # no display name yet
    desk.ok("dealer-change", session_for(studio, "marek7", Role.DEALER))
    desk.card("3C")
    studio.users.set_display_name("marek7", "  Marek  ")
    desk.ok("dealer-change", session_for(studio, "marek7", Role.DEALER))
    changes = [m for m in messages(client, game_server) if m["type"] == "dealer_changed"]
    assert [m["dealer"] for m in changes] == [DEMO_DEALER_NAME, None, "Marek"]
    assert "marek7" not in json.dumps(changes) and "dealer:" not in json.dumps(changes)
    assert studio.tables["T1"].service.state.dealer == "dealer:marek7"  # the log keeps the account, for the audit


def test_a_game_server_joining_mid_round_draws_the_table_then_follows_the_feed(
    client: TestClient, desk: Desk, game_server: dict[str, str]
) -> None:
    desk.to_ready()
    desk.ok("dealer-change")
    desk.deal("2C")  # the dealer-change burn
    desk.to_dealing()
    desk.deal("9H", "2S")
    view = public(client, game_server)
    assert view["seq"] == desk.seq and view["phase"] == "dealing" and not view["suspended"]
    assert view["dealer"] == DEMO_DEALER_NAME
    assert [(c["position"], c["side"], c["card"]) for c in view["round"]["cards"]] == [
        (1, "player", "9H"),
        (2, "banker", "2S"),
    ]
    assert (view["round"]["player_total"], view["round"]["banker_total"]) == (9, 2)
    assert view["shoe"] == {"number": 1, "decks": 8, "cut_position": 416 - 52, "cards_drawn": 5,
                            "last_hand_round": None}  # fmt: skip
    text = json.dumps(view)
    assert not any(word in text for word in STAFF_WORDS)
    with client.websocket_connect(f"/ws/feed/T1?after={view['seq']}", headers=game_server) as ws:
        desk.deal("KD", "3C")
        assert types(receive(ws, 3)) == ["card", "card", "result"]
    after = public(client, game_server)
    assert after["round"] is None and after["last_result"]["winner"] == "player"
    assert after["roads"]["bead_plate"] == "P"


def test_the_public_state_of_a_suspended_table_is_as_of_the_suspension(
    client: TestClient, desk: Desk, game_server: dict[str, str]
) -> None:
    suspend_mid_round(desk)
    suspended_at = desk.seq
    desk.ok("correct", desk.pit_boss, {"position": 2, "card": "3S", "reason": "keyed wrong"})  # held back
    view = public(client, game_server)
    assert view["seq"] == suspended_at and view["suspended"] and view["message"] == UNDER_INVESTIGATION
    assert [c["card"] for c in view["round"]["cards"]] == ["9H", "2S"]  # not yet the corrected 3S
    assert "suspension" not in view and "keyed wrong" not in json.dumps(view)
    desk.ok("continue", desk.pit_boss, {"reason": "corrected"})
    view = public(client, game_server)
    assert view["seq"] == desk.seq and not view["suspended"]
    assert [c["card"] for c in view["round"]["cards"]] == ["9H", "3S"]


def test_who_may_read_the_public_state(client: TestClient, game_server: dict[str, str]) -> None:
    assert client.get("/api/tables/T1/public").status_code == 401
    assert client.get("/api/tables/T1/public", headers={"X-API-Key": "sk_wrong"}).status_code == 401
    assert client.get("/api/tables/T9/public", headers=game_server).status_code == 404
    assert client.get("/api/tables/T1/public", headers=sign_in(client, "surveillance")).status_code == 200


def test_the_table_chat_carries_the_same_notices_as_system_messages(
    client: TestClient, desk: Desk, game_server: dict[str, str]
) -> None:
    suspend_mid_round(desk)
    desk.ok("void", desk.pit_boss, {"reason": "misdeal"})
    chat = client.get("/api/tables/T1/chat", headers=game_server).json()["messages"]
    notices = [m["shown"] for m in chat if m["system"]]
    assert notices[0].startswith("A new shoe") and notices[1] == UNDER_INVESTIGATION
    assert "voided" in notices[2] and "refunded" in notices[2]
    assert all(m["nickname"] == "Studio" and m["player_id"] == "" for m in chat if m["system"])
    said = client.post("/api/tables/T1/chat", headers=game_server,
                       json={"player_id": "p1", "nickname": "Ann", "text": "what happened?"})  # fmt: skip
    assert said.status_code == 201
    last = client.get("/api/tables/T1/chat", headers=game_server).json()["messages"][-1]
    assert (last["shown"], last["system"]) == ("what happened?", False)
