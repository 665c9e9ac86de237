"""Table chat: game servers relay their players' messages; pit bosses moderate; the dealer console shows the chat."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, HTTPException, Query, Request
from pydantic import BaseModel, Field

from dealer_ui.auth import require
from dealer_ui.routes.lookup import runtime_of, studio_of
from dealer_ui.routes.problems import BAD_INPUT, MAX_ID
from dealer_ui.runtime import Studio
from studio.domain.chat import ChatRejected
from studio.domain.roles import Role
from studio.users import Principal

router = APIRouter(tags=["chat"])


class Said(BaseModel):
    player_id: str = Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9._:-]+$")
    nickname: str = Field(min_length=1, max_length=32)
    text: str = Field(min_length=1, max_length=2000)


class Mute(BaseModel):
    player_id: str = Field(min_length=1, max_length=64)
    reason: str = Field(min_length=1, max_length=500)


def _studio(request: Request, table_id: str) -> Studio:
    runtime_of(request, table_id)  # 404 for an unknown table
    return studio_of(request)


@router.post("/api/tables/{table_id}/chat", status_code=201, responses=BAD_INPUT)
async def say(
    table_id: str, body: Said, request: Request, who: Principal = Depends(require(Role.GAME_SERVER))
) -> dict[str, Any]:
    studio = _studio(request, table_id)
    try:
        row = studio.chat.say(table_id, who.name, body.player_id, body.nickname, body.text)
    except ChatRejected as error:
        raise HTTPException(403 if "muted" in str(error) else 422, f"message refused: {error}") from None
    await studio.notify(table_id)
    return {"id": row["id"], "shown": row["shown"], "at": row["at"]}


@router.get("/api/tables/{table_id}/chat")
def messages(
    table_id: str,
    request: Request,
    after: int = Query(0, ge=0, le=MAX_ID),
    limit: int = Query(50, ge=1, le=500),
    who: Principal = Depends(require(Role.GAME_SERVER, Role.DEALER, Role.PIT_BOSS, Role.SURVEILLANCE)),
) -> dict[str, Any]:
    moderator = who.role in (Role.PIT_BOSS, Role.SURVEILLANCE, Role.ADMIN)
    return {"messages": _studio(request, table_id).chat.messages(table_id, after, limit, moderator)}


@router.post("/api/tables/{table_id}/chat/mute")
def mute(
    table_id: str, body: Mute, request: Request, who: Principal = Depends(require(Role.PIT_BOSS))
) -> dict[str, str]:
    _studio(request, table_id).chat.mute(body.player_id, str(who.actor), body.reason)
    return {"status": f"{body.player_id} muted"}


@router.post("/api/tables/{table_id}/chat/unmute")
def unmute(
    table_id: str, body: Mute, request: Request, _: Principal = Depends(require(Role.PIT_BOSS))
) -> dict[str, str]:
    _studio(request, table_id).chat.unmute(body.player_id)
    return {"status": f"{body.player_id} may chat again"}
