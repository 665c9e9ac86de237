"""uvicorn's WebSocket protocol (the `websockets` library, sans I/O) with one addition: each connection's socket is
offered to the application for direct frames (`dealer_ui.fanout`), so that the results feed writes a message's
frame to every subscriber itself instead of going through a task and the ASGI chain per subscriber.

Everything else is uvicorn's: the handshake and the routes (authentication included) run as ASGI, and so do what
clients send and the closing of a connection the application ends normally. Give it to uvicorn as `ws=`
(`uvicorn.Config(app, ws=DirectWebSocketProtocol, ws_per_message_deflate=False)`); a connection that negotiated an
extension is not offered, as its frames are its own.
"""

from __future__ import annotations

import asyncio

from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
from websockets.http11 import Request
from websockets.protocol import State

from dealer_ui.fanout import EXTENSION

CLOSE_GRACE = 10.0  # seconds a peer has to read what is queued and the close frame before its connection is cut


class ConnectionSocket:
    """A `DirectSocket` for one connection of `DirectWebSocketProtocol`."""

    def __init__(self, connection: DirectWebSocketProtocol) -> None:
        self._connection = connection

    @property
    def transport(self) -> asyncio.WriteTransport:
        return self._connection.transport

    def close(self, code: int, reason: str) -> None:
        connection = self._connection
        transport = connection.transport
        if connection.close_sent or transport.is_closing() or connection.conn.state is not State.OPEN:
            return  # closing already (either side began it)
        connection.conn.send_close(code, reason)
        transport.write(b"".join(connection.conn.data_to_send()))
        connection.close_sent = True  # uvicorn sends nothing more on it: no keepalive ping, no second close
        # A subscriber dropped for being slow may never read what is queued before the close frame: once the grace
        # period is over, the connection is cut and its buffer freed (it resumes from the log when it reconnects).
        connection.loop.call_later(CLOSE_GRACE, transport.abort)


class DirectWebSocketProtocol(WebSocketsSansIOProtocol):
    def handle_connect(self, event: Request) -> None:
        super().handle_connect(event)  # builds the scope and starts the application's task, which has not run yet
        if self.handshake_initiated and not self.close_sent and not self.conn.extensions:
            extensions = self.scope.get("extensions") or {}  # None in uvicorn's first versions of this protocol
            extensions[EXTENSION] = {"socket": ConnectionSocket(self)}
            self.scope["extensions"] = extensions
