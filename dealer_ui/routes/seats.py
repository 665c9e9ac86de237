"""Seats (seed 004): a game server seats its players at a table with seats, moves them, lets them leave or pass a
round. Each is a command of the table's procedure, logged in the table's own log (naming the game server as its actor
and the player by id) and sent on the results feed by seat number and nickname only.

409 with the procedure's reason when it refuses (a seat taken, a player who plays the round under way leaving, a pass
after betting closed...); 403 for a player of another game server; 422 for malformed input. Nothing is logged then.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, HTTPException, Request
from pydantic import BaseModel, Field

from dealer_ui.auth import require
from dealer_ui.routes.lookup import runtime_of, studio_of
from dealer_ui.routes.tables import refusal
from dealer_ui.runtime import TableRuntime
from studio.domain import commands as c
from studio.domain.errors import ProcedureError
from studio.domain.procedure import TableState
from studio.domain.roles import Role
from studio.domain.seats import seats_view
from studio.users import Principal
from studio.wallets import WalletError

router = APIRouter(tags=["seats"])
game_server = require(Role.GAME_SERVER)
PLAYER_ID = Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9._:-]+$")
SEAT = Field(ge=1, le=64, description="a seat number, 1 to the table's seats")


class Player(BaseModel):
    player_id: str = PLAYER_ID


class NewSeat(Player):
    nickname: str = Field(min_length=1, max_length=32, description="what the table is shown (never the player id)")
    seat: int | None = Field(default=None, ge=1, le=64, description="a free seat; none: the first free seat")


class SeatMove(Player):
    seat: int = SEAT


def _own(request: Request, who: Principal, player_id: str) -> None:
    """A game server seats only its own players (a player without a wallet yet is the game server's to seat)."""
    try:
        owner = studio_of(request).wallets.owner(player_id)
    except WalletError:
        return
    if owner != who.name:
        raise HTTPException(403, f"player {player_id!r} belongs to another game server")


def seats_for(state: TableState, who: Principal) -> list[dict[str, Any]]:
    """The table's seats as `who` may see them: each seat's number, nickname and status, and the player id of its
    own players only."""
    mine = {seat.number: seat.player_id for seat in state.seats if seat.game_server == who.name}
    return [{**seat, "player_id": mine.get(seat["seat"])} for seat in seats_view(state) or []]


async def _submit(request: Request, table_id: str, who: Principal, command: c.Command) -> dict[str, Any]:
    runtime = runtime_of(request, table_id)
    try:
        logged = await studio_of(request).submit(table_id, command)
    except ProcedureError as error:
        raise HTTPException(409, refusal(error)) from None
    return {
        "logged": [{"seq": entry.record.seq, "kind": entry.record.kind} for entry in logged],
        "seats": seats_for(runtime.service.state, who),
    }


def _player_table(request: Request, table_id: str, who: Principal, player_id: str) -> TableRuntime:
    runtime = runtime_of(request, table_id)
    _own(request, who, player_id)
    return runtime


@router.get("/api/tables/{table_id}/seats")
def seats(table_id: str, request: Request, who: Principal = Depends(game_server)) -> dict[str, Any]:
    """Every seat (null for a table without seats): number, nickname, status (`free`, `seated`, `waiting` for the
    next round, `betting`, `playing`, `passed`, `sat_out`), and `player_id` for this game server's own players."""
    state = runtime_of(request, table_id).service.state
    return {"table": table_id, "seats": seats_for(state, who) if state.config.seats else None}


@router.post("/api/tables/{table_id}/seats")
async def take_seat(table_id: str, body: NewSeat, request: Request,
                    who: Principal = Depends(game_server)) -> dict[str, Any]:  # fmt: skip
    """Seat a player (in `seat`, or the first free one). Taken while a round is under way, the seat plays from the
    next round: the player bets from then on."""
    _player_table(request, table_id, who, body.player_id)
    return await _submit(request, table_id, who, c.TakeSeat(who.actor, body.player_id, body.nickname, body.seat))


@router.post("/api/tables/{table_id}/seats/change")
async def change_seat(table_id: str, body: SeatMove, request: Request,
                      who: Principal = Depends(game_server)) -> dict[str, Any]:  # fmt: skip
    """Move a seated player to a free seat: between rounds, or while the player has no part in the round under way."""
    _player_table(request, table_id, who, body.player_id)
    return await _submit(request, table_id, who, c.ChangeSeat(who.actor, body.player_id, body.seat))


@router.post("/api/tables/{table_id}/seats/leave")
async def leave_seat(table_id: str, body: Player, request: Request,
                     who: Principal = Depends(game_server)) -> dict[str, Any]:  # fmt: skip
    """The player leaves the table: between rounds, or while they have no part in the round under way."""
    _player_table(request, table_id, who, body.player_id)
    return await _submit(request, table_id, who, c.LeaveSeat(who.actor, body.player_id))


@router.post("/api/tables/{table_id}/seats/pass")
async def pass_round(table_id: str, body: Player, request: Request,
                     who: Principal = Depends(game_server)) -> dict[str, Any]:  # fmt: skip
    """The seated player passes the round in betting (before any bet of theirs in it; undo them first)."""
    runtime = _player_table(request, table_id, who, body.player_id)
    current = runtime.service.state.round
    open_bets = (
        0 if current is None else len(studio_of(request).wallets.bets(current.game_id, body.player_id, status="open"))
    )
    return await _submit(request, table_id, who, c.PassRound(who.actor, body.player_id, open_bets))
