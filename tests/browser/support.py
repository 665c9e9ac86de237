"""Helpers of the browser tests: where Chromium is and how it is launched, screenshots, signing in, an API client."""

from __future__ import annotations

from dataclasses import dataclass, field
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
    demo_url: str = ""  # the demo game server beside it (its player page)
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
    # The page it opens, not the sign-in page still at its `?next=` address (the same path when `next_page` is it):
    # a test that navigated before the sign-in page's own navigation would be interrupted by it.
    target = f"{server.url}{next_page}"
    page.wait_for_url(lambda url: url.startswith(target) and "next=" not in url)
    return page


def assert_no_js_errors(*pages: Page) -> None:
    for page in pages:
        assert _js_errors.get(id(page), []) == [], _js_errors[id(page)]
