"""The dealer's and the pit boss's actions on a table, the table's state, and its live console feed."""

from __future__ import annotations

import asyncio
import contextlib
from datetime import timedelta
from typing import Any

from fastapi import APIRouter, Depends, HTTPException, Request, WebSocket, WebSocketDisconnect, WebSocketException
from pydantic import BaseModel, Field

from dealer_ui.auth import require, websocket_principal
from dealer_ui.routes.lookup import runtime_of, studio_of
from dealer_ui.routes.problems import BAD_INPUT
from dealer_ui.runtime import Studio, TableRuntime
from dealer_ui.views import console_view
from studio.domain import commands as c
from studio.domain.cards import Card
from studio.domain.console import card_due
from studio.domain.errors import InvalidCardCode, ProcedureError
from studio.domain.refusals import sentence
from studio.domain.roles import Role
from studio.users import Principal

router = APIRouter(tags=["tables"])
STAFF = (Role.DEALER, Role.PIT_BOSS, Role.SURVEILLANCE)
dealer = require(Role.DEALER, Role.PIT_BOSS)  # a pit boss may stand in for the dealer; never the reverse
pit_boss = require(Role.PIT_BOSS)
SESSION_RECHECK = timedelta(seconds=30)  # an open console re-checks its session this often (studio clock)


def refusal(error: ProcedureError) -> dict[str, Any]:
    """A 409's detail: the machine fields for API clients (the phase, the command's name, the reason, the commands the
    phase takes) and `message`, the refusal as a sentence a person would say (`studio.domain.refusals`)."""
    return {"phase": error.phase, "command": error.command, "reason": error.reason, "expected": list(error.expected),
            "message": sentence(error)}  # fmt: skip


def view(request: Request, runtime: TableRuntime) -> dict[str, Any]:
    return console_view(studio_of(request), runtime)


async def apply(request: Request, table_id: str, command: c.Command) -> dict[str, Any]:
    runtime = runtime_of(request, table_id)
    try:
        logged = await studio_of(request).submit(table_id, command)
    except ProcedureError as error:
        raise HTTPException(409, refusal(error)) from None
    return {"logged": [{"seq": e.record.seq, "kind": e.record.kind} for e in logged], "table": view(request, runtime)}


@router.get("/api/tables")
def tables(request: Request, _: Principal = Depends(require(*STAFF))) -> list[dict[str, Any]]:
    return [view(request, runtime) for runtime in studio_of(request).tables.values()]


@router.get("/api/tables/{table_id}")
def table(table_id: str, request: Request, _: Principal = Depends(require(*STAFF))) -> dict[str, Any]:
    return view(request, runtime_of(request, table_id))


@router.get("/api/tables/{table_id}/roads")
def roads(table_id: str, request: Request, _: Principal = Depends(require(*STAFF, Role.GAME_SERVER))) -> dict[str, Any]:
    """The scoreboards of the current shoe (bead plate, big road, big eye boy, small road, cockroach pig, ask road)."""
    runtime = runtime_of(request, table_id)
    return {"table": table_id, "shoe": runtime.service.state.shoe, **studio_of(request).roads(table_id)}


@router.get("/api/tables/{table_id}/history")
def history(
    table_id: str, request: Request, limit: int = 20, _: Principal = Depends(require(*STAFF, Role.GAME_SERVER))
) -> dict[str, Any]:
    """The last rounds of the table: cards, result and game number, newest first."""
    runtime = runtime_of(request, table_id)
    return {"table": table_id, "rounds": list(reversed(runtime.recent))[: max(1, min(limit, 72))]}


class CutCard(BaseModel):
    cards_in_front: int | None = Field(default=None, ge=0, le=10_000)


class DeclaredError(BaseModel):
    kind: str = Field(min_length=1, max_length=64, examples=["card exposed", "dropped", "wrong hand", "misdeal"])
    detail: str = Field(default="", max_length=500)


class KeyedCard(BaseModel):
    card: str = Field(min_length=2, max_length=4, examples=["QH", "10S"])


class Correction(BaseModel):
    position: int = Field(ge=0, le=6, description="1-6: a card of this round in dealing order; 0: the read waiting")
    card: str = Field(min_length=2, max_length=4)
    reason: str = Field(min_length=1, max_length=500)


