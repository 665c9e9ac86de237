"""Who may do what: unauthenticated → 401, the wrong role → 403, and a refused request logs nothing."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

from dealer_ui.runtime import Studio
from studio.users import Role
from tests.server.conftest import NATURAL, Desk, add_person, sign_in

DEALER_ACTIONS: list[tuple[str, Any]] = [
    ("shuffle", None),
    ("cut", {}),
    ("open-betting", None),
    ("close-betting", None),
    ("dealer-change", None),
    ("cut-card-out", None),
    ("declare-error", {"kind": "dropped"}),
    ("card", {"card": "QH"}),
    ("simulator/draw", None),
]
PIT_BOSS_ACTIONS: list[tuple[str, Any]] = [
    ("correct", {"position": 0, "card": "QH", "reason": "misread"}),
    ("continue", {"reason": "resolved"}),
    ("void", {"reason": "misdeal"}),
    ("close", {"reason": "end of the session"}),
    ("open", None),
    ("order-shuffle", {"reason": "cards suspected marked"}),
    ("inspect-decks", {"dealer": "dealer"}),
    ("replace-deck", {"deck": "3", "reason": "7H marked"}),
]
ALL_ACTIONS = DEALER_ACTIONS + PIT_BOSS_ACTIONS


def test_every_action_needs_a_sign_in(client: TestClient, desk: Desk) -> None:
    for action, body in ALL_ACTIONS:
        response = client.post(f"/api/tables/T1/{action}", json=body)
        assert response.status_code == 401, action
    assert desk.seq == 0


def test_reading_needs_a_sign_in(client: TestClient) -> None:
    for path in ("/api/tables", "/api/tables/T1", "/api/feed/T1"):
        assert client.get(path).status_code == 401, path


def test_a_dealer_calling_a_pit_boss_action_is_403(desk: Desk) -> None:
    desk.to_ready()
    desk.ok("declare-error", json={"kind": "card exposed"})
    before = desk.seq
    for action, body in PIT_BOSS_ACTIONS:
        response = desk.post(action, desk.dealer, body)
        assert response.status_code == 403, action
        assert response.json()["detail"] == "dealer may not do this (needs: pit_boss)"
    assert desk.seq == before and desk.phase == "suspended"


def test_a_game_server_key_may_not_act_on_a_table(desk: Desk, game_server: dict[str, str]) -> None:
    for action, body in ALL_ACTIONS:
        response = desk.post(action, game_server, body)
        assert response.status_code == 403, action
        assert response.json()["detail"].startswith("game_server may not do this"), action
    assert desk.seq == 0


def test_surveillance_is_read_only(client: TestClient, desk: Desk) -> None:
    watcher = sign_in(client, "surveillance")
    for action, body in ALL_ACTIONS:
        assert desk.post(action, watcher, body).status_code == 403, action
    assert client.get("/api/tables/T1", headers=watcher).status_code == 200
    assert desk.seq == 0


def test_a_game_server_reads_the_feed_but_not_the_tables(client: TestClient, game_server: dict[str, str]) -> None:
    assert client.get("/api/feed/T1", headers=game_server).status_code == 200
    assert client.get("/api/tables", headers=game_server).status_code == 403
    assert client.get("/api/tables/T1", headers=game_server).status_code == 403


@pytest.mark.parametrize(("name", "status"), [("dealer", 403), ("pitboss", 200), ("surveillance", 200), ("admin", 200)])
def test_who_reads_the_feed(client: TestClient, name: str, status: int) -> None:
    assert client.get("/api/feed/T1", headers=sign_in(client, name)).status_code == status


def test_a_pit_boss_may_stand_in_for_the_dealer(desk: Desk) -> None:
    assert desk.ok("shuffle", desk.pit_boss) == ["ShuffleConfirmed"]
    assert desk.studio.store.last_seq("T1") == 1
    assert next(iter(desk.studio.store.read("T1"))).actor == "pit_boss:pitboss"


def test_every_command_records_who_issued_it(desk: Desk) -> None:
    desk.to_ready()
    desk.to_dealing()
    desk.deal(*NATURAL[:2])
    desk.ok("declare-error", json={"kind": "card exposed"})
    desk.ok("continue", desk.pit_boss, {"reason": "card replaced"})
    actors = {record.kind: record.actor for record in desk.studio.store.read("T1")}
    assert actors["ShuffleConfirmed"] == "dealer:dealer"
    assert actors["CardDealt"] == "dealer:dealer"  # keyed in by the dealer
    assert actors["TableSuspended"] == "dealer:dealer"
    assert actors["PlayContinued"] == "pit_boss:pitboss"
    assert actors["BurnRequired"] == "pit_boss:pitboss"  # the error burn, on the pit boss's approval


def test_the_dealer_on_duty_cannot_resolve_their_own_error(client: TestClient, desk: Desk, studio: Studio) -> None:
    """A pit boss who took over the table as its dealer needs another pit boss to resolve an error there."""
    desk.to_ready()
    assert desk.ok("dealer-change", desk.pit_boss) == ["DealerChanged", "BurnRequired"]
    desk.card("8C")
    desk.ok("declare-error", desk.pit_boss, {"kind": "dropped"})
    before = desk.seq
    response = desk.post("continue", desk.pit_boss, {"reason": "fine"})
    assert response.status_code == 409
    assert response.json()["detail"]["reason"] == "the dealer on duty cannot resolve an error at their own table"
    assert desk.seq == before
    add_person(studio, "bob", Role.PIT_BOSS)
    assert desk.ok("continue", sign_in(client, "bob", "bob-pw"), {"reason": "fine"})[0] == "PlayContinued"


def test_an_admin_is_not_a_pit_boss_for_decisions(client: TestClient, desk: Desk) -> None:
    desk.to_ready()
    desk.ok("declare-error", json={"kind": "dropped"})
    before = desk.seq
    response = desk.post("continue", sign_in(client, "admin"), {"reason": "fine"})
    assert response.status_code == 409
    assert response.json()["detail"]["reason"] == "only a pit boss may decide, not admin:admin"
    assert desk.seq == before


SEAT_ACTIONS: list[tuple[str, Any]] = [
    ("seats", {"player_id": "p1", "nickname": "Ann"}),
    ("seats/change", {"player_id": "p1", "seat": 2}),
    ("seats/leave", {"player_id": "p1"}),
    ("seats/pass", {"player_id": "p1"}),
]


def test_seats_are_a_game_servers_business(client: TestClient, desk: Desk) -> None:
    """Players' seats are taken, moved, left and passed by their game server only: 401 without a key, 403 for staff."""
    for action, body in SEAT_ACTIONS:
        assert client.post(f"/api/tables/T1/{action}", json=body).status_code == 401, action
        for name in ("dealer", "pitboss", "surveillance", "admin"):
            response = desk.post(action, sign_in(client, name), body)
            assert response.status_code == 403, (action, name)
            assert response.json()["detail"].endswith("may not do this (needs: game_server)")
    assert desk.seq == 0
