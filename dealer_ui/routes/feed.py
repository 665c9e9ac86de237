"""The results feed for game servers: REST pages and a WebSocket stream, both resumable from a sequence number."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from fastapi import APIRouter, Depends, Query, Request, WebSocket, WebSocketDisconnect

from dealer_ui.auth import require, websocket_principal
from dealer_ui.hub import Subscription, encode
from dealer_ui.routes.lookup import runtime_of, studio_of
from dealer_ui.runtime import Studio
from studio.feed import feed_message
from studio.roles import Role
from studio.users import Principal

router = APIRouter(tags=["results feed"])
FEED_ROLES = (Role.GAME_SERVER, Role.SURVEILLANCE, Role.PIT_BOSS)
PAGE = 1000
MAX_CLIENT_MESSAGE = 1024  # the feed expects nothing from clients but pings


def backlog(studio: Studio, table: str, after: int, limit: int) -> tuple[list[dict[str, Any]], int]:
    """Feed messages after `after`, from the log, up to what the table has published (nothing held for the pit
    boss); and the seq read up to, to continue from."""
    published = studio.tables[table].service.published_seq
    messages: list[dict[str, Any]] = []
    read_up_to = after
    for record in studio.store.read(table, after=after):
        if record.seq > published or len(messages) >= limit:
            break
        read_up_to = record.seq
        message = feed_message(record)
        if message is not None:
            studio.with_roads(record, message)
            messages.append(message)
    return messages, read_up_to


@router.get("/api/feed/{table}")
def feed_page(
    table: str,
    request: Request,
    after: int = Query(0, ge=0, description="the last seq you have; messages after it are returned"),
    limit: int = Query(PAGE, ge=1, le=PAGE),
    _: Principal = Depends(require(*FEED_ROLES)),
) -> dict[str, Any]:
    runtime_of(request, table)  # 404 for an unknown table
    messages, read_up_to = backlog(studio_of(request), table, after, limit)
    return {"table": table, "messages": messages, "next_after": read_up_to}


@router.websocket("/ws/feed/{table}")
async def feed_stream(websocket: WebSocket, table: str) -> None:
    """Messages after `?after=N` from the log, then live. Send nothing but short pings; anything else closes."""
    principal = websocket_principal(websocket)
    if principal is None or principal.role not in (*FEED_ROLES, Role.ADMIN):
        await websocket.close(code=4401 if principal is None else 4403, reason="an API key of a game server is needed")
        return
    studio: Studio = websocket.app.state.studio
    if table not in studio.tables:
        await websocket.close(code=4404, reason=f"no table {table!r}")
        return
    try:
        after = int(websocket.query_params.get("after", "0"))
    except ValueError:
        await websocket.close(code=4400, reason="after must be a whole number")
        return
    await websocket.accept()
    subscription = studio.hub.subscribe(table)  # first subscribe, then read the log: nothing falls in between
    listener = asyncio.create_task(_guard(websocket, subscription))
    try:
        last = after
        while last < studio.tables[table].service.published_seq and subscription.dropped is None:
            messages, last = backlog(studio, table, last, PAGE)
            for message in messages:
                await websocket.send_text(encode(message))
        while True:
            live = await subscription.queue.get()  # one wake-up per message: the fan-out's hot path
            if live is None:
                if subscription.code is not None:
                    await websocket.close(code=subscription.code, reason=subscription.dropped or "")
                return
            seq, text = live
            if seq > last:
                await websocket.send_text(text)
                last = seq
            if not subscription.queue.empty():
                await asyncio.sleep(0)  # a burst goes out message by message to everyone, not all of it to each in turn
    except (WebSocketDisconnect, RuntimeError):
        return
    finally:
        studio.hub.unsubscribe(subscription)
        listener.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await listener


async def _guard(websocket: WebSocket, subscription: Subscription) -> None:
    """Read what the client sends: pings are fine; anything oversized or not a ping ends this subscription only,
    closing its connection with 1008 and the reason."""
    try:
        while True:
            message = await websocket.receive()
            if message["type"] == "websocket.disconnect":
                break
            text = message.get("text")
            data = message.get("bytes") if text is None else text.encode()
            size = len(data or b"")
            if size > MAX_CLIENT_MESSAGE:
                subscription.end(1008, f"message too large ({size} bytes; at most {MAX_CLIENT_MESSAGE})")
                return
            if text is None:  # a binary frame is no ping either, and must not end the connection silently
                subscription.end(1008, "the feed accepts only pings, as text")
                return
            if text.strip() not in ("ping", '{"type":"ping"}', '{"type": "ping"}'):
                subscription.end(1008, "the feed accepts only pings")
                return
    except (WebSocketDisconnect, RuntimeError):
        pass
    subscription.end(None, "the client went away")
