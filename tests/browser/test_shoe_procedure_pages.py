"""The deck inspections and the early shuffle in a real browser against the real server: the dealer console asks for
the inspection, the pit boss approves it on their page (naming the dealer), and later orders an early shuffle; the
dealer's console follows each step live."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Dialog, Page, expect

from tests.api_client import ApiClient
from tests.browser.conftest import running_studio
from tests.browser.support import TABLE_TOML, StudioServer, assert_no_js_errors, screenshot, sign_in

pytestmark = pytest.mark.slow

CONSOLE = "/static/console.html?table=T1"


@pytest.fixture(scope="module")
def inspecting_studio(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StudioServer]:
    """`studio run` with one table T1 on the simulated shoe that inspects its decks."""
    folder = tmp_path_factory.mktemp("studio-inspecting")
    table = folder / "t1.toml"
    table.write_text(TABLE_TOML + "inspect_decks = true\n")  # TABLE_TOML ends in its [procedure] table
    with running_studio(folder, table) as server:
        yield server


def answering(page: Page) -> list[str]:
    """The page's prompts are answered, in order, with what the caller puts in the list returned."""
    answers: list[str] = []

    def accept(dialog: Dialog) -> None:
        dialog.accept(answers.pop(0))

    page.on("dialog", accept)
    return answers


def bring_to_ready(server: StudioServer) -> None:
    """Shuffle, cut and burn through the API, as in the other browser tests (the simulated shoe draws each card)."""
    dealer = ApiClient(server.url, "dealer", "dealer")
    for _ in range(20):
        view = dealer.call("GET", "/api/tables/T1")
        action = view["next_action"]["action"]
        if action == "open_betting":
            return
        path = {"shuffle": "shuffle", "cut": "cut", "burn": "simulator/draw"}[action]
        dealer.call("POST", f"/api/tables/T1/{path}", {} if path == "cut" else None)
        deadline = time.monotonic() + 5
        while dealer.call("GET", "/api/tables/T1")["seq"] == view["seq"] and time.monotonic() < deadline:
            time.sleep(0.05)
    raise AssertionError("the table did not get ready")


def test_the_pit_boss_approves_the_inspection_and_orders_an_early_shuffle(
    inspecting_studio: StudioServer, new_context: Any
) -> None:
    dealer = sign_in(new_context(), inspecting_studio, "dealer", "dealer", CONSOLE)
    expect(dealer.get_by_test_id("connection")).to_have_attribute("data-state", "live")
    action = dealer.get_by_test_id("next-action")
    expect(action).to_have_attribute("data-action", "inspect")
    expect(action).to_have_text("Inspect the decks")
    expect(dealer.get_by_test_id("next-action-detail")).to_contain_text("for shoe 1: spread all 8 decks")
    screenshot(dealer, "i01-console-inspect-the-decks")

    boss = sign_in(new_context(), inspecting_studio, "pitboss", "pitboss", "/static/pitboss.html")
    table = boss.locator('[data-testid="table-card"][data-table="T1"]')
    expect(table.get_by_test_id("act-order-shuffle")).to_be_hidden()
    answers = answering(boss)
    answers.append("dealer")
    table.get_by_test_id("act-inspect-decks").click()
    expect(table.get_by_test_id("act-inspect-decks")).to_be_hidden()
    expect(action).to_have_attribute("data-action", "shuffle")  # the dealer's console follows live
    expect(boss.get_by_test_id("banner")).to_be_hidden()

    bring_to_ready(inspecting_studio)
    expect(table.get_by_test_id("act-order-shuffle")).to_be_visible()
    answers.append("cards suspected marked")
    table.get_by_test_id("act-order-shuffle").click()
    expect(table).to_have_attribute("data-phase", "awaiting_shuffle")
    expect(action).to_have_attribute("data-action", "inspect")
    expect(dealer.get_by_test_id("next-action-detail")).to_contain_text("shoe 1 has ended")
    screenshot(boss, "i02-pit-boss-after-early-shuffle")

    surveillance = ApiClient(inspecting_studio.url, "surveillance", "surveillance")
    shoe = surveillance.call("GET", "/api/surveillance/tables/T1/shoes/1/export?format=json")
    assert [record["kind"] for record in shoe][:2] == ["DecksInspected", "ShuffleConfirmed"]
    assert [record["kind"] for record in shoe][-2:] == ["ShuffleOrdered", "ShoeEnded"]
    assert shoe[0]["data"]["dealer"] == "dealer:dealer" and shoe[0]["data"]["approved_by"] == "pit_boss:pitboss"
    assert shoe[-1]["data"]["reason"] == "early_shuffle" and shoe[-2]["actor"] == "pit_boss:pitboss"
    assert_no_js_errors(dealer, boss)