class Reason(BaseModel):
    reason: str = Field(default="", max_length=500)


class RequiredReason(BaseModel):
    reason: str = Field(min_length=1, max_length=500)


class Inspection(BaseModel):
    dealer: str | None = Field(
        default=None, min_length=1, max_length=64, description="who inspected: a name or dealer:name; default: on duty"
    )


class DeckReplacement(BaseModel):
    deck: str = Field(min_length=1, max_length=32, description="the deck replaced, as the studio labels it")
    reason: str = Field(min_length=1, max_length=500, description="its defect")


def card_of(code: str) -> Card:
    try:
        return Card.parse(code)
    except InvalidCardCode as error:
        raise HTTPException(422, str(error)) from None


@router.post("/api/tables/{table_id}/shuffle")
async def confirm_shuffle(table_id: str, request: Request, who: Principal = Depends(dealer)) -> dict[str, Any]:
    return await apply(request, table_id, c.ConfirmShuffle(who.actor))


@router.post("/api/tables/{table_id}/cut")
async def place_cut_card(
    table_id: str, body: CutCard, request: Request, who: Principal = Depends(dealer)
) -> dict[str, Any]:
    return await apply(request, table_id, c.PlaceCutCard(who.actor, body.cards_in_front))


@router.post("/api/tables/{table_id}/open-betting")
async def open_betting(table_id: str, request: Request, who: Principal = Depends(dealer)) -> dict[str, Any]:
    return await apply(request, table_id, c.OpenBetting(who.actor))


@router.post("/api/tables/{table_id}/close-betting")
async def close_betting(table_id: str, request: Request, who: Principal = Depends(dealer)) -> dict[str, Any]:
    return await apply(request, table_id, c.CloseBetting(who.actor))


@router.post("/api/tables/{table_id}/dealer-change")
async def dealer_change(table_id: str, request: Request, who: Principal = Depends(dealer)) -> dict[str, Any]:
    """The signed-in dealer takes over the table (1 card is burned before the next round). Players are told the
    dealer's display name (`studio users display-name`), never the account name."""
    shown = await asyncio.to_thread(studio_of(request).users.display_name, who.name)
    return await apply(request, table_id, c.ChangeDealer(who.actor, str(who.actor), shown))


@router.post("/api/tables/{table_id}/cut-card-out")
async def cut_card_out(table_id: str, request: Request, who: Principal = Depends(dealer)) -> dict[str, Any]:
    return await apply(request, table_id, c.ReportCutCard(who.actor, "dealer"))


@router.post("/api/tables/{table_id}/declare-error")
async def declare_error(
    table_id: str, body: DeclaredError, request: Request, who: Principal = Depends(dealer)
) -> dict[str, Any]:
    return await apply(request, table_id, c.DeclareError(who.actor, body.kind, body.detail))


@router.post("/api/tables/{table_id}/card", responses=BAD_INPUT)
async def key_in_card(
    table_id: str, body: KeyedCard, request: Request, who: Principal = Depends(dealer)
) -> dict[str, Any]:
    """A card keyed in by hand (a reader is down): it enters the table like any read."""
    return await apply(request, table_id, c.DrawCard(who.actor, c.CardRead(card_of(body.card), "keyed", None, 1.0)))


@router.post("/api/tables/{table_id}/simulator/draw")
async def draw_from_simulated_shoe(table_id: str, request: Request, _: Principal = Depends(dealer)) -> dict[str, str]:
    """The simulated shoe slides out a card, only when one is due: a card when none is due would suspend the table
    (a real shoe's card is never refused; this one is simply not drawn)."""
    runtime = runtime_of(request, table_id)
    if runtime.simulator is not None and not card_due(runtime.service.state):
        phase = runtime.service.state.phase.value.replace("_", " ")
        raise HTTPException(409, f"no card is due now (the table is {phase}): the simulated shoe keeps its cards")
    if not studio_of(request).draw_simulated(table_id):
        raise HTTPException(409, "this table reads a real shoe: draw the card from it")
    return {"status": "card drawn from the simulated shoe"}


