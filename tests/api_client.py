"""An HTTP client of a running studio's API (stdlib only), for tests that drive real server processes."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from http.cookiejar import CookieJar
from typing import Any


class ApiClient:
    """Signed in as `name` when one is given (the session cookie rides along), anonymous otherwise."""

    def __init__(self, url: str, name: str | None = None, password: str | None = None) -> None:
        self.url = url
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(CookieJar()))
        if name is not None:
            self.call("POST", "/api/login", {"name": name, "password": password})

    def call(self, method: str, path: str, body: dict[str, Any] | None = None, headers: dict[str, str] | None = None,
             ok: tuple[int, ...] = ()) -> Any:  # fmt: skip
        """The JSON answer; an error status listed in `ok` comes back as {"status", "detail"}, any other fails."""
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(f"{self.url}{path}", data=data, method=method,
                                         headers={"Content-Type": "application/json", **(headers or {})})  # fmt: skip
        try:
            with self.opener.open(request, timeout=20) as answer:
                return json.loads(answer.read() or b"null")
        except urllib.error.HTTPError as error:
            detail = error.read().decode(errors="replace")
            error.close()
            if error.code in ok:
                return {"status": error.code, "detail": detail}
            raise AssertionError(f"{method} {path} -> {error.code}: {detail}") from None
