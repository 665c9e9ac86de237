"""Security headers on every HTTP answer of the studio and of the feed servers.

Rules held here:
- Every answer (pages, API, static files, errors) carries `Content-Security-Policy`, `X-Content-Type-Options: nosniff`
  and `Referrer-Policy: no-referrer`, and `X-Frame-Options: DENY` for browsers that predate `frame-ancestors`.
- The staff pages run no inline script and no inline style (their JavaScript and CSS are files under /static, and
  scripts set styles through the style object, which the policy allows): `script-src 'self'`, `style-src 'self'`,
  `frame-ancestors 'none'` (no page can be framed: no clickjacking of a void button).
- /docs (Swagger UI, from the fastapi-swagger package) starts itself with one inline script and styles its widgets
  inline. Its policy allows exactly that script by its sha256, computed here from the page as served, and inline
  styles; it is still never framed. No other path gets that policy.
"""

from __future__ import annotations

import base64
import hashlib
import re

from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

DOCS_PATH = "/docs"

_COMMON = "default-src 'self'; img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; " \
    "form-action 'self'; frame-ancestors 'none'"  # fmt: skip
PAGE_POLICY = f"{_COMMON}; script-src 'self'; style-src 'self'"
HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
}
_INLINE_SCRIPT = re.compile(rb"<script>(.*?)</script>", re.DOTALL)


def docs_policy(page: bytes) -> str:
    """The policy of the /docs page: its own inline scripts by hash, inline styles (Swagger UI's widgets)."""
    hashes = " ".join(
        "'sha256-" + base64.b64encode(hashlib.sha256(script).digest()).decode() + "'"
        for script in _INLINE_SCRIPT.findall(page)
    )
    return f"{_COMMON}; script-src 'self' {hashes}; style-src 'self' 'unsafe-inline'"


class SecurityHeaders:
    """ASGI middleware: the headers above on every HTTP response (WebSockets have no such headers)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if scope.get("path") == DOCS_PATH:
            await self._docs(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                headers["Content-Security-Policy"] = PAGE_POLICY
                for name, value in HEADERS.items():
                    headers[name] = value
            await send(message)

        await self.app(scope, receive, send_with_headers)

    async def _docs(self, scope: Scope, receive: Receive, send: Send) -> None:
        """The page is small: held whole, so that its policy can name its script's hash."""
        start: Message | None = None
        body = bytearray()

        async def hold(message: Message) -> None:
            nonlocal start
            if message["type"] == "http.response.start":
                start = message
                return
            if message["type"] == "http.response.body":
                body.extend(message.get("body", b""))
                if message.get("more_body", False):
                    return
                assert start is not None
                headers = MutableHeaders(scope=start)
                headers["Content-Security-Policy"] = docs_policy(bytes(body))
                for name, value in HEADERS.items():
                    headers[name] = value
                await send(start)
                await send({"type": "http.response.body", "body": bytes(body)})
                return
            await send(message)

        await self.app(scope, receive, hold)
