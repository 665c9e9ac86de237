"""Seats on the dealer console (seed 004), in Chromium against the real server: a game server seats players through
the API and the console shows every seat on one line, live (number, nickname, status in the round), in view in
1280×720 and 1920×1080, taking no room of its own: the page is no taller or wider with the seats than without them."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from studio.clock import ManualClock
from studio.users import UserStore
from tests.api_client import ApiClient
from tests.browser.conftest import running_studio
from tests.browser.support import TABLE_TOML, StudioServer, assert_no_js_errors, screenshot, sign_in
from tests.browser.test_shoe_procedure_pages import bring_to_ready

pytestmark = pytest.mark.slow

CONSOLE = "/static/console.html?table=T1"
VIEWPORTS = ((1280, 720), (1920, 1080))
SIZE = "() => [document.documentElement.scrollWidth, document.documentElement.scrollHeight]"


@pytest.fixture(scope="module")
def seated_studio(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[StudioServer, dict[str, str]]]:
    """`studio run` with T1 on the simulated shoe, with five seats; and a game server's API key."""
    folder = tmp_path_factory.mktemp("studio-seats")
    table = folder / "t1.toml"
    table.write_text(TABLE_TOML.replace('id = "T1"\n', 'id = "T1"\nseats = 5\n'))
    users = UserStore(f"sqlite:///{folder / 'studio.db'}", ManualClock(datetime(2026, 12, 1, tzinfo=UTC)))
    key = users.add_api_key("operator-1")
    users.close()
    with running_studio(folder, table) as server:
        yield server, {"X-API-Key": key}


def seats_shown(page: Page) -> list[tuple[str | None, str | None, str]]:
    seats = page.get_by_test_id("seat")
    return [(seats.nth(i).get_attribute("data-seat"), seats.nth(i).get_attribute("data-status"),
             seats.nth(i).inner_text()) for i in range(seats.count())]  # fmt: skip


def test_the_console_shows_the_seats_live_and_still_fits_the_screen(
    seated_studio: tuple[StudioServer, dict[str, str]], new_context: Any
) -> None:
    server, key = seated_studio
    api = ApiClient(server.url)
    page = sign_in(new_context(), server, "dealer", "dealer", CONSOLE)
    expect(page.get_by_test_id("connection")).to_have_attribute("data-state", "live")
    expect(page.get_by_test_id("seat")).to_have_count(5)
    assert {status for _, status, _ in seats_shown(page)} == {"free"}

    api.call("POST", "/api/tables/T1/seats", {"player_id": "p1", "nickname": "Annabelle-the-lucky", "seat": 1}, key)
    api.call("POST", "/api/tables/T1/seats", {"player_id": "p2", "nickname": "Bea", "seat": 4}, key)
    expect(page.locator('[data-testid=seat][data-seat="4"]')).to_have_attribute("data-status", "seated")
    bring_to_ready(server)
    api.call("POST", "/api/tables/T1/open-betting", None, {}, ok=(401,))  # a game server key is not a dealer
    ApiClient(server.url, "dealer", "dealer").call("POST", "/api/tables/T1/open-betting")
    api.call("POST", "/api/tables/T1/seats", {"player_id": "p3", "nickname": "Cid", "seat": 5}, key)  # mid-round
    api.call("POST", "/api/tables/T1/seats/pass", {"player_id": "p2"}, key)
    expect(page.locator('[data-testid=seat][data-seat="5"]')).to_have_attribute("data-status", "waiting")
    shown = seats_shown(page)
    assert [(number, status) for number, status, _ in shown] == [
        ("1", "betting"), ("2", "free"), ("3", "free"), ("4", "passed"), ("5", "waiting"),
    ]  # fmt: skip
    assert "Bea" in shown[3][2] and "passed" in shown[3][2] and "next round" in shown[4][2]
    assert not any("p1" in text or "p2" in text for _, _, text in shown)  # nicknames, never player ids

    row = page.get_by_test_id("seats")
    for width, height in VIEWPORTS:
        page.set_viewport_size({"width": width, "height": height})
        expect(row).to_be_in_viewport()
        boxes = [page.get_by_test_id("seat").nth(i).bounding_box() for i in range(5)]
        assert all(box is not None for box in boxes)
        assert len({round(box["y"]) for box in boxes if box is not None}) == 1, "the seats stand on one line"
        # The seats take no room of their own: the page is no taller or wider with them than without them (the
        # hands' column, where they stand, is shorter than the side column beside it).
        with_seats = page.evaluate(SIZE)
        row.evaluate("(seats) => { seats.hidden = true; }")
        without = page.evaluate(SIZE)
        row.evaluate("(seats) => { seats.hidden = false; }")
        assert with_seats == without, (width, height, with_seats, without)
        assert with_seats[0] <= width, f"the console scrolls sideways in {width}x{height}"
        screenshot(page, f"s01-console-seats-{width}x{height}")
    assert_no_js_errors(page)
