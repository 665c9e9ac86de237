"""The early shuffle and the deck inspections through the API (seed 000 §3.2.3, §1.3.3, §3.1): only a pit boss orders
one or approves the other, each is logged naming who did it, the dealer's console says what to do next, a table may
switch either off, and refused or malformed requests change nothing."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from dealer_ui.table_log import describe
from studio.clock import ManualClock
from studio.domain.events import ShoeEndReason, decode
from studio.domain.records import Record
from studio.table_service import TableService
from tests.server.conftest import NATURAL, Desk, studio_app

INSPECTING = """\
[table]
id = "T1"

[procedure]
burn_after_shuffle = 2
burn_after_error = 1
betting_seconds = 10
warning_seconds = 3
allow_early_close = true
inspect_decks = true

[[sources]]
id = "T1-keyed"
driver = "memory"
"""

NEITHER = """\
[table]
id = "T2"

[procedure]
burn_after_shuffle = 2
betting_seconds = 10
warning_seconds = 3
allow_early_close = true
allow_early_shuffle = false
inspect_decks = false

[[sources]]
id = "T2-keyed"
driver = "memory"
"""


@pytest.fixture
def app(tmp_path: Path, clock: ManualClock) -> FastAPI:
    """T1 inspects its decks and allows an early shuffle (the default); T2 does neither."""
    return studio_app(tmp_path, clock, INSPECTING, NEITHER)


def view(desk: Desk) -> dict[str, Any]:
    response = desk.client.get(f"/api/tables/{desk.table}", headers=desk.dealer)
    assert response.status_code == 200
    body: dict[str, Any] = response.json()
    return body


def records(desk: Desk, kind: str) -> list[Record]:
    return [record for record in desk.studio.store.read(desk.table) if record.kind == kind]


def refused(desk: Desk, action: str, who: dict[str, str], body: Any, status: int) -> dict[str, Any]:
    """`action` is refused with `status` and logs nothing; the answer's detail."""
    before, state = desk.seq, desk.studio.tables[desk.table].service.state
    response = desk.post(action, who, body)
    assert response.status_code == status, response.text
    assert desk.seq == before == desk.studio.store.last_seq(desk.table)
    assert desk.studio.tables[desk.table].service.state == state
    detail: dict[str, Any] = response.json()["detail"] if status == 409 else {}
    return detail


def inspected_and_ready(desk: Desk) -> None:
    assert desk.ok("inspect-decks", desk.pit_boss, {"dealer": "dealer"}) == ["DecksInspected"]
    desk.to_ready()


def test_the_decks_are_inspected_before_the_first_shuffle(desk: Desk, game_server: dict[str, str]) -> None:
    state = view(desk)
    assert state["inspection"] == {"stage": "start", "shoe": 1}
    assert state["next_action"]["action"] == "inspect" and state["next_action"]["text"] == "Inspect the decks"
    assert state["next_action"]["detail"] == (
        "for shoe 1: spread all 8 decks face up and face down with the pit boss, who approves (or replaces a deck)"
    )
    detail = refused(desk, "shuffle", desk.dealer, None, 409)
    assert detail["reason"] == "inspect the decks of shoe 1 first: a pit boss approves the inspection"
    assert "InspectDecks" in detail["expected"]

    assert refused(desk, "inspect-decks", desk.dealer, {"dealer": "dealer"}, 403) == {}  # a croupier cannot approve
    assert refused(desk, "inspect-decks", game_server, {"dealer": "dealer"}, 403) == {}
    detail = refused(desk, "inspect-decks", desk.pit_boss, {}, 409)  # no dealer on duty yet: name one
    assert detail["reason"] == "name the dealer who inspected the decks: no dealer is on duty at this table"
    detail = refused(desk, "inspect-decks", desk.pit_boss, {"dealer": "pitboss"}, 409)
    assert detail["reason"] == "the dealer who inspected the decks cannot approve the inspection"

    assert desk.ok("replace-deck", desk.pit_boss, {"deck": "3", "reason": "7H marked on the back"}) == ["DeckReplaced"]
    assert desk.ok("inspect-decks", desk.pit_boss, {"dealer": "dealer"}) == ["DecksInspected"]
    replaced, inspected = records(desk, "DeckReplaced")[0], records(desk, "DecksInspected")[0]
    boss = "pit_boss:pitboss"
    assert (replaced.actor, replaced.data) == (
        boss,
        {"shoe": 1, "stage": "start", "deck": "3", "reason": "7H marked on the back", "by": boss},
    )
    assert (inspected.actor, inspected.data) == (
        boss,
        {"shoe": 1, "stage": "start", "decks": 8, "dealer": "dealer:dealer", "approved_by": boss},
    )
    state = view(desk)
    assert state["inspection"] is None and state["next_action"]["action"] == "shuffle"
    detail = refused(desk, "inspect-decks", desk.pit_boss, {"dealer": "dealer"}, 409)
    assert detail["reason"] == "the decks of shoe 1 are inspected already: shuffle them"
    assert desk.ok("shuffle") == ["ShuffleConfirmed"]


