"""A request body over `MAX_BODY_BYTES` is refused with 413 before anything parses it or acts on it: by its
Content-Length when it gives one, else by reading it in first (at most the limit) and handing it on whole. Nothing
the studio takes is near the limit: the largest body it accepts, a bet or a chat message, is well under 1 KB, except
a game server's batch of bets (`POST /api/tables/{table}/bets/batch`: up to 500 bets of at most about 300 bytes
each), whose path has the wider `MAX_BATCH_BODY_BYTES`."""

from __future__ import annotations

import json
from collections.abc import Mapping

from starlette.types import ASGIApp, Message, Receive, Scope, Send

MAX_BODY_BYTES = 64 * 1024
MAX_BATCH_BODY_BYTES = 256 * 1024
WIDER = {"/bets/batch": MAX_BATCH_BODY_BYTES}  # the end of a path -> its limit


class BodyLimit:
    def __init__(self, app: ASGIApp, limit: int = MAX_BODY_BYTES, wider: Mapping[str, int] | None = None) -> None:
        self.app, self.limit = app, limit
        self.wider = WIDER if wider is None else wider

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path: str = scope.get("path", "")
        limit = next((wide for end, wide in self.wider.items() if path.endswith(end)), self.limit)
        length = dict(scope.get("headers") or []).get(b"content-length")
        if length is not None:
            if not length.isdigit() or int(length) > limit:
                await self._refuse(send, limit)
                return
            await self.app(scope, receive, send)
            return
        # No length given (a chunked body): read it in, up to the limit, before the app sees any of it.
        messages: list[Message] = []
        size = 0
        while True:
            message = await receive()
            messages.append(message)
            if message["type"] != "http.request":
                break  # the client went away: the app hears it
            size += len(message.get("body", b""))
            if size > limit:
                await self._refuse(send, limit)
                return
            if not message.get("more_body", False):
                break

        async def replay() -> Message:
            return messages.pop(0) if messages else await receive()

        await self.app(scope, replay, send)

    async def _refuse(self, send: Send, limit: int) -> None:
        body = json.dumps({"detail": f"the request body is over {limit} bytes"}).encode()
        headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
        await send({"type": "http.response.start", "status": 413, "headers": headers})
        await send({"type": "http.response.body", "body": body})
