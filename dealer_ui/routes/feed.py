"""The results feed for game servers: REST pages and a WebSocket stream, both resumable from a sequence number."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any, Protocol

from fastapi import APIRouter, Depends, HTTPException, Query, Request, WebSocket, WebSocketDisconnect

from dealer_ui.auth import require, websocket_principal
from dealer_ui.fanout import direct_socket
from dealer_ui.hub import FeedHub, Subscription, encode
from dealer_ui.routes.problems import BAD_AFTER, MAX_ID, after_of
from studio.domain.roles import Role
from studio.users import Principal

router = APIRouter(tags=["results feed"])
FEED_ROLES = (Role.GAME_SERVER, Role.SURVEILLANCE, Role.PIT_BOSS)
PAGE = 1000
MAX_CLIENT_MESSAGE = 1024  # the feed expects nothing from clients but pings


class FeedBackend(Protocol):
    """Where the feed comes from: the studio's own tables (`Studio`), or Redis and the log (`RedisFeedServer`)."""

    hub: FeedHub

    def has_table(self, table_id: str) -> bool: ...

    async def follow(self, table_id: str) -> None:
        """Make sure the table's messages reach `hub` (a feed server starts following a table on first demand)."""

    def published_seq(self, table_id: str) -> int:
        """The seq up to which the log may be served: everything after it reaches the hub's subscribers live."""
        ...

    def backlog(self, table_id: str, after: int, limit: int) -> tuple[list[dict[str, Any]], int]:
        """Messages after `after` from the log, up to `published_seq`; and the seq read up to."""
        ...


def feed_of(request: Request | WebSocket) -> FeedBackend:
    backend: FeedBackend = request.app.state.feed
    return backend


@router.get("/api/feed/{table}")
async def feed_page(
    table: str,
    request: Request,
    after: int = Query(0, ge=0, le=MAX_ID, description="the last seq you have; messages after it are returned"),
    limit: int = Query(PAGE, ge=1, le=PAGE),
    _: Principal = Depends(require(*FEED_ROLES)),
) -> dict[str, Any]:
    feed = feed_of(request)
    if not feed.has_table(table):
        raise HTTPException(404, f"no table {table!r}")
    await feed.follow(table)
    messages, read_up_to = await asyncio.to_thread(feed.backlog, table, after, limit)  # the log is read off the loop
    return {"table": table, "messages": messages, "next_after": read_up_to}


@router.websocket("/ws/feed/{table}")
async def feed_stream(websocket: WebSocket, table: str) -> None:
    """Messages after `?after=N` from the log, then live. Send nothing but short pings; anything else closes."""
    principal = websocket_principal(websocket)
    if principal is None or principal.role not in (*FEED_ROLES, Role.ADMIN):
        await websocket.close(code=4401 if principal is None else 4403, reason="an API key of a game server is needed")
        return
    feed = feed_of(websocket)
    if not feed.has_table(table):
        await websocket.close(code=4404, reason=f"no table {table!r}")
        return
    after = after_of(websocket.query_params)
    if after is None:
        await websocket.close(code=4400, reason=BAD_AFTER)
        return
    await websocket.accept()
    subscription = feed.hub.subscribe(table)  # first subscribe, then read the log: nothing falls in between
    listener = asyncio.create_task(_guard(websocket, subscription))
    try:
        await feed.follow(table)
        last = after
        while last < feed.published_seq(table) and subscription.dropped is None:
            messages, last = feed.backlog(table, last, PAGE)
            for message in messages:
                await websocket.send_text(encode(message))  # waits while the client is slow: the log keeps the rest
        socket = direct_socket(websocket.scope)
        if socket is not None:  # caught up: from now on the hub writes each message to the socket itself
            feed.hub.go_direct(subscription, socket, last)
        while True:
            live = await subscription.queue.get()  # on a direct socket, nothing comes but the end
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
        feed.hub.unsubscribe(subscription)
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
