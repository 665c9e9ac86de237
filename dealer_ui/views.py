"""What the consoles show, as JSON: a table's state for the dealer and pit boss."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from dealer_ui.evidence import url_of as evidence_url
from dealer_ui.runtime import Studio, TableRuntime
from studio.domain.console import BurnShown, NextAction, SuspensionShown, betting_light, dealer_actions, next_action
from studio.domain.events import RoundCompleted
from studio.domain.procedure import TableState, inspection_due
from studio.domain.records import StoreError
from studio.domain.rules import hand_total
from studio.domain.seats import seats_view


def result_view(result: RoundCompleted) -> dict[str, Any]:
    return {
        "round": result.round, "game_id": result.game_id,
        "player": [card.code for card in result.player], "banker": [card.code for card in result.banker],
        "player_total": result.player_total, "banker_total": result.banker_total, "winner": result.winner.value,
        "natural": result.natural, "player_pair": result.player_pair, "banker_pair": result.banker_pair,
        "last_hand": result.last_hand,
    }  # fmt: skip


def _round(state: TableState) -> dict[str, Any] | None:
    current = state.round
    if current is None:
        return None
    return {
        "number": current.number,
        "game_id": current.game_id,
        "closes_at": current.closes_at.isoformat(),
        "cards": [{"position": i + 1, "side": side.value, "card": card.code} for i, (side, card) in
                  enumerate(current.dealt)],
        "player": [card.code for card in current.player],
        "banker": [card.code for card in current.banker],
        "player_total": hand_total(current.player),
        "banker_total": hand_total(current.banker),
        "next_side": current.next_side.value if current.next_side else None,
        "last_hand": state.last_round is not None and current.number >= state.last_round,
    }  # fmt: skip


def burn_view(burn: BurnShown | None) -> dict[str, Any] | None:
    if burn is None:
        return None
    return {"reason": burn.reason, "count": burn.count, "cards": list(burn.cards), "done": burn.done,
            "approved_by": burn.approved_by}  # fmt: skip


def suspension_story_view(shown: SuspensionShown | None) -> dict[str, Any] | None:
    if shown is None:
        return None
    return {"reason": shown.reason, "detail": shown.detail, "game_id": shown.game_id, "read": shown.read,
            "corrections": list(shown.corrections), "decision": shown.decision, "by": shown.by,
            "decision_reason": shown.decision_reason}  # fmt: skip


LOG_DOWN_DETAIL = (
    "The studio database does not answer, so nothing can be recorded. Leave the next card in the shoe; the table "
    "resumes by itself when the database answers. Call the pit boss."
)


def table_view(
    runtime: TableRuntime,
    now: datetime,
    recent: list[dict[str, Any]],
    chat: list[dict[str, Any]] | None = None,
    bet_totals: dict[str, int] | None = None,
    roads: dict[str, Any] | None = None,
) -> dict[str, Any]:
    state = runtime.service.state
    action = next_action(state, now)
    light, left = betting_light(state, now)
    log_down = runtime.service.log_unavailable
    if log_down is not None:  # nothing can be logged: the procedure's next step waits for the database
        action = NextAction("wait", "Stop dealing: the log is unavailable", LOG_DOWN_DETAIL)
        light = "red"
    due = inspection_due(state)
    actions = dealer_actions(state, now)
    if runtime.simulator is None:
        actions["draw"] = "This table reads a real shoe: draw the card from it."
    if log_down is not None:
        actions = dict.fromkeys(actions, "Stop dealing: the log is unavailable.")
    suspension = None
    if state.suspension is not None:
        read = state.suspension.read
        suspension = {
            "reason": state.suspension.reason,
            "detail": state.suspension.detail,
            "interrupted": state.suspension.resume.value,
            "since": None if runtime.suspended_at is None else runtime.suspended_at.isoformat(),
            "waiting_seconds": None if runtime.suspended_at is None else (now - runtime.suspended_at).total_seconds(),
            "read": None if read is None else {
                "card": read.card.code if read.card else None, "source": read.source, "device_seq": read.device_seq,
                "confidence": read.confidence, "raw": read.raw,
                # the camera's crop, served to staff once its hash matches the log (dealer_ui/routes/evidence.py)
                "evidence": None if read.evidence_sha256 is None or runtime.suspension_seq is None else {
                    "seq": runtime.suspension_seq, "sha256": read.evidence_sha256,
                    "url": evidence_url(runtime.table_id, runtime.suspension_seq),
                },
            },
            "corrected": state.suspension.corrected.code if state.suspension.corrected else None,
        }  # fmt: skip
    return {
        "table": runtime.table_id,
        "seq": runtime.service.seq,
        "phase": state.phase.value,
        "next_action": {"action": action.action, "text": action.text, "detail": action.detail},
        # the dealer's actions the procedure allows now (the console's buttons by data-action), and why each other
        # is not allowed, in words: none while the log is down; "draw" only at a table on the simulated shoe
        "allowed_actions": [action for action, why in actions.items() if why is None],
        "refused_actions": {action: why for action, why in actions.items() if why is not None},
        "light": light,
        "seconds_left": round(left, 1),
        "dealer": state.dealer,
        "shoe": state.shoe,
        "cards_drawn": state.cards_drawn,
        "cut_position": state.cut_position,
        "last_hand_round": state.last_round,
        "burn": None if state.burn is None else {"reason": state.burn.reason, "remaining": state.burn.remaining},
        "last_burn": burn_view(runtime.console.burn),  # the burn under way or the last, until a card is dealt
        # the last suspension (its read) and the pit boss's decision on it, until another round opens
        "last_suspension": suspension_story_view(runtime.console.suspension),
        "inspection": None if due is None else {"stage": due[0].value, "shoe": due[1]},  # waiting for a pit boss
        "round": _round(state),
        "last_result": None if state.last_result is None else result_view(state.last_result),
        "last_void": runtime.last_void,
        "recent_results": recent,
        "roads": roads,
        "suspension": suspension,
        "log_unavailable": log_down,  # why the log cannot be written, while it cannot
        "settlement_pending": runtime.settlement_pending,  # a logged result the ledger has not settled yet
        "sources": {name: {"state": h.state.value, "detail": h.detail} for name, h in runtime.source_states.items()},
        "simulated_shoe": runtime.simulator is not None,
        "chat": chat or [],
        "bet_totals": bet_totals or {},  # stakes per bet type in the round under way, minor units
        "seats": seats_view(state),  # number, nickname, status (null: a table without seats)
    }


def console_view(studio: Studio, runtime: TableRuntime) -> dict[str, Any]:
    """The table view with what the console shows beside it: the chat and the stakes of the round under way (left
    out, with the roads, while the database does not answer: the console still shows the table and why it waits)."""
    current = runtime.service.state.round
    now = studio.clock.now()
    if runtime.service.log_unavailable is not None:
        return table_view(runtime, now, list(runtime.recent))
    try:
        totals = studio.wallets.totals(current.game_id) if current is not None else {}
        chat = studio.chat.messages(runtime.table_id, limit=20)
        roads = studio.roads(runtime.table_id)
    except StoreError:
        return table_view(runtime, now, list(runtime.recent))
    return table_view(runtime, now, list(runtime.recent), chat, totals, roads)
