"""The studio's pages in a real browser against the real server: a full round from the dealer console on the simulated
shoe, a pit boss voiding a round, and surveillance finding that round, its timeline and the hash-chain verdict.

The tests share one server (module scope) and run in order; the surveillance test makes its own voided round through
the API when run alone. Screenshots of the key steps go to artifacts/screenshots/.
"""

from __future__ import annotations

import json
import re
import time
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from studio.domain.cards import Card
from studio.domain.rules import hand_total, outcome
from tests.api_client import ApiClient
from tests.browser.support import (
    BETTING_SECONDS,
    StudioServer,
    assert_no_js_errors,
    screenshot,
    sign_in,
)

pytestmark = pytest.mark.slow

CONSOLE = "/static/console.html?table=T1"
LIGHT_RED_WITHIN_MS = (BETTING_SECONDS + 3) * 1000

# Everything the console shows about the cards, read in one go so that no update falls between two reads.
READ_CONSOLE = """() => {
  const codes = (selector) => [...document.querySelectorAll(selector)].map((card) => card.dataset.code);
  const text = (id) => document.querySelector(`[data-testid="${id}"]`).textContent.trim();
  const hands = document.querySelector('[data-testid="hands"]');
  const result = document.querySelector('[data-testid="last-result"]');
  const beads = [...document.querySelectorAll('[data-testid="bead"]')].map((bead) => bead.dataset.winner);
  const lastPlayer = document.querySelector('[data-testid="last-result-player"]');
  const lastBanker = document.querySelector('[data-testid="last-result-banker"]');
  return {
    showing: hands.dataset.showing, game_id: hands.dataset.gameId,
    player: codes('[data-testid="player-cards"] [data-testid="card"]'),
    banker: codes('[data-testid="banker-cards"] [data-testid="card"]'),
    player_total: text("player-total"), banker_total: text("banker-total"),
    action: document.querySelector('[data-testid="next-action"]').dataset.action,
    result: {
      winner: result.dataset.winner, game_id: result.dataset.gameId || null, text: text("last-result-text"),
      player: codes('[data-testid="last-result-player"] [data-testid="card"]'),
      banker: codes('[data-testid="last-result-banker"] [data-testid="card"]'),
      player_total: lastPlayer ? lastPlayer.dataset.total : null,
      banker_total: lastBanker ? lastBanker.dataset.total : null,
    },
    beads,
  };
}"""


IDLE = "() => !document.querySelector('[data-testid=buttons]').dataset.busy"


def press(page: Page, key: str) -> None:
    """Press a console shortcut once the console has no request in flight (it ignores keys until then)."""
    page.wait_for_function(IDLE)
    page.keyboard.press(key)


def read_console(page: Page) -> dict[str, Any]:
    state: dict[str, Any] = page.evaluate(READ_CONSOLE)
    return state


def cards(codes: list[str]) -> list[Card]:
    return [Card.parse(code) for code in codes]


def open_console(page: Page) -> None:
    expect(page.get_by_test_id("connection")).to_have_attribute("data-state", "live")
    expect(page.get_by_test_id("next-action")).not_to_be_empty()


def press_and_wait(page: Page, key: str, action: str) -> None:
    """Press a console shortcut and wait until the console asks for `action` next."""
    press(page, key)
    expect(page.get_by_test_id("next-action")).to_have_attribute("data-action", action)


def burn(page: Page, count: int, then: str) -> None:
    for remaining in range(count, 0, -1):
        expect(page.get_by_test_id("next-action")).to_have_text(f"Burn {remaining} card{'s' if remaining > 1 else ''}")
        press(page, "Space")
    expect(page.get_by_test_id("next-action")).to_have_attribute("data-action", then)


def bring_to_ready(page: Page) -> None:
    """From wherever the table is between rounds, follow the console's next action until betting can open."""
    for _ in range(20):
        action = page.get_by_test_id("next-action").get_attribute("data-action")
        if action == "open_betting":
            return
        before = page.get_by_test_id("next-action").text_content()
        key = {"shuffle": "s", "cut": "c", "burn": "Space"}.get(action or "")
        assert key is not None, f"the table is not between rounds: next action {action!r}"
        press(page, key)
        expect(page.get_by_test_id("next-action")).not_to_have_text(before or "")
    raise AssertionError("the table did not become ready to open betting")