@router.post("/api/tables/{table_id}/correct", responses=BAD_INPUT)
async def correct_card(
    table_id: str, body: Correction, request: Request, who: Principal = Depends(pit_boss)
) -> dict[str, Any]:
    return await apply(request, table_id, c.CorrectCard(who.actor, body.position, card_of(body.card), body.reason))


@router.post("/api/tables/{table_id}/continue")
async def continue_play(
    table_id: str, body: Reason, request: Request, who: Principal = Depends(pit_boss)
) -> dict[str, Any]:
    return await apply(request, table_id, c.ContinuePlay(who.actor, body.reason))


@router.post("/api/tables/{table_id}/void")
async def void_round(
    table_id: str, body: RequiredReason, request: Request, who: Principal = Depends(pit_boss)
) -> dict[str, Any]:
    return await apply(request, table_id, c.VoidRound(who.actor, body.reason))


@router.post("/api/tables/{table_id}/close")
async def close_table(
    table_id: str, body: RequiredReason, request: Request, who: Principal = Depends(pit_boss)
) -> dict[str, Any]:
    """No round opens until a pit boss opens the table again (allowed between rounds or shoes)."""
    return await apply(request, table_id, c.CloseTable(who.actor, body.reason))


@router.post("/api/tables/{table_id}/open")
async def open_table(table_id: str, request: Request, who: Principal = Depends(pit_boss)) -> dict[str, Any]:
    return await apply(request, table_id, c.OpenTable(who.actor))


@router.post("/api/tables/{table_id}/order-shuffle")
async def order_shuffle(
    table_id: str, body: RequiredReason, request: Request, who: Principal = Depends(pit_boss)
) -> dict[str, Any]:
    """The shoe ends after the completed round and the dealer reshuffles (seed 000 §3.2.3; between rounds only)."""
    return await apply(request, table_id, c.OrderShuffle(who.actor, body.reason))


@router.post("/api/tables/{table_id}/inspect-decks")
async def inspect_decks(
    table_id: str, body: Inspection, request: Request, who: Principal = Depends(pit_boss)
) -> dict[str, Any]:
    """The pit boss approves the deck inspection that is due (the ended shoe's, then the next shoe's), made by the
    dealer named (default: the dealer on duty)."""
    return await apply(request, table_id, c.InspectDecks(who.actor, body.dealer))


@router.post("/api/tables/{table_id}/replace-deck")
async def replace_deck(
    table_id: str, body: DeckReplacement, request: Request, who: Principal = Depends(pit_boss)
) -> dict[str, Any]:
    """During an inspection, the pit boss replaces a damaged or incomplete deck, noting its defect."""
    return await apply(request, table_id, c.ReplaceDeck(who.actor, body.deck, body.reason))


@router.websocket("/ws/tables/{table_id}")
async def console_feed(websocket: WebSocket, table_id: str) -> None:
    """The table's whole state, sent at once and again after every change (and every second for the timer)."""
    principal = websocket_principal(websocket)
    if principal is None or principal.role not in (*STAFF, Role.ADMIN):
        await websocket.close(code=4401 if principal is None else 4403, reason="sign in as studio staff")
        return
    studio: Studio = websocket.app.state.studio
    runtime = studio.tables.get(table_id)
    if runtime is None:
        await websocket.close(code=4404, reason=f"no table {table_id!r}")
        return
    await websocket.accept()
    checked = studio.clock.now()
    try:
        while True:
            if studio.clock.now() - checked >= SESSION_RECHECK:  # a session that ends (idle, length) ends the stream
                checked = studio.clock.now()
                if not await _session_lasts(websocket):
                    await websocket.close(code=4401, reason="your session has ended: sign in again")
                    return
            shown = runtime.version
            await websocket.send_json(console_view(studio, runtime))
            async with runtime.changed:
                if runtime.version == shown:  # a change made while sending is shown now, not a second later
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(runtime.changed.wait(), timeout=1.0)
    except (WebSocketDisconnect, RuntimeError):
        return


async def _session_lasts(websocket: WebSocket) -> bool:
    """Whether the session that opened this stream is still valid; an accounts outage is no sign-out (True)."""
    try:
        return await asyncio.to_thread(websocket_principal, websocket, False) is not None
    except WebSocketException:
        return True
