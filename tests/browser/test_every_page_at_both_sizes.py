"""Every page at the two sizes a shift uses (issue 15): a screenshot of each at 1280x720 and 1920x1080 is kept as a
test artifact, and none scrolls sideways."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from playwright.sync_api import BrowserContext

from tests.browser.support import StudioServer, assert_no_js_errors, screenshot, sign_in

PAGES = {
    "sign-in": "/static/index.html",
    "console": "/static/console.html?table=T1",
    "pit-boss": "/static/pitboss.html",
    "surveillance": "/static/surveillance.html",
    "table-display": "/static/display.html?table=T1",
    "api-docs": "/docs",
}
SIZES = [(1280, 720), (1920, 1080)]


@pytest.mark.parametrize(("width", "height"), SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
def test_every_page_fits_the_width_and_is_kept_as_a_screenshot(
    studio_server: StudioServer, new_context: Callable[[], BrowserContext], width: int, height: int
) -> None:
    page = sign_in(new_context(), studio_server, "admin", "admin", "/static/index.html")
    page.set_viewport_size({"width": width, "height": height})
    for name, path in PAGES.items():
        page.goto(f"{studio_server.url}{path}")
        page.wait_for_load_state("networkidle")
        overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
        assert overflow <= 0, f"{name} scrolls sideways by {overflow} px at {width}x{height}"
        screenshot(page, f"z-{name}-{width}x{height}")
    assert_no_js_errors(page)