def open_and_close_betting(page: Page, shots: str | None = None) -> None:
    press_and_wait(page, "o", "wait_for_bets")
    light = page.get_by_test_id("light")
    expect(light).to_have_attribute("data-light", re.compile("green|yellow"))
    expect(page.get_by_test_id("seconds-left")).to_have_text(re.compile(r"^\d+ s$"))
    if shots:
        screenshot(page, f"{shots}-betting-open-green")
    expect(light).to_have_attribute("data-light", "red", timeout=LIGHT_RED_WITHIN_MS)
    expect(page.get_by_test_id("next-action")).to_have_attribute("data-action", "close_betting")
    if shots:
        screenshot(page, f"{shots}-betting-time-over-red")
    press_and_wait(page, "n", "deal")
    expect(page.get_by_test_id("next-action")).to_have_text("Deal to Player")


def draw_one(page: Page, before: dict[str, Any]) -> dict[str, Any]:
    """Draw a card from the simulated shoe and wait until the console shows it (or shows the result)."""
    press(page, "Space")
    shown = len(before["player"]) + len(before["banker"])
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        now = read_console(page)
        if now["showing"] != "round" or len(now["player"]) + len(now["banker"]) > shown:
            return now
        page.wait_for_timeout(50)
    raise AssertionError(f"the card drawn never showed: {before}")


def test_dealer_plays_a_full_round_on_the_simulated_shoe(studio_server: StudioServer, new_context: Any) -> None:
    context = new_context()
    page = sign_in(context, studio_server, "dealer", "dealer", "/static/index.html")
    # Demo mode says so, with the demo accounts, and the page links to the dealer's console.
    expect(page.get_by_test_id("demo-banner")).to_be_visible()
    expect(page.get_by_test_id("demo-account")).to_have_count(4)
    expect(page.get_by_test_id("demo-tag")).to_have_text("DEMO MODE")
    screenshot(page, "a01-signed-in-demo-mode")
    page.get_by_test_id("link-console-T1").click()
    open_console(page)
    expect(page.get_by_test_id("next-action")).to_have_text("Shuffle the shoe")
    expect(page.get_by_test_id("btn-draw")).to_be_visible()  # a simulated shoe: the console can draw
    expect(page.get_by_test_id("source")).to_have_attribute("data-state", "connected")

    # A move the procedure does not allow now: its button is disabled, and its shortcut says why in a banner, in the
    # words of the server's refusal, and changes nothing.
    expect(page.get_by_test_id("btn-close-betting")).to_be_disabled()
    expect(page.get_by_test_id("btn-shuffle")).to_be_enabled()
    press(page, "n")
    banner = page.get_by_test_id("banner")
    expect(banner).to_be_visible()
    expect(banner).to_contain_text('You cannot call "no more bets" now: the shoe is waiting to be shuffled')
    expect(page.get_by_test_id("next-action")).to_have_attribute("data-action", "shuffle")
    screenshot(page, "a02-refused-move-banner")

    press_and_wait(page, "s", "cut")
    expect(banner).to_be_hidden()
    press_and_wait(page, "c", "burn")
    burn(page, 6, "open_betting")
    screenshot(page, "a03-shoe-burned-ready")

    open_and_close_betting(page, shots="a04")
    state = read_console(page)
    game_id = state["game_id"]
    assert state["showing"] == "round" and state["player"] == [] and state["banker"] == []

    seen: list[tuple[list[str], list[str]]] = []
    for _ in range(6):
        state = draw_one(page, state)
        if state["showing"] != "round":
            break
        # Each card as read, with running totals that match the cards shown.
        assert state["player_total"] == str(hand_total(cards(state["player"])))
        assert state["banker_total"] == (str(hand_total(cards(state["banker"]))) if state["banker"] else "")
        if seen:  # cards only ever add to the hands, in dealing order
            assert state["player"][: len(seen[-1][0])] == seen[-1][0]
            assert state["banker"][: len(seen[-1][1])] == seen[-1][1]
        seen.append((state["player"], state["banker"]))
        if len(seen) == 3:
            screenshot(page, "a05-dealing")
    assert state["showing"] == "result", f"no result after 6 cards: {state}"
    screenshot(page, "a06-result")

    result = state["result"]
    assert result["game_id"] == game_id and state["game_id"] == game_id
    player, banker = cards(result["player"]), cards(result["banker"])
    expected = outcome(player, banker)  # raises if the deal shown breaks the third-card rules
    assert (state["player"], state["banker"]) == (result["player"], result["banker"])
    assert 4 <= len(player) + len(banker) <= 6
    assert result["winner"] == expected.winner.value
    assert result["player_total"] == str(expected.player_total)
    assert result["banker_total"] == str(expected.banker_total)
    assert state["player_total"] == str(expected.player_total)
    assert state["banker_total"] == str(expected.banker_total)
    score = f"{expected.player_total} – {expected.banker_total}"
    winner = expected.winner.value
    assert result["text"] == (f"TIE {score}" if winner == "tie" else f"{winner.upper()} WINS {score}")
    assert state["beads"] == [{"player": "P", "banker": "B", "tie": "T"}[winner]]
    assert state["action"] == "open_betting"
    # The cards before the last are the ones seen during the deal.
    assert seen and (len(seen[-1][0]) + len(seen[-1][1])) == len(player) + len(banker) - 1

    # After a reload the console shows the true state again, from the server.
    page.reload()
    open_console(page)
    again = read_console(page)
    assert again["result"] == result and again["beads"] == state["beads"] and again["action"] == "open_betting"
    screenshot(page, "a07-after-reload")
    assert_no_js_errors(page)