def test_at_the_end_of_a_shoe_its_decks_then_the_next_shoes_are_inspected(desk: Desk) -> None:
    inspected_and_ready(desk)
    desk.ok("cut-card-out")
    desk.to_dealing()
    assert desk.deal(*NATURAL) == ["CardDealt"] * 4 + ["RoundCompleted", "ShoeEnded"]
    ended = records(desk, "ShoeEnded")[0]
    assert "reason" not in ended.data  # the cut card: the record keeps the form it always had
    assert decode(ended.kind, ended.data).reason is ShoeEndReason.CUT_CARD
    state = view(desk)
    assert state["inspection"] == {"stage": "end", "shoe": 1}
    assert state["next_action"]["detail"].startswith("shoe 1 has ended: spread all 8 decks")
    detail = refused(desk, "shuffle", desk.dealer, None, 409)
    assert detail["reason"] == "inspect the decks of shoe 1, which has ended, first: a pit boss approves the inspection"
    assert desk.ok("inspect-decks", desk.pit_boss, {}) == ["DecksInspected"]  # by the dealer on duty
    assert view(desk)["inspection"] == {"stage": "start", "shoe": 2}
    assert desk.ok("inspect-decks", desk.pit_boss, {"dealer": "dealer:carol"}) == ["DecksInspected"]
    assert [(r.data["shoe"], r.data["stage"], r.data["dealer"]) for r in records(desk, "DecksInspected")] == [
        (1, "start", "dealer:dealer"), (1, "end", "dealer:dealer"), (2, "start", "dealer:carol")]  # fmt: skip
    assert desk.ok("shuffle") == ["ShuffleConfirmed"]


def test_a_pit_boss_orders_an_early_shuffle_after_a_completed_round(
    desk: Desk, caplog: pytest.LogCaptureFixture
) -> None:
    inspected_and_ready(desk)
    desk.to_dealing()
    desk.deal(*NATURAL)
    body = {"reason": "cards suspected marked"}
    assert refused(desk, "order-shuffle", desk.dealer, body, 403) == {}  # a croupier cannot order it
    with caplog.at_level(logging.INFO, logger="dealer_ui.table_log"):
        assert desk.ok("order-shuffle", desk.pit_boss, body) == ["ShuffleOrdered", "ShoeEnded"]
    ordered, ended = records(desk, "ShuffleOrdered")[0], records(desk, "ShoeEnded")[0]
    boss = "pit_boss:pitboss"
    assert (ordered.actor, ordered.data) == (boss, {"shoe": 1, "reason": "cards suspected marked", "by": boss})
    assert ended.data["reason"] == "early_shuffle" and (ended.data["rounds"], ended.data["cards_dealt"]) == (1, 4)
    assert "T1: early shuffle of shoe 1 ordered by pit_boss:pitboss: cards suspected marked" in caplog.text
    assert "T1: shoe 1 ended (early shuffle) after 1 rounds" in caplog.text
    state = view(desk)
    assert state["phase"] == "awaiting_shuffle" and state["cut_position"] is None
    assert state["inspection"] == {"stage": "end", "shoe": 1}  # this table inspects the decks of the shoe it ended
    assert refused(desk, "open-betting", desk.dealer, None, 409)["phase"] == "awaiting_shuffle"


