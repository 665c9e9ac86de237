"""Game servers place bets on behalf of their players, fund their wallets, read balances and bet history, and set their
players' PINs and own maximum stakes (seed 004)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Any

from fastapi import APIRouter, Depends, HTTPException, Query, Request, WebSocket, WebSocketDisconnect
from pydantic import BaseModel, Field

from dealer_ui.auth import require, websocket_principal
from dealer_ui.routes.lookup import runtime_of, studio_of
from dealer_ui.routes.problems import BAD_AFTER, BAD_INPUT, MAX_ID, after_of
from dealer_ui.runtime import Studio, TableRuntime
from studio.domain.errors import BetRejected
from studio.domain.player_banker import required_bank
from studio.domain.procedure import Phase
from studio.domain.roles import Role
from studio.pins import BadPin
from studio.users import Principal
from studio.wallets import OwnMaximumRefused, OwnMaximumState, PlacedBet, WalletError, WrongPin

router = APIRouter(tags=["bets and wallets"])
game_server = require(Role.GAME_SERVER)
PLAYER_ID = Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9._:-]+$")


class Deposit(BaseModel):
    amount: int = Field(gt=0, le=10**12, description="minor units (cents)")
    reference: str | None = Field(default=None, max_length=128)


class NewBet(BaseModel):
    bet_id: str = Field(min_length=1, max_length=128, description="the game server's id: placing it again is a no-op")
    player_id: str = PLAYER_ID
    bet_type: str = Field(min_length=1, max_length=32, examples=["banker", "tie", "player_pair", "2 way"])
    stake: int = Field(gt=0, le=10**12, description="minor units (cents)")


class PlayerAction(BaseModel):
    player_id: str = PLAYER_ID


class Repeat(PlayerAction):
    previous_game_id: str = Field(min_length=1, max_length=64)


def _bets(placed: list[PlacedBet]) -> dict[str, Any]:
    """The bets as placed; `notice` says when a stake is not the one asked for ("maximum reached", "raised to the
    table minimum")."""
    return {"bets": [{"bet_id": b.bet_id, "player_id": b.player_id, "game_id": b.game_id, "bet_type": b.bet_type.value,
                      "stake": b.stake, "status": b.status, "notice": b.notice} for b in placed]}  # fmt: skip


def _refuse(error: BetRejected | WalletError) -> HTTPException:
    return HTTPException(409 if isinstance(error, BetRejected) else 404, str(error))


def _own(request: Request, who: Principal, player_id: str) -> None:
    """A game server acts only for its own players."""
    try:
        owner = studio_of(request).wallets.owner(player_id)
    except WalletError:
        return  # a new player: the deposit creates the wallet for this game server
    if owner != who.name:
        raise HTTPException(403, f"player {player_id!r} belongs to another game server")


@router.post("/api/wallets/{player_id}/deposit")
def deposit(player_id: str, body: Deposit, request: Request, who: Principal = Depends(game_server)) -> dict[str, Any]:
    _own(request, who, player_id)
    try:
        balance = studio_of(request).wallets.deposit(player_id, who.name, body.amount, body.reference)
    except WalletError as error:
        raise HTTPException(409, str(error)) from None
    return {"player_id": player_id, "balance": balance}


@router.get("/api/wallets/{player_id}")
def wallet(player_id: str, request: Request, who: Principal = Depends(game_server)) -> dict[str, Any]:
    _own(request, who, player_id)
    wallets = studio_of(request).wallets
    try:
        return {"player_id": player_id, "balance": wallets.balance(player_id), "entries": wallets.entries(player_id)}
    except WalletError as error:
        raise HTTPException(404, str(error)) from None


@router.get("/api/settlements")
def settlements(request: Request, after: int = Query(0, ge=0, le=MAX_ID), limit: int = Query(1000, ge=1, le=1000),
                who: Principal = Depends(game_server)) -> dict[str, Any]:  # fmt: skip
    """Each of this game server's players' settled bets, in settlement order: page with `after` = the last `id`."""
    outcomes = studio_of(request).wallets.outcomes(who.name, after, limit)
    return {"settlements": outcomes, "next_after": outcomes[-1]["id"] if outcomes else after}


@router.websocket("/ws/settlements")
async def settlement_stream(websocket: WebSocket) -> None:
    """This game server's players' outcomes, from `?after=ID` (the last id it has) on, then live as rounds settle."""
    principal = websocket_principal(websocket)
    if principal is None or principal.role is not Role.GAME_SERVER:
        await websocket.close(code=4401 if principal is None else 4403, reason="an API key of a game server is needed")
        return
    after = after_of(websocket.query_params)
    if after is None:
        await websocket.close(code=4400, reason=BAD_AFTER)
        return
    studio: Studio = websocket.app.state.studio
    await websocket.accept()
    try:
        while True:
            async with studio.settled:
                outcomes = studio.wallets.outcomes(principal.name, after)
                if not outcomes:
                    # Woken by every settlement; the timeout also notices a client that went away.
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(studio.settled.wait(), timeout=5.0)
                    continue
            for outcome in outcomes:
                await websocket.send_json({"type": "settlement", **outcome})
            after = outcomes[-1]["id"]
    except (WebSocketDisconnect, RuntimeError):
        return


@router.get("/api/players/{player_id}/bets")
def history(player_id: str, request: Request, who: Principal = Depends(game_server)) -> dict[str, Any]:
    _own(request, who, player_id)
    return {"player_id": player_id, "bets": studio_of(request).wallets.bet_rows(player_id)}


def _for_player(request: Request, table_id: str, who: Principal, player_id: str) -> TableRuntime:
    runtime = runtime_of(request, table_id)
    _own(request, who, player_id)
    return runtime


def _placed(action: Callable[[], list[PlacedBet]]) -> dict[str, Any]:
    """The bets an action placed or took back, or a refusal with its reason (409; 404 for an unknown player)."""
    try:
        return _bets(action())
    except (BetRejected, WalletError) as error:
        raise _refuse(error) from None


@router.post("/api/tables/{table_id}/bets")
async def place_bet(
    table_id: str, body: NewBet, request: Request, who: Principal = Depends(game_server)
) -> dict[str, Any]:
    runtime = _for_player(request, table_id, who, body.player_id)
    state = runtime.service.state
    return _placed(
        lambda: runtime.betting.place(state, who.name, body.player_id, body.bet_id, body.bet_type, body.stake)
    )


@router.post("/api/tables/{table_id}/bets/undo")
async def undo_bet(
    table_id: str, body: PlayerAction, request: Request, who: Principal = Depends(game_server)
) -> dict[str, Any]:
    runtime = _for_player(request, table_id, who, body.player_id)
    return _placed(lambda: [runtime.betting.undo_last(runtime.service.state, body.player_id)])


@router.post("/api/tables/{table_id}/bets/double")
async def double_bets(
    table_id: str, body: PlayerAction, request: Request, who: Principal = Depends(game_server)
) -> dict[str, Any]:
    runtime = _for_player(request, table_id, who, body.player_id)
    return _placed(lambda: runtime.betting.double(runtime.service.state, who.name, body.player_id))


@router.post("/api/tables/{table_id}/bets/repeat")
async def repeat_bets(
    table_id: str, body: Repeat, request: Request, who: Principal = Depends(game_server)
) -> dict[str, Any]:
    runtime = _for_player(request, table_id, who, body.player_id)
    state = runtime.service.state
    return _placed(lambda: runtime.betting.repeat(state, who.name, body.player_id, body.previous_game_id))


@router.get("/api/tables/{table_id}/bets/totals")
def totals(
    table_id: str, request: Request, _: Principal = Depends(require(Role.GAME_SERVER, Role.DEALER, Role.PIT_BOSS))
) -> dict[str, Any]:
    runtime = runtime_of(request, table_id)
    current = runtime.service.state.round
    if current is None:
        return {"game_id": None, "totals": {}}
    return {"game_id": current.game_id, "totals": studio_of(request).wallets.totals(current.game_id)}


class TakeBank(PlayerAction):
    auto_approve: bool = False


def _bank_table(request: Request, table_id: str) -> TableRuntime:
    runtime = runtime_of(request, table_id)
    if not runtime.config.player_banker:
        raise HTTPException(409, f"table {table_id} is banked by the house; no player can hold the bank")
    return runtime


@router.get("/api/tables/{table_id}/banker")
def banker(table_id: str, request: Request, who: Principal = Depends(game_server)) -> dict[str, Any]:
    runtime = _bank_table(request, table_id)
    return {
        "banker": studio_of(request).wallets.banker(table_id),
        "required_balance": required_bank(runtime.config.limits),
    }


@router.post("/api/tables/{table_id}/banker")
async def take_bank(table_id: str, body: TakeBank, request: Request,
                    who: Principal = Depends(game_server)) -> dict[str, Any]:  # fmt: skip
    """A player takes the bank, between rounds, with a balance of at least 9 × the table maximum plus 1.5%."""
    runtime = _bank_table(request, table_id)
    _own(request, who, body.player_id)
    if runtime.service.state.phase in (Phase.BETTING_OPEN, Phase.DEALING):
        raise HTTPException(409, "the bank changes hands only between rounds")
    required = required_bank(runtime.config.limits)
    try:
        studio_of(request).wallets.take_bank(table_id, body.player_id, who.name, body.auto_approve, required)
    except WalletError as error:
        raise HTTPException(409, str(error)) from None
    return {"banker": body.player_id, "auto_approve": body.auto_approve, "required_balance": required}


@router.post("/api/tables/{table_id}/banker/leave")
async def leave_bank(table_id: str, body: PlayerAction, request: Request,
                     who: Principal = Depends(game_server)) -> dict[str, str]:  # fmt: skip
    runtime = _bank_table(request, table_id)
    _own(request, who, body.player_id)
    if runtime.service.state.phase in (Phase.BETTING_OPEN, Phase.DEALING):
        raise HTTPException(409, "the bank changes hands only between rounds")
    try:
        studio_of(request).wallets.leave_bank(table_id, body.player_id)
    except WalletError as error:
        raise HTTPException(409, str(error)) from None
    return {"status": f"{body.player_id} left the bank"}


@router.post("/api/tables/{table_id}/banker/approve")
async def approve_round(table_id: str, body: PlayerAction, request: Request,
                        who: Principal = Depends(game_server)) -> dict[str, str]:  # fmt: skip
    runtime = _bank_table(request, table_id)
    _own(request, who, body.player_id)
    try:
        game_id = runtime.betting.approve_round(runtime.service.state, body.player_id)
    except BetRejected as error:
        raise HTTPException(409, str(error)) from None
    return {"approved": game_id}


# A player's PIN and own maximum stake (seed 004). The PIN is sent as a string of 4 to 12 digits, kept only as its
# scrypt hash (studio/pins.py), and never quoted back, in an answer or in a log line.


class NewPin(BaseModel):
    pin: str = Field(description="4 to 12 digits, as a string")
    current_pin: str | None = Field(default=None, description="needed to replace a PIN the player has already")


class OwnMaximumChange(BaseModel):
    max_stake: int | None = Field(gt=0, le=10**12, description="minor units; null removes the player's own maximum")
    pin: str = Field(description="the player's PIN, confirming the change")


def _own_maximum(player_id: str, state: OwnMaximumState) -> dict[str, Any]:
    return {
        "player_id": player_id,
        "max_stake": state.max_stake,
        "changed_at": None if state.changed_at is None else state.changed_at.isoformat(),
        "next_change": None if state.next_change is None else state.next_change.isoformat(),
    }


def _player_refusal(error: WalletError | BadPin) -> HTTPException:
    if isinstance(error, BadPin):
        return HTTPException(422, str(error))
    if isinstance(error, WrongPin):
        return HTTPException(403, str(error))
    return HTTPException(409 if isinstance(error, OwnMaximumRefused) else 404, str(error))


@router.put("/api/players/{player_id}/pin", responses=BAD_INPUT)
def set_pin(player_id: str, body: NewPin, request: Request, who: Principal = Depends(game_server)) -> dict[str, Any]:
    """Set the PIN a player confirms a change of their own maximum with; replacing one needs the current PIN."""
    _own(request, who, player_id)
    try:
        studio_of(request).wallets.set_pin(player_id, who.name, body.pin, body.current_pin)
    except (WalletError, BadPin) as error:
        raise _player_refusal(error) from None
    return {"player_id": player_id, "pin_set": True}


@router.delete("/api/players/{player_id}/pin")
def clear_pin(player_id: str, request: Request, _: Principal = Depends(require(Role.ADMIN))) -> dict[str, Any]:
    """A studio admin clears a player's forgotten PIN, once the operator has checked who asks; the game server then
    sets a new one."""
    try:
        studio_of(request).wallets.clear_pin(player_id)
    except WalletError as error:
        raise HTTPException(404, str(error)) from None
    return {"player_id": player_id, "pin_set": False}


@router.get("/api/players/{player_id}/own-maximum")
def own_maximum(player_id: str, request: Request, who: Principal = Depends(game_server)) -> dict[str, Any]:
    """The player's own maximum stake (null: none), when it last changed, and when it may change next (null: now)."""
    _own(request, who, player_id)
    wallets = studio_of(request).wallets
    try:
        wallets.owner(player_id)
    except WalletError as error:
        raise HTTPException(404, str(error)) from None
    return {**_own_maximum(player_id, wallets.own_maximum(player_id)), "pin_set": wallets.has_pin(player_id)}


@router.put("/api/players/{player_id}/own-maximum", responses=BAD_INPUT)
def set_own_maximum(player_id: str, body: OwnMaximumChange, request: Request,
                    who: Principal = Depends(game_server)) -> dict[str, Any]:  # fmt: skip
    """Change the player's own maximum stake on every table, confirmed with their PIN, at most once a week (the week
    starts on Friday 00:00 at GMT-5, 05:00 UTC): 403 for a wrong PIN, 409 for a second change in a week or no PIN."""
    _own(request, who, player_id)
    try:
        state = studio_of(request).wallets.set_own_maximum(player_id, who.name, body.max_stake, body.pin)
    except (WalletError, BadPin) as error:
        raise _player_refusal(error) from None
    return _own_maximum(player_id, state)
