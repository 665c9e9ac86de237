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
from studio.betting import BetRequest
from studio.domain.errors import BetRejected
from studio.domain.player_banker import required_bank
from studio.domain.procedure import Phase
from studio.domain.roles import Role
from studio.pins import BadPin
from studio.users import Principal
from studio.wallets import OtherGameServer, OwnMaximumRefused, OwnMaximumState, PlacedBet, WalletError, WrongPin

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


MAX_BATCH = 500  # player requests in one batch call (a 501st is a 422 that places nothing)


class BetBatch(BaseModel):
    requests: list[NewBet] = Field(max_length=MAX_BATCH, description="each what `POST .../bets` takes, in order; at "
                                   f"most {MAX_BATCH}")  # fmt: skip


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
        return {"player_id": player_id, "balance": wallets.balance(player_id), "points": wallets.points(player_id),
                "entries": wallets.entries(player_id)}  # fmt: skip
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
    """The player's bets, oldest first, and `last_round`: the last round they played (as a player or as the banker)
    that is settled, with its result from the table's log and what it did to the player, for a game server to show
    after a reconnect (seed 001: "voir le résultat du dernier tour"); null if none. `events`: what happened to the
    player or their bank outside a bet (bank taken, left, timed out, released; disconnects)."""
    _own(request, who, player_id)
    studio = studio_of(request)
    return {"player_id": player_id, "bets": studio.wallets.bet_rows(player_id),
            "last_round": _last_round(studio, player_id), "events": studio.wallets.events(player_id)}  # fmt: skip


def _last_round(studio: Studio, player_id: str) -> dict[str, Any] | None:
    last = studio.wallets.last_round(player_id)
    if last is None:
        return None
    game_id = last["game_id"]
    tables = [last["table_id"]] if last["table_id"] in studio.tables else list(studio.tables)
    summary = next((found for t in tables if (found := studio.round_index(t).find(game_id)) is not None), None)
    result = None
    if summary is not None:
        last["table_id"] = summary["table"]
        keys = ("round", "player", "banker", "player_total", "banker_total", "winner", "natural", "player_pair",
                "banker_pair", "void_reason", "closed_at")  # fmt: skip
        result = {key: summary.get(key) for key in keys}
    return {**last, "result": result}


def _for_player(request: Request, table_id: str, who: Principal, player_id: str) -> TableRuntime:
    runtime = runtime_of(request, table_id)
    _own(request, who, player_id)
    return runtime


async def _placed(runtime: TableRuntime, action: Callable[[], list[PlacedBet]]) -> dict[str, Any]:
    """What an undo, double or repeat placed or took back, run on the table's writer after the bets that arrived
    before it, or a refusal with its reason (409; 404 for an unknown player)."""
    try:
        return _bets(await runtime.bets.run(action))
    except (BetRejected, WalletError) as error:
        raise _refuse(error) from None


@router.post("/api/tables/{table_id}/bets")
async def place_bet(
    table_id: str, body: NewBet, request: Request, who: Principal = Depends(game_server)
) -> dict[str, Any]:
    """Place a bet (or a 2 Way / 3 Way shortcut, all or none). It waits for the table's next group commit: the answer
    comes once the bet is durable, or with the reason it was refused (409: a rule; 404: an unknown player)."""
    runtime = runtime_of(request, table_id)
    owner = studio_of(request).wallets.known_owner(body.player_id)  # else checked with the bet, in its transaction
    if owner is not None and owner != who.name:
        raise HTTPException(403, f"player {body.player_id!r} belongs to another game server")
    try:
        placed = await runtime.bets.place(who.name, body.player_id, body.bet_id, body.bet_type, body.stake)
    except OtherGameServer as error:
        raise HTTPException(403, str(error)) from None
    except (BetRejected, WalletError) as error:
        raise _refuse(error) from None
    return _bets(placed)


@router.post("/api/tables/{table_id}/bets/batch")
async def place_bets(
    table_id: str, body: BetBatch, request: Request, who: Principal = Depends(game_server)
) -> dict[str, Any]:
    """Place many players' requests in one call (a game server's batch at a peak), each as `POST .../bets` would,
    all in the table's next group commit (one transaction). `results` lists, in the order asked, each request's
    answer: `{"status": 200, "bets": [...]}` once durable, or its refusal `{"status": 409|404|403, "detail": ...}`
    with the status and message the single route gives; a refused request changes nothing and the others go on. A
    player of another game server is refused (403) alone. The answer is sent once the group is committed; if the
    database fails it, the call is a 503 and none was placed."""
    runtime = runtime_of(request, table_id)
    wallets = studio_of(request).wallets
    results: list[dict[str, Any] | None] = []
    asks: list[BetRequest] = []
    for ask in body.requests:
        owner = wallets.known_owner(ask.player_id)  # else checked with the bet, in its transaction
        if owner is not None and owner != who.name:
            results.append({"status": 403, "detail": f"player {ask.player_id!r} belongs to another game server"})
            continue
        results.append(None)
        asks.append(BetRequest(who.name, ask.player_id, ask.bet_id, ask.bet_type, ask.stake))
    answers = iter(await runtime.bets.place_each(asks))
    return {"results": [_answer(next(answers)) if result is None else result for result in results]}