def test_pit_boss_voids_a_round_the_dealer_declared_in_error(studio_server: StudioServer, new_context: Any) -> None:
    dealer = sign_in(new_context(), studio_server, "dealer", "dealer", CONSOLE)
    open_console(dealer)
    bring_to_ready(dealer)
    open_and_close_betting(dealer)
    state = read_console(dealer)
    for _ in range(2):
        state = draw_one(dealer, state)
    assert state["showing"] == "round" and len(state["player"]) == 1 and len(state["banker"]) == 1
    game_id = state["game_id"]

    # The dealer declares an error (E asks what happened); the console says to call the pit boss, unmistakably.
    press(dealer, "e")
    expect(dealer.get_by_test_id("error-dialog")).to_be_visible()
    dealer.get_by_test_id("error-kind").select_option("dropped card")
    dealer.get_by_test_id("error-detail").fill("third card fell on the floor")
    dealer.get_by_test_id("error-submit").click()
    alert = dealer.get_by_test_id("pit-boss-alert")
    expect(alert).to_be_visible()
    expect(alert).to_contain_text("CALL THE PIT BOSS")
    expect(alert).to_contain_text("dropped card: third card fell on the floor")
    expect(dealer.get_by_test_id("next-action")).to_have_text("Call the pit boss")
    expect(dealer.locator("body")).to_have_class(re.compile(r"\bsuspended\b"))
    screenshot(dealer, "b01-console-call-the-pit-boss")

    # The pit boss, signed in on their own, sees the suspended table with its context and voids the round.
    boss = sign_in(new_context(), studio_server, "pitboss", "pitboss", "/static/pitboss.html")
    table = boss.locator('[data-testid="suspended-tables"] [data-testid="table-card"][data-table="T1"]')
    expect(table).to_be_visible()
    expect(table.get_by_test_id("suspension-reason")).to_contain_text("dealer declared: dropped card")
    expect(table.get_by_test_id("expected")).to_contain_text("the next card was due to PLAYER (position 3)")
    expect(table.get_by_test_id("round")).to_contain_text(game_id)
    expect(table.get_by_test_id("round-card")).to_have_count(2)
    expect(table.get_by_test_id("read")).to_contain_text("no card read caused this")
    screenshot(boss, "b02-pit-boss-suspended-table")
    table.get_by_test_id("void-reason").fill("dropped card: round voided, stakes refunded")
    table.get_by_test_id("void-submit").click()
    calm = boss.locator('[data-testid="tables"] [data-testid="table-card"][data-table="T1"]')
    expect(calm).to_have_attribute("data-phase", "burning")
    expect(boss.get_by_test_id("no-suspended")).to_be_visible()
    expect(boss.get_by_test_id("banner")).to_be_hidden()
    screenshot(boss, "b03-pit-boss-after-void")

    # The dealer's console follows live: the alarm is gone, the round is voided, the error burn is next; the pit
    # boss's decision and the void's reason are in view.
    expect(alert).to_be_hidden()
    expect(dealer.get_by_test_id("round-voided")).to_contain_text(f"voided · game {game_id}")
    expect(dealer.get_by_test_id("next-action")).to_have_text("Burn 3 cards")
    decision = dealer.get_by_test_id("decision")
    expect(decision).to_contain_text("Pit boss pitboss voided the round")
    expect(decision.get_by_test_id("decision-reason")).to_contain_text("dropped card: round voided, stakes refunded")
    expect(decision).to_contain_text("third card fell on the floor")
    expect(dealer.get_by_test_id("burn-count")).to_have_text("Burning after the error: 0 of 3")
    screenshot(dealer, "b04-console-after-void")
    studio_server.shared["voided"] = game_id
    assert_no_js_errors(dealer, boss)


