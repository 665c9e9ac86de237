"""Helpers of the browser tests: where Chromium is and how it is launched, screenshots, signing in, an API client."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from http.cookiejar import CookieJar
from pathlib import Path
from typing import Any

from playwright.sync_api import BrowserContext, Page

REPO = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
SCREENSHOTS = REPO / "artifacts" / "screenshots"
BETTING_SECONDS = 3  # the table's timer in these tests (the default 15 s would make them slow)
TABLE_TOML = f"""\
[table]
id = "T1"

[procedure]
betting_seconds = {BETTING_SECONDS}
warning_seconds = 1
"""
VIEWPORT = {"width": 1366, "height": 900}
TIMEOUT_MS = 10_000

_js_errors: dict[int, list[str]] = {}  # per page (by id), the JavaScript errors it raised


@dataclass
class StudioServer:
    url: str
    log: Path
    shared: dict[str, Any] = field(default_factory=dict)  # what one test leaves for the next (a voided game id)


def screenshot(page: Page, name: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=True)


def sign_in(context: BrowserContext, server: StudioServer, name: str, password: str, next_page: str) -> Page:
    """Sign in through the sign-in page, which then opens `next_page`. The page's JavaScript errors are kept for
    `assert_no_js_errors`."""
    page = context.new_page()
    errors = _js_errors.setdefault(id(page), [])
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(f"{server.url}/static/index.html?next={next_page}")
    page.get_by_test_id("login-name").fill(name)
    page.get_by_test_id("login-password").fill(password)
    page.get_by_test_id("login-submit").click()
    page.wait_for_url(f"**{next_page.partition('?')[0]}*")
    return page


def assert_no_js_errors(*pages: Page) -> None:
    for page in pages:
        assert _js_errors.get(id(page), []) == [], _js_errors[id(page)]


class ApiClient:
    """A signed-in HTTP client of the studio's API (stdlib only), for setting up state a test does not look at."""

    def __init__(self, server: StudioServer, name: str, password: str) -> None:
        self.url = server.url
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(CookieJar()))
        self.call("POST", "/api/login", {"name": name, "password": password})

    def call(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(f"{self.url}{path}", data=data, method=method,
                                         headers={"Content-Type": "application/json"})  # fmt: skip
        try:
            with self.opener.open(request, timeout=10) as answer:
                return json.loads(answer.read() or b"null")
        except urllib.error.HTTPError as error:
            detail = error.read().decode(errors="replace")
            error.close()
            raise AssertionError(f"{method} {path} -> {error.code}: {detail}") from None
