"""The studio's public API as a game server calls it: JSON over HTTP with the `X-API-Key` header.

Standard library only (urllib, run in a worker thread so the game server's event loop never waits on the network).
A refusal (4xx) raises `StudioRefused` with the studio's own status and reason, which the player page shows as is.
"""

from __future__ import annotations

import asyncio
import json
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

TIMEOUT = 10.0  # seconds for one call to the studio


class StudioRefused(Exception):
    """The studio answered with an error: `status` (409 a rule refused it, 404 unknown, 403 not ours...) and `detail`,
    the studio's reason in words a player can read."""

    def __init__(self, status: int, detail: str) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail


class StudioUnreachable(Exception):
    """The studio did not answer at all (down, or the network)."""


class StudioClient:
    def __init__(self, base_url: str, api_key: str) -> None:
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key

    def feed_url(self, table_id: str, after: int) -> str:
        """The results feed's WebSocket address (the key goes in the `X-API-Key` header, see `feed_headers`)."""
        scheme, _, rest = self.base_url.partition("://")
        ws_scheme = "wss" if scheme == "https" else "ws"
        return f"{ws_scheme}://{rest}/ws/feed/{urllib.parse.quote(table_id)}?after={after}"

    def feed_headers(self) -> dict[str, str]:
        return {"X-API-Key": self.api_key}

    async def get(self, path: str) -> Any:
        return await asyncio.to_thread(self._call, "GET", path, None)

    async def post(self, path: str, body: dict[str, Any]) -> Any:
        return await asyncio.to_thread(self._call, "POST", path, body)

    def _call(self, method: str, path: str, body: dict[str, Any] | None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.base_url + path, data=data, method=method)
        request.add_header("X-API-Key", self.api_key)
        request.add_header("Accept", "application/json")
        if data is not None:
            request.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(request, timeout=TIMEOUT) as answer:
                return json.loads(answer.read() or b"null")
        except urllib.error.HTTPError as error:
            raise StudioRefused(error.code, _detail(error)) from None
        except (urllib.error.URLError, TimeoutError, ConnectionError) as error:
            raise StudioUnreachable(f"the studio at {self.base_url} did not answer: {error}") from None


def _detail(error: urllib.error.HTTPError) -> str:
    """The studio's reason: `detail` of its JSON error (a string, or FastAPI's list of input errors)."""
    try:
        detail = json.loads(error.read()).get("detail")
    except (ValueError, AttributeError):
        return f"{error.code} {error.reason}"
    if isinstance(detail, list):
        return "; ".join(str(item.get("msg", item)) if isinstance(item, dict) else str(item) for item in detail)
    return str(detail) if detail else f"{error.code} {error.reason}"
