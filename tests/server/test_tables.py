"""Every dealer and pit boss route: what it logs and shows when the procedure allows it; 409 naming the phase, the
command, the reason and what the phase expects when it does not, with nothing logged; 422 for bad input."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from dealer_ui.app import create_app
from dealer_ui.runtime import Studio, StudioSettings
from studio.clock import ManualClock
from studio.domain import commands as c
from studio.domain.procedure import Phase, expected_commands
from studio.domain.roles import Role
from tests.server.conftest import NATURAL, Desk, add_person, session_for, sign_in


def view(desk: Desk) -> dict[str, Any]:
    response = desk.client.get(f"/api/tables/{desk.table}", headers=desk.dealer)
    assert response.status_code == 200
    body: dict[str, Any] = response.json()
    return body


def test_the_tables_and_their_state(client: TestClient, desk: Desk) -> None:
    tables = client.get("/api/tables", headers=desk.dealer).json()
    assert [table["table"] for table in tables] == ["T1", "T2"]
    state = view(desk)
    assert state["phase"] == "awaiting_shuffle" and state["seq"] == 0
    assert state["next_action"]["action"] == "shuffle"
    assert state["light"] == "red" and state["seconds_left"] == 0
    assert state["round"] is None and state["suspension"] is None and state["recent_results"] == []
    assert set(state["sources"]) == {"T1-keyed"}
    assert state["simulated_shoe"] is False


def test_an_unknown_table_is_404(client: TestClient, desk: Desk) -> None:
    assert client.get("/api/tables/T9", headers=desk.dealer).status_code == 404
    assert client.post("/api/tables/T9/shuffle", headers=desk.dealer).status_code == 404
    assert client.post("/api/tables/T9/card", headers=desk.dealer, json={"card": "QH"}).status_code == 404


def test_a_shoe_and_a_round_through_the_dealer_routes(desk: Desk) -> None:
    assert desk.ok("shuffle") == ["ShuffleConfirmed"]
    assert view(desk)["next_action"]["action"] == "cut"
    assert desk.ok("cut", json={}) == ["CutCardPlaced", "BurnRequired"]
    state = view(desk)
    assert state["cut_position"] == 416 - 52 and state["burn"] == {"reason": "shuffle", "remaining": 2}
    assert state["next_action"]["text"] == "Burn 2 cards"
    assert desk.card("2D") == ["CardBurned"]
    assert desk.card("3D") == ["CardBurned", "BurnCompleted"]
    assert view(desk)["next_action"]["action"] == "open_betting"
    assert desk.ok("open-betting") == ["BettingOpened"]
    state = view(desk)
    assert state["round"]["game_id"] == "T1-20240501-120000-0001"
    assert state["light"] == "green" and state["seconds_left"] == 10
    assert desk.ok("close-betting") == ["BettingClosed"]  # this table allows an early close
    assert view(desk)["next_action"]["text"] == "Deal to Player"
    assert desk.deal(*NATURAL) == ["CardDealt"] * 4 + ["RoundCompleted"]
    state = view(desk)
    assert state["phase"] == "ready" and state["round"] is None
    result = state["last_result"]
    assert result["player"] == ["9H", "KD"] and result["banker"] == ["2S", "3C"]
    assert (result["player_total"], result["banker_total"], result["winner"], result["natural"]) == (
        9,
        5,
        "player",
        True,
    )
    assert state["recent_results"] == [result]


def test_the_response_carries_what_was_logged_and_the_new_state(desk: Desk) -> None:
    body = desk.post("shuffle").json()
    assert body["logged"] == [{"seq": 1, "kind": "ShuffleConfirmed"}]
    assert body["table"]["phase"] == "awaiting_cut" and body["table"]["seq"] == 1


def test_the_cut_card_where_the_dealer_placed_it(desk: Desk) -> None:
    desk.ok("shuffle")
    desk.ok("cut", json={"cards_in_front": 300})
    assert view(desk)["cut_position"] == 300


def test_betting_light_follows_the_clock(desk: Desk, clock: ManualClock) -> None:
    desk.to_ready()
    desk.ok("open-betting")
    clock.advance(7.5)
    state = view(desk)
    assert (state["light"], state["seconds_left"]) == ("yellow", 2.5)
    clock.advance(2.5)
    state = view(desk)
    assert (state["light"], state["next_action"]["action"]) == ("red", "close_betting")


def test_no_more_bets_on_time_at_a_table_without_early_close(
    client: TestClient, desk: Desk, clock: ManualClock
) -> None:
    t2 = Desk(client, desk.studio, "T2", desk.dealer, desk.pit_boss)
    t2.to_ready()
    t2.ok("open-betting")
    before = t2.seq
    response = t2.post("close-betting")
    assert response.status_code == 409
    detail = response.json()["detail"]
    assert detail["phase"] == "betting_open" and detail["command"] == "CloseBetting"
    assert detail["reason"] == "betting is open for 10.0 s more; this table does not allow early close"
    assert t2.seq == before
    clock.advance(10)
    assert t2.ok("close-betting") == ["BettingClosed"]


def test_dealer_change_burns_one_card_for_the_new_dealer(client: TestClient, desk: Desk) -> None:
    desk.to_ready()
    add_person(desk.studio, "carol", Role.DEALER)
    carol = sign_in(client, "carol", "carol-pw")
    assert desk.ok("dealer-change", carol) == ["DealerChanged", "BurnRequired"]
    state = view(desk)
    assert state["dealer"] == "dealer:carol"
    assert state["burn"] == {"reason": "dealer_change", "remaining": 1}
    assert desk.card("4C") == ["CardBurned", "BurnCompleted"]


def test_cut_card_out_makes_the_next_round_the_last_hand(desk: Desk) -> None:
    desk.to_ready()
    assert desk.ok("cut-card-out") == ["CutCardAppeared"]
    assert desk.ok("cut-card-out") == []  # already known: no effect, nothing logged
    assert view(desk)["last_hand_round"] == 1
    desk.to_dealing()
    assert desk.deal(*NATURAL) == ["CardDealt"] * 4 + ["RoundCompleted", "ShoeEnded"]
    state = view(desk)
    assert state["last_result"]["last_hand"] is True and state["phase"] == "awaiting_shuffle"


def test_declare_error_suspends_the_table_for_the_pit_boss(desk: Desk) -> None:
    desk.to_ready()
    desk.to_dealing()
    desk.deal("9H", "2S")
    assert desk.ok("declare-error", json={"kind": "card exposed", "detail": "P2 flashed"}) == ["TableSuspended"]
    state = view(desk)
    assert state["phase"] == "suspended"
    assert state["next_action"] == {
        "action": "call_pit_boss",
        "text": "Call the pit boss",
        "detail": "card exposed: P2 flashed",
    }
    assert state["suspension"]["reason"] == "dealer_declared" and state["suspension"]["interrupted"] == "dealing"


def test_a_card_while_betting_suspends_and_the_pit_boss_corrects_it_into_the_deal(desk: Desk) -> None:
    desk.to_ready()
    desk.ok("open-betting")
    assert desk.card("th") == ["TableSuspended"]  # lower case, T for ten: read as 10H
    suspension = view(desk)["suspension"]
    assert suspension["reason"] == "card_while_betting" and suspension["read"]["card"] == "10H"
    assert suspension["read"]["source"] == "keyed"
    assert desk.ok("void", desk.pit_boss, {"reason": "card out during betting"}) == [
        "RoundVoided",
        "TableResumed",
        "BurnRequired",
    ]
    assert desk.card("4C") == ["CardBurned", "BurnCompleted"]
    assert desk.phase == "ready"


def test_correct_a_read_then_continue_deals_the_corrected_card(desk: Desk) -> None:
    desk.to_ready()
    desk.to_dealing()
    desk.deal("9H", "2S", "KD")
    assert desk.client.portal is not None
    desk.client.portal.call(desk.studio.handle, "T1", _unreadable())  # on the event loop, as the supervisor does
    assert desk.phase == "suspended"
    assert desk.ok("correct", desk.pit_boss, {"position": 0, "card": "3C", "reason": "card shown to camera"}) == [
        "CardCorrected"
    ]
    assert view(desk)["suspension"]["corrected"] == "3C"
    assert desk.ok("continue", desk.pit_boss, {"reason": "read confirmed"}) == [
        "PlayContinued",
        "TableResumed",
        "CardDealt",
        "RoundCompleted",
        "BurnRequired",  # the error burn follows the round
    ]
    assert view(desk)["last_result"]["banker"] == ["2S", "3C"]


def test_a_decision_on_a_table_resumed_meanwhile_is_refused_in_words(desk: Desk) -> None:
    """Two pit bosses, one suspension: the second's "continue" comes after the first's. The refusal says what
    happened, as a person would; the machine fields stay for API clients."""
    desk.to_ready()
    desk.to_dealing()
    desk.ok("declare-error", json={"kind": "card exposed"})
    desk.ok("continue", desk.pit_boss, {"reason": "seen on camera"})
    for action, body, what in [("continue", {}, "nothing to continue"), ("void", {"reason": "x"}, "no round to void"),
                               ("correct", CORRECT_READ, "no card to correct")]:  # fmt: skip
        response = desk.post(action, desk.pit_boss, body)
        assert response.status_code == 409, response.text
        detail = response.json()["detail"]
        assert detail["phase"] == "burning" and detail["reason"] == "not allowed now"
        assert detail["message"] == (f"This table is not suspended any more: there is {what} (cards are being burned).")


def test_correct_a_dealt_card(desk: Desk) -> None:
    desk.to_ready()
    desk.to_dealing()
    desk.deal("9H", "2S")
    desk.ok("declare-error", json={"kind": "wrong card keyed"})
    assert desk.ok("correct", desk.pit_boss, {"position": 1, "card": "8H", "reason": "keyed wrong"}) == [
        "CardCorrected"
    ]
    assert view(desk)["round"]["player"] == ["8H"]
    assert desk.ok("continue", desk.pit_boss, json={}) == ["PlayContinued", "TableResumed", "BurnRequired"]
    assert desk.phase == "burning"


def _unreadable() -> c.DrawCard:
    return c.DrawCard("device:T1-keyed", c.CardRead(None, "T1-keyed", 17, 0.2, "02ff03"))


def fresh(desk: Desk) -> None:
    pass


def awaiting_cut(desk: Desk) -> None:
    desk.ok("shuffle")


def ready(desk: Desk) -> None:
    desk.to_ready()


def dealing(desk: Desk) -> None:
    desk.to_ready()
    desk.to_dealing()
    desk.deal("9H", "2S")


def suspended_between_rounds(desk: Desk) -> None:
    desk.to_ready()
    desk.ok("declare-error", json={"kind": "dropped"})


def suspended_in_round(desk: Desk) -> None:
    dealing(desk)
    desk.ok("declare-error", json={"kind": "card exposed"})


D, P = "dealer", "pit_boss"
CORRECT_READ = {"position": 0, "card": "QH", "reason": "x"}
REFUSALS: list[tuple[Callable[[Desk], None], str, str, Any, str, str, str]] = [
    # setup, who, action, body, phase, command, reason (start of)
    (fresh, D, "open-betting", None, "awaiting_shuffle", "OpenBetting", "not allowed now"),
    (fresh, D, "cut", {}, "awaiting_shuffle", "PlaceCutCard", "not allowed now"),
    (fresh, D, "close-betting", None, "awaiting_shuffle", "CloseBetting", "not allowed now"),
    (fresh, D, "cut-card-out", None, "awaiting_shuffle", "ReportCutCard", "not allowed now"),
    (fresh, D, "declare-error", {"kind": "dropped"}, "awaiting_shuffle", "DeclareError", "not allowed now"),
    (fresh, P, "correct", CORRECT_READ, "awaiting_shuffle", "CorrectCard", "not allowed now"),
    (fresh, P, "continue", {}, "awaiting_shuffle", "ContinuePlay", "not allowed now"),
    (fresh, P, "void", {"reason": "x"}, "awaiting_shuffle", "VoidRound", "not allowed now"),
    (awaiting_cut, D, "cut", {"cards_in_front": 3}, "awaiting_cut", "PlaceCutCard", "the cut card must leave 6 to 416"),
    (awaiting_cut, D, "shuffle", None, "awaiting_cut", "ConfirmShuffle", "not allowed now"),
    (ready, D, "shuffle", None, "ready", "ConfirmShuffle", "not allowed now"),
    (ready, D, "close-betting", None, "ready", "CloseBetting", "not allowed now"),
    (ready, P, "continue", {"reason": "x"}, "ready", "ContinuePlay", "not allowed now"),
    (dealing, D, "open-betting", None, "dealing", "OpenBetting", "not allowed now"),
    (dealing, D, "dealer-change", None, "dealing", "ChangeDealer", "not allowed now"),
    (dealing, D, "close-betting", None, "dealing", "CloseBetting", "not allowed now"),
    (dealing, P, "void", {"reason": "x"}, "dealing", "VoidRound", "not allowed now"),
    (suspended_between_rounds, P, "void", {"reason": "x"}, "suspended", "VoidRound", "no round is in play"),
    (suspended_between_rounds, D, "open-betting", None, "suspended", "OpenBetting", "not allowed now"),
    (suspended_between_rounds, D, "declare-error", {"kind": "again"}, "suspended", "DeclareError", "not allowed now"),
    (suspended_in_round, P, "void", {"reason": "   "}, "suspended", "VoidRound", "a void needs a reason"),
    (suspended_in_round, P, "correct", CORRECT_READ, "suspended", "CorrectCard", "no card read is waiting"),
    (suspended_in_round, P, "correct", {**CORRECT_READ, "position": 3}, "suspended", "CorrectCard", "position 3 is"),
    (
        suspended_in_round,
        P,
        "correct",
        {**CORRECT_READ, "position": 1, "reason": " "},
        "suspended",
        "CorrectCard",
        "a correction needs a reason",
    ),
    (suspended_in_round, D, "close-betting", None, "suspended", "CloseBetting", "not allowed now"),
]


@pytest.mark.parametrize(
    ("setup", "who", "action", "body", "phase", "command", "reason"),
    REFUSALS,
    ids=[f"{i:02d}-{setup.__name__}-{action}" for i, (setup, _, action, *_) in enumerate(REFUSALS)],
)
def test_a_command_the_phase_refuses_is_409_and_logs_nothing(
    desk: Desk,
    setup: Callable[[Desk], None],
    who: str,
    action: str,
    body: Any,
    phase: str,
    command: str,
    reason: str,
) -> None:
    setup(desk)
    before, state_before = desk.seq, desk.studio.tables["T1"].service.state
    response = desk.post(action, desk.dealer if who == D else desk.pit_boss, body)
    assert response.status_code == 409, response.text
    detail = response.json()["detail"]
    assert detail["phase"] == phase and detail["command"] == command
    assert detail["reason"].startswith(reason)
    assert detail["expected"] and all(isinstance(name, str) for name in detail["expected"])
    assert command not in detail["expected"] or reason != "not allowed now"
    message = detail["message"]  # a sentence a person would say, never a class name
    assert command not in message and "_" not in message and message[0].isupper() and message.endswith(".")
    assert (reason in message) if reason != "not allowed now" else ("now:" in message or "not suspended" in message)
    assert desk.seq == before == desk.studio.store.last_seq("T1")
    assert desk.studio.tables["T1"].service.state == state_before
    assert view(desk)["seq"] == before


def test_what_each_phase_expects_is_named(desk: Desk) -> None:
    detail = desk.post("open-betting").json()["detail"]
    assert detail["expected"] == list(expected_commands(Phase.AWAITING_SHUFFLE))
    assert "ConfirmShuffle" in detail["expected"]


def test_a_pit_boss_closes_and_opens_the_table_between_rounds(desk: Desk) -> None:
    desk.to_ready()
    assert desk.ok("close", desk.pit_boss, {"reason": "end of the session"}) == ["TableClosed"]
    assert desk.phase == "closed"
    refused = desk.post("open-betting")
    assert refused.status_code == 409 and refused.json()["detail"]["phase"] == "closed"
    assert desk.ok("open", desk.pit_boss) == ["TableOpened"]
    assert desk.phase == "ready"


def test_closing_needs_a_reason_and_a_moment_between_rounds(desk: Desk) -> None:
    desk.to_ready()
    before = desk.seq
    assert desk.post("close", desk.pit_boss, {}).status_code == 422
    assert desk.post("close", desk.pit_boss, {"reason": ""}).status_code == 422
    assert desk.post("close", desk.pit_boss, {"reason": "r" * 501}).status_code == 422
    refused = desk.post("close", desk.pit_boss, {"reason": "   "})
    assert refused.status_code == 409 and refused.json()["detail"]["reason"] == "closing a table needs a reason"
    assert desk.post("open", desk.pit_boss).status_code == 409  # it is not closed
    desk.to_dealing()
    refused = desk.post("close", desk.pit_boss, {"reason": "end of the session"})
    assert refused.status_code == 409 and refused.json()["detail"]["phase"] == "dealing"
    assert desk.seq == before + 2  # only the round's opening and "no more bets"


def test_the_simulated_shoe_draw_is_refused_at_a_table_with_a_real_reader(desk: Desk) -> None:
    desk.to_ready()
    before = desk.seq
    response = desk.post("simulator/draw")
    assert response.status_code == 409
    assert response.json()["detail"] == "this table reads a real shoe: draw the card from it"
    assert desk.seq == before


BAD_INPUT: list[tuple[str, Any]] = [
    ("card", {"card": "ZZ"}),
    ("card", {"card": "QX"}),
    ("card", {"card": "1H"}),
    ("card", {"card": "11H"}),
    ("card", {"card": "Q"}),
    ("card", {"card": "QHHHH"}),
    ("card", {"card": 12}),
    ("card", {}),
    ("card", None),
    ("cut", {"cards_in_front": -1}),
    ("cut", {"cards_in_front": 10_001}),
    ("cut", {"cards_in_front": "front"}),
    ("declare-error", {}),
    ("declare-error", {"kind": ""}),
    ("declare-error", {"kind": "k" * 65}),
    ("declare-error", {"kind": "dropped", "detail": "d" * 501}),
    ("correct", {"position": 1, "card": "QH"}),
    ("correct", {"position": 1, "card": "QH", "reason": ""}),
    ("correct", {"position": 1, "card": "QH", "reason": "r" * 501}),
    ("correct", {"position": 1, "card": "ZZ", "reason": "misread"}),
    ("correct", {"position": 7, "card": "QH", "reason": "misread"}),
    ("correct", {"position": -1, "card": "QH", "reason": "misread"}),
    ("correct", {"card": "QH", "reason": "misread"}),
    ("continue", {"reason": "r" * 501}),
    ("void", {}),
    ("void", {"reason": ""}),
    ("void", {"reason": "r" * 501}),
]


def test_bad_input_is_422_and_logs_nothing(desk: Desk) -> None:
    suspended_in_round(desk)  # the pit boss's routes validate in the phase where they could act
    before = desk.seq
    for action, body in BAD_INPUT:
        who = desk.pit_boss if action in ("correct", "continue", "void") else desk.dealer
        response = desk.post(action, who, body)
        assert response.status_code == 422, (action, body, response.text)
    assert desk.seq == before


def test_a_body_that_is_not_json_is_422(desk: Desk) -> None:
    response = desk.client.post(
        "/api/tables/T1/card", headers={**desk.dealer, "Content-Type": "application/json"}, content=b"QH"
    )
    assert response.status_code == 422
    assert desk.seq == 0


def test_a_bad_card_code_says_why(desk: Desk) -> None:
    response = desk.post("card", json={"card": "QX"})
    assert response.status_code == 422
    assert "QX" in response.json()["detail"]
    assert desk.seq == 0


def test_the_view_names_the_dealer_actions_the_procedure_allows_now(desk: Desk, clock: ManualClock) -> None:
    def allowed() -> list[str]:
        return list(view(desk)["allowed_actions"])

    assert allowed() == ["shuffle", "dealer_change"]
    refused = view(desk)["refused_actions"]  # every other action, with why not in words
    assert sorted(refused) == ["close_betting", "cut", "cut_card_out", "declare_error", "draw", "key_card",
                               "open_betting"]  # fmt: skip
    assert refused["close_betting"] == (  # what the dealer may do instead, never the pit boss's moves
        'You cannot call "no more bets" now: the shoe is waiting to be shuffled; now you can confirm the shuffle or '
        "change the dealer."
    )
    assert refused["key_card"] == "You cannot take a card: no card is due while the shoe is waiting to be shuffled."
    assert refused["draw"] == "This table reads a real shoe: draw the card from it."
    desk.ok("shuffle")
    assert allowed() == ["cut", "dealer_change"]
    desk.ok("cut", json={})
    assert allowed() == ["cut_card_out", "key_card", "declare_error"]  # a card is due: the burn (no simulated shoe)
    desk.deal("2D", "3D")
    assert allowed() == ["open_betting", "dealer_change", "cut_card_out", "declare_error"]  # no card is due
    desk.ok("open-betting")
    assert allowed() == ["close_betting", "cut_card_out", "declare_error"]  # T1 allows an early close
    desk.ok("close-betting")
    assert allowed() == ["cut_card_out", "key_card", "declare_error"]
    desk.ok("cut-card-out")
    assert allowed() == ["key_card", "declare_error"]  # the last hand is known already
    desk.ok("declare-error", json={"kind": "card exposed"})
    assert allowed() == []  # suspended: only the pit boss acts


def test_no_more_bets_is_offered_only_once_the_timer_is_over_where_no_early_close_is_allowed(
    client: TestClient, studio: Studio, clock: ManualClock
) -> None:
    desk = Desk(client, studio, "T2", session_for(studio, "dealer", Role.DEALER),
                session_for(studio, "pitboss", Role.PIT_BOSS))  # fmt: skip
    desk.to_ready()
    desk.ok("open-betting")
    assert "close_betting" not in view(desk)["allowed_actions"]
    assert view(desk)["refused_actions"]["close_betting"] == (
        'You cannot call "no more bets": betting is open for 10.0 s more; this table does not allow early close.'
    )
    clock.advance(10)
    assert "close_betting" in view(desk)["allowed_actions"]


def test_the_view_keeps_the_last_burn_with_its_cards_until_a_card_is_dealt(desk: Desk) -> None:
    desk.ok("shuffle")
    desk.ok("cut", json={})
    assert view(desk)["last_burn"] == {"reason": "shuffle", "count": 2, "cards": [], "done": False, "approved_by": None}
    desk.card("2D")
    assert view(desk)["last_burn"]["cards"] == ["2D"]
    desk.card("3D")
    assert view(desk)["last_burn"] == {"reason": "shuffle", "count": 2, "cards": ["2D", "3D"], "done": True,
                                       "approved_by": None}  # fmt: skip
    desk.to_dealing()
    assert view(desk)["last_burn"]["done"] is True  # still shown while betting and until the first card
    desk.card("9H")
    assert view(desk)["last_burn"] is None


def test_the_view_tells_the_last_suspension_its_read_and_the_pit_boss_decision(desk: Desk) -> None:
    desk.to_ready()
    desk.ok("open-betting")
    game_id = view(desk)["round"]["game_id"]
    desk.card("QH")  # a card while betting is open
    story = view(desk)["last_suspension"]
    assert story["reason"] == "card_while_betting" and story["game_id"] == game_id
    assert story["read"] == {"card": "QH", "source": "keyed", "device_seq": None, "confidence": 1.0}
    assert story["decision"] is None
    desk.ok("void", desk.pit_boss, {"reason": "card out during betting"})
    story = view(desk)["last_suspension"]
    assert (story["decision"], story["by"], story["decision_reason"]) == (
        "voided",
        "pit_boss:pitboss",
        "card out during betting",
    )
    assert view(desk)["last_burn"] == {"reason": "error", "count": 1, "cards": [], "done": False,
                                       "approved_by": "pit_boss:pitboss"}  # fmt: skip
    desk.card("4C")
    assert view(desk)["last_suspension"]["decision"] == "voided"  # shown until another round opens
    desk.ok("open-betting")
    assert view(desk)["last_suspension"] is None


def test_the_simulated_shoe_draws_only_a_card_that_is_due(tmp_path: Path, clock: ManualClock) -> None:
    """At a table on the built-in simulated shoe, "draw" between rounds is refused and logs nothing: a card when none
    is due would suspend the table."""
    table = tmp_path / "t1.toml"
    table.write_text('[table]\nid = "T1"\n')  # no [[sources]]: the built-in simulated shoe
    app = create_app(StudioSettings(database=str(tmp_path / "s.db"), demo=True, table_files=(table,)), clock)
    with TestClient(app) as client:
        studio: Studio = app.state.studio
        runtime = studio.tables["T1"]
        assert runtime.simulator is not None
        dealer = session_for(studio, "dealer", Role.DEALER)
        refused = client.post("/api/tables/T1/simulator/draw", headers=dealer)
        assert refused.status_code == 409
        assert refused.json()["detail"] == (
            "no card is due now (the table is awaiting shuffle): the simulated shoe keeps its cards"
        )
        assert runtime.simulator.position == 0 and runtime.service.seq == 0
        assert runtime.service.state.phase is Phase.AWAITING_SHUFFLE