def _answer(answer: list[PlacedBet] | BaseException) -> dict[str, Any]:
    """One request's part of a batch's answer: what the single route would answer, with its status as a field."""
    if isinstance(answer, list):
        return {"status": 200, **_bets(answer)}
    if isinstance(answer, OtherGameServer):
        return {"status": 403, "detail": str(answer)}
    if isinstance(answer, BetRejected | WalletError):
        refusal = _refuse(answer)
        return {"status": refusal.status_code, "detail": refusal.detail}
    raise answer  # the database failed the group: nothing of it was placed (503)


@router.post("/api/tables/{table_id}/bets/undo")
async def undo_bet(
    table_id: str, body: PlayerAction, request: Request, who: Principal = Depends(game_server)
) -> dict[str, Any]:
    runtime = _for_player(request, table_id, who, body.player_id)
    return await _placed(runtime, lambda: [runtime.betting.undo_last(runtime.service.state, body.player_id)])


@router.post("/api/tables/{table_id}/bets/double")
async def double_bets(
    table_id: str, body: PlayerAction, request: Request, who: Principal = Depends(game_server)
) -> dict[str, Any]:
    runtime = _for_player(request, table_id, who, body.player_id)
    return await _placed(runtime, lambda: runtime.betting.double(runtime.service.state, who.name, body.player_id))


@router.post("/api/tables/{table_id}/bets/repeat")
async def repeat_bets(
    table_id: str, body: Repeat, request: Request, who: Principal = Depends(game_server)
) -> dict[str, Any]:
    runtime = _for_player(request, table_id, who, body.player_id)
    return await _placed(
        runtime, lambda: runtime.betting.repeat(runtime.service.state, who.name, body.player_id, body.previous_game_id)
    )


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
    """Who holds the bank (null: the house banks the table), what taking it needs, and the round's approval: the
    deadline by which its banker must approve it, and who approved it."""
    runtime = _bank_table(request, table_id)
    wallets = studio_of(request).wallets
    state = runtime.service.state
    deadline = runtime.betting.approval_deadline(state)
    current = None
    if state.round is not None:
        current = {"game_id": state.round.game_id, "approved_by": wallets.approver(state.round.game_id),
                   "approval_deadline": None if deadline is None else deadline.isoformat()}  # fmt: skip
    return {
        "banker": wallets.banker(table_id),
        "required_balance": required_bank(runtime.config.limits),
        "required_points": runtime.config.bank_min_points,
        "approval_seconds": runtime.config.approval_seconds,
        "round": current,
    }


@router.post("/api/tables/{table_id}/banker")
async def take_bank(table_id: str, body: TakeBank, request: Request,
                    who: Principal = Depends(game_server)) -> dict[str, Any]:  # fmt: skip
    """A player takes the bank, between rounds, with a balance of at least 9 × the table maximum plus 1.5% and the
    table's minimum of credit points (`bank_min_points`, 50)."""
    runtime = _bank_table(request, table_id)
    _own(request, who, body.player_id)
    try:
        required = runtime.betting.take_bank(runtime.service.state, who.name, body.player_id, body.auto_approve)
    except WalletError as error:
        raise HTTPException(409, str(error)) from None
    return {"banker": body.player_id, "auto_approve": body.auto_approve, "required_balance": required,
            "required_points": runtime.config.bank_min_points}  # fmt: skip


@router.post("/api/tables/{table_id}/banker/leave")
async def leave_bank(table_id: str, body: PlayerAction, request: Request,
                     who: Principal = Depends(game_server)) -> dict[str, str]:  # fmt: skip
    runtime = _bank_table(request, table_id)
    _own(request, who, body.player_id)
    if runtime.service.state.phase in (Phase.BETTING_OPEN, Phase.DEALING):
        raise HTTPException(409, "the bank changes hands only between rounds")
    try:
        studio_of(request).wallets.leave_bank(table_id, body.player_id, who.name)
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


@router.post("/api/players/{player_id}/disconnect")
async def disconnect(player_id: str, request: Request, who: Principal = Depends(game_server)) -> dict[str, Any]:
    """The game server reports that the player disconnected (seed 001). At every table: their bets on a round still
    taking bets are refunded to their balance; after "no more bets" the round plays out. A banker who approved the round
    under way keeps the bank until that round is settled, then it goes back to the house; a banker who had not approved
    it loses the bank now. Each table's part is done on its writer, one after the other with its commands."""
    _own(request, who, player_id)
    studio = studio_of(request)
    try:
        studio.wallets.owner(player_id)
    except WalletError as error:
        raise HTTPException(404, str(error)) from None
    loop = asyncio.get_running_loop()
    tables = []
    for runtime in studio.tables.values():

        def at_table(runtime: TableRuntime = runtime) -> dict[str, Any] | None:
            return runtime.betting.disconnect(runtime.service.state, player_id, who.name)

        done = await loop.run_in_executor(runtime.writer, at_table)
        if done is not None:
            tables.append({**done, "refunded": _bets(done["refunded"])["bets"],
                           "plays_out": _bets(done["plays_out"])["bets"]})  # fmt: skip
            runtime.version += 1
            await studio.notify(runtime.table_id)
    if not tables:
        studio.wallets.record_disconnect(player_id, None, None, "disconnected: no bet or bank in play", who.name)
    return {"player_id": player_id, "balance": studio.wallets.balance(player_id), "tables": tables}


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
