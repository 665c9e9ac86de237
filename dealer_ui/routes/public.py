"""What a game server may show its players of a table it joins mid-round: the table's public state, as of the last
seq published on the results feed (never what a suspension still holds back, never staff data)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from fastapi import APIRouter, Depends, Request

from dealer_ui.auth import require
from dealer_ui.routes.lookup import runtime_of, studio_of
from dealer_ui.runtime import TableRuntime
from dealer_ui.views import result_view
from studio.domain.console import betting_light
from studio.domain.feed import UNDER_INVESTIGATION, compact_roads
from studio.domain.procedure import TableState, is_last_hand
from studio.domain.roles import Role
from studio.domain.rules import hand_total
from studio.domain.seats import seats_view
from studio.users import Principal

router = APIRouter(tags=["results feed"])
READERS = (Role.GAME_SERVER, Role.DEALER, Role.PIT_BOSS, Role.SURVEILLANCE)


@router.get("/api/tables/{table_id}/public")
def public_table(table_id: str, request: Request, _: Principal = Depends(require(*READERS))) -> dict[str, Any]:
    """The table as players may see it: phase, round and its cards, betting timer, shoe, dealer (display name), seats
    (number, nickname, status), last result and roads. `seq` is the feed seq it is as of: follow the feed with
    `after=seq` to miss nothing."""
    runtime = runtime_of(request, table_id)
    studio = studio_of(request)
    seq, state = runtime.service.public
    view = public_view(runtime, seq, state, studio.clock.now())
    view["roads"] = compact_roads(studio.roads(table_id))
    return view


def public_view(runtime: TableRuntime, seq: int, state: TableState, now: datetime) -> dict[str, Any]:
    current = state.round
    _, seconds_left = betting_light(state, now)
    return {
        "table": runtime.table_id,
        "seq": seq,
        "phase": state.phase.value,
        "suspended": state.suspended,
        "message": UNDER_INVESTIGATION if state.suspended else None,
        "seconds_left": round(seconds_left, 1),
        "round": None if current is None else {
            "number": current.number, "game_id": current.game_id,
            "opened_at": current.opened_at.isoformat(), "closes_at": current.closes_at.isoformat(),
            "cards": [{"position": i + 1, "side": side.value, "card": card.code}
                      for i, (side, card) in enumerate(current.dealt)],
            "player_total": hand_total(current.player), "banker_total": hand_total(current.banker),
            "last_hand": is_last_hand(state, current.number),
        },
        "shoe": {
            "number": state.shoe, "decks": state.config.decks, "cut_position": state.cut_position,
            "cards_drawn": state.cards_drawn, "last_hand_round": state.last_round,
        },
        "dealer": runtime.dealer_name,
        "seats": seats_view(state),  # number, nickname, status; null for a table without seats (never player ids)
        "last_result": None if state.last_result is None else result_view(state.last_result),
    }  # fmt: skip
