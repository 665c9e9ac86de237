"""Writing one feed message to many WebSocket connections: the frame is built once, and written as it is to each
subscriber's socket, with no task, queue or ASGI call per subscriber.

The rule that makes this safe: a server-to-client frame is never masked (RFC 6455, section 5.1), so without a
per-connection extension (permessage-deflate, which the studio's servers turn off) the bytes of a text frame are the
same on every connection. The server's WebSocket protocol (`dealer_ui.ws_protocol`) offers each connection's socket
to the application through the ASGI scope's extensions; an ASGI server that does not (the test client, another
server) leaves the feed on its per-subscriber queue, with the same messages.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any, Protocol

EXTENSION = "studio.direct_socket"  # the ASGI scope extension that offers a connection's `DirectSocket` ("socket")
TEXT_FIN = 0x81  # FIN bit and opcode 1 (text): a whole message in one frame
SHORT, MEDIUM = 126, 1 << 16  # payload lengths under 126 fit the second byte; under 65,536, two more bytes


def text_frame(text: str) -> bytes:
    """A whole text message as one unmasked WebSocket frame (RFC 6455, section 5.2), as a server sends it."""
    payload = text.encode()
    size = len(payload)
    if size < SHORT:
        header = bytes((TEXT_FIN, size))
    elif size < MEDIUM:
        header = bytes((TEXT_FIN, 126)) + size.to_bytes(2, "big")
    else:
        header = bytes((TEXT_FIN, 127)) + size.to_bytes(8, "big")
    return header + payload


class DirectSocket(Protocol):
    """An open WebSocket connection whose frames the application may write itself (see the module)."""

    @property
    def transport(self) -> asyncio.WriteTransport:
        """Where whole frames are written; `get_write_buffer_size()` says how much the peer has not taken yet."""
        ...

    def close(self, code: int, reason: str) -> None:
        """Send a close frame now, after what is already written, and let the connection end; a peer that does not
        read is cut off after a grace period."""
        ...


def direct_socket(scope: Mapping[str, Any]) -> DirectSocket | None:
    """The connection's socket for direct frames, if the server offers one for this connection."""
    offer = (scope.get("extensions") or {}).get(EXTENSION) or {}
    socket: DirectSocket | None = offer.get("socket")
    return socket