def test_an_early_shuffle_only_between_rounds_and_with_a_reason(desk: Desk) -> None:
    inspected_and_ready(desk)
    desk.to_dealing()
    desk.deal(*NATURAL[:2])
    detail = refused(desk, "order-shuffle", desk.pit_boss, {"reason": "cards suspected marked"}, 409)
    assert (detail["phase"], detail["command"], detail["reason"]) == ("dealing", "OrderShuffle", "not allowed now")
    desk.deal(*NATURAL[2:])
    detail = refused(desk, "order-shuffle", desk.pit_boss, {"reason": "   "}, 409)
    assert detail["reason"] == "an early shuffle needs a reason"


def test_a_table_may_switch_both_off(client: TestClient, desk: Desk) -> None:
    t2 = Desk(client, desk.studio, "T2", desk.dealer, desk.pit_boss)
    state = view(t2)
    assert state["inspection"] is None and state["next_action"]["action"] == "shuffle"
    detail = refused(t2, "inspect-decks", t2.pit_boss, {"dealer": "dealer"}, 409)
    assert detail["reason"] == "this table does not record deck inspections (procedure.inspect_decks)"
    detail = refused(t2, "replace-deck", t2.pit_boss, {"deck": "3", "reason": "bent"}, 409)
    assert detail["reason"] == "this table does not record deck inspections (procedure.inspect_decks)"
    t2.to_ready()  # shuffled at once, no inspection
    t2.to_dealing()
    t2.deal(*NATURAL)
    detail = refused(t2, "order-shuffle", t2.pit_boss, {"reason": "cards suspected marked"}, 409)
    assert detail["reason"] == "this table does not allow an early shuffle (procedure.allow_early_shuffle)"


BAD_INPUT: list[tuple[str, Any]] = [
    ("order-shuffle", {}),
    ("order-shuffle", {"reason": ""}),
    ("order-shuffle", {"reason": "r" * 501}),
    ("order-shuffle", {"reason": 5}),
    ("order-shuffle", None),
    ("inspect-decks", {"dealer": ""}),
    ("inspect-decks", {"dealer": "d" * 65}),
    ("inspect-decks", {"dealer": ["dealer"]}),
    ("inspect-decks", None),
    ("replace-deck", {}),
    ("replace-deck", {"deck": "3"}),
    ("replace-deck", {"deck": "", "reason": "bent"}),
    ("replace-deck", {"deck": "d" * 33, "reason": "bent"}),
    ("replace-deck", {"deck": "3", "reason": ""}),
    ("replace-deck", {"deck": "3", "reason": "r" * 501}),
]


@pytest.mark.parametrize(("action", "body"), BAD_INPUT)
def test_bad_input_is_422_and_logs_nothing(desk: Desk, action: str, body: Any) -> None:
    if action == "order-shuffle":  # where the route could act
        inspected_and_ready(desk)
    refused(desk, action, desk.pit_boss, body, 422)


def test_replaying_the_log_rebuilds_the_same_table(desk: Desk, clock: ManualClock) -> None:
    desk.ok("replace-deck", desk.pit_boss, {"deck": "red-0412", "reason": "two 7H"})
    inspected_and_ready(desk)
    desk.to_dealing()
    desk.deal(*NATURAL)
    desk.ok("order-shuffle", desk.pit_boss, {"reason": "cards suspected marked"})
    desk.ok("inspect-decks", desk.pit_boss, {})
    runtime = desk.studio.tables["T1"]
    replayed = TableService("T1", desk.studio.store, clock, runtime.config.procedure)
    assert replayed.state == runtime.service.state and replayed.seq == runtime.service.seq
    assert (replayed.state.end_inspected, replayed.state.start_inspected, replayed.state.shoe) == (1, 1, 1)
    assert view(desk)["inspection"] == {"stage": "start", "shoe": 2}


def test_the_log_lines_of_the_inspections(desk: Desk) -> None:
    desk.ok("replace-deck", desk.pit_boss, {"deck": "3", "reason": "7H marked"})
    desk.ok("inspect-decks", desk.pit_boss, {"dealer": "dealer"})
    lines = [describe(record) for record in desk.studio.store.read("T1")]
    assert lines == [
        (logging.WARNING, "table T1: deck 3 replaced by pit_boss:pitboss at the start inspection of shoe 1: 7H marked"),
        (logging.INFO, "table T1: decks of shoe 1 inspected (start) by dealer:dealer, approved by pit_boss:pitboss"),
    ]