def make_voided_round(server: StudioServer) -> str:
    """A round declared in error and voided by the pit boss, through the API (when the pit boss test did not run)."""
    dealer = ApiClient(server.url, "dealer", "dealer")
    boss = ApiClient(server.url, "pitboss", "pitboss")
    for _ in range(20):
        view = dealer.call("GET", "/api/tables/T1")
        action = view["next_action"]["action"]
        if action == "open_betting":
            break
        path = {"shuffle": "shuffle", "cut": "cut", "burn": "simulator/draw"}[action]
        dealer.call("POST", f"/api/tables/T1/{path}", {} if path == "cut" else None)
        deadline = time.monotonic() + 5
        while dealer.call("GET", "/api/tables/T1")["seq"] == view["seq"] and time.monotonic() < deadline:
            time.sleep(0.05)
    game_id: str = dealer.call("POST", "/api/tables/T1/open-betting")["table"]["round"]["game_id"]
    dealer.call("POST", "/api/tables/T1/declare-error", {"kind": "card exposed"})
    boss.call("POST", "/api/tables/T1/void", {"reason": "card exposed: round voided"})
    return game_id


def test_surveillance_finds_the_voided_round(studio_server: StudioServer, new_context: Any) -> None:
    game_id = studio_server.shared.get("voided") or make_voided_round(studio_server)
    page = sign_in(new_context(), studio_server, "surveillance", "surveillance", "/static/surveillance.html")

    # The hash-chain verdict of the table, and the last rounds recalled.
    verdict = page.locator('[data-testid="verdict"][data-table="T1"]')
    expect(verdict).to_have_attribute("data-ok", "true")
    expect(verdict).to_contain_text("OK")
    recent = page.locator('[data-testid="recent"][data-table="T1"]')
    expect(recent.locator(f'[data-testid="round-row"][data-game-id="{game_id}"]')).to_be_visible()

    # Search by status: the voided round is there.
    page.get_by_test_id("search-status").select_option("voided")
    page.get_by_test_id("search-submit").click()
    results = page.get_by_test_id("results-body")
    row = results.locator(f'[data-testid="round-row"][data-game-id="{game_id}"]')
    expect(row).to_be_visible()
    expect(results.get_by_test_id("round-row")).to_have_count(1)
    expect(row).to_have_attribute("data-status", "voided")
    expect(row.get_by_test_id("flag-error")).to_be_visible()
    screenshot(page, "c01-search-voided")

    # Its timeline: every event with its time and actor; the void by the pit boss, with the reason.
    row.click()
    timeline = page.get_by_test_id("timeline")
    expect(timeline).to_be_visible()
    expect(page.get_by_test_id("detail-game-id")).to_have_text(game_id)
    events = timeline.get_by_test_id("event")
    expect(events.first).to_have_attribute("data-kind", "BettingOpened")
    suspended = timeline.locator('[data-testid="event"][data-kind="TableSuspended"]')
    expect(suspended.get_by_test_id("event-actor")).to_have_text("dealer:dealer")
    voided = timeline.locator('[data-testid="event"][data-kind="RoundVoided"]')
    expect(voided).to_have_count(1)
    expect(voided.get_by_test_id("event-actor")).to_have_text("pit_boss:pitboss")
    expect(voided.get_by_test_id("event-details")).to_contain_text("round voided")
    expect(events.last).to_have_attribute("data-kind", "RoundVoided")
    kinds = events.evaluate_all("(rows) => rows.map((row) => row.dataset.kind)")
    times = timeline.locator("[data-testid=event] td:nth-child(2)").all_text_contents()
    assert all(re.match(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d", at) for at in times), times
    screenshot(page, "c02-round-timeline")

    # The export links download this round's records.
    href = page.get_by_test_id("export-round-json").get_attribute("href")
    assert href is not None
    answer = page.request.get(f"{studio_server.url}{href}")
    assert answer.ok, answer.status
    exported = json.loads(answer.body())
    assert [record["kind"] for record in exported] == kinds
    assert page.get_by_test_id("export-shoe-csv").get_attribute("href", timeout=1000)
    assert_no_js_errors(page)


def test_table_display_draws_the_roads_of_the_shoe(studio_server: StudioServer, new_context: Any) -> None:
    """The read-only display shows one bead per result of the shoe and the big road's cells, as the API has them."""
    page = sign_in(new_context(), studio_server, "surveillance", "surveillance", "/static/display.html?table=T1")
    page.wait_for_selector('[data-testid="connection"][data-state="live"]')
    roads = ApiClient(studio_server.url, "surveillance", "surveillance").call("GET", "/api/tables/T1/roads")
    page.wait_for_function(
        "count => document.querySelectorAll('[data-testid=bead]').length === count", arg=len(roads["bead_plate"])
    )
    beads = page.locator('[data-testid="bead"]').all_inner_texts()
    assert beads == roads["bead_plate"]
    assert page.locator('[data-testid="big-road-cell"]').count() == sum(len(column) for column in roads["big_road"])
    assert "Banker" in page.locator('[data-testid="counts"]').inner_text()
    screenshot(page, "d01-table-display")
    assert_no_js_errors(page)
