"""The dealer console fit for a shift, in Chromium against the real server: a whole (short) shoe dealt from the
keyboard on the simulated shoe, with a card out during betting that the pit boss lets go on. At every step the
buttons enabled are exactly the ones the procedure allows in the phase shown; at 1280x720 and 1920x1080 the page
never scrolls and the buttons, the next action, the hands and the "call the pit boss" alarm stay in view, even once
the big road is wider than its box (which then shows its latest columns). Space after the last hand draws nothing.
Screenshots of each size go to artifacts/screenshots/ (e01-e09)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from tests.api_client import ApiClient
from tests.browser.conftest import running_studio
from tests.browser.support import StudioServer, assert_no_js_errors, screenshot, sign_in

pytestmark = pytest.mark.slow

CONSOLE = "/static/console.html?table=T1"
VIEWPORTS = ((1280, 720), (1920, 1080))
SECONDS_BACK = 6  # betting time given back after a card out during betting is resolved with "continue"
# Two decks, the cut card 8 cards from the back: a whole shoe of about twenty rounds, long enough for the big road
# to outgrow its box; "no more bets" may be called at once, so the shoe deals quickly.
SHORT_SHOE_TOML = f"""\
[table]
id = "T1"

[procedure]
decks = 2
cut_card_from_back = 8
betting_seconds = 3
betting_seconds_after_error = {SECONDS_BACK}
warning_seconds = 1
allow_early_close = true
"""

# The console's buttons (data-action) the procedure allows in each phase, at a table on the simulated shoe that
# allows an early close; "cut card out" only until the last hand is known.
ALLOWED = {
    "awaiting_shuffle": {"shuffle", "dealer_change"},
    "awaiting_cut": {"cut", "dealer_change"},
    "burning": {"draw", "key_card", "declare_error", "cut_card_out"},
    "ready": {"open_betting", "dealer_change", "declare_error", "cut_card_out"},
    "betting_open": {"close_betting", "declare_error", "cut_card_out"},
    "dealing": {"draw", "key_card", "declare_error", "cut_card_out"},
    "suspended": {"cut_card_out"},  # the cut card may come out while the table waits for the pit boss
}

# What the console shows, read in one go: the phase, whether the last hand is known, the buttons enabled.
READ = """() => {
  const action = document.querySelector('[data-testid="next-action"]');
  const buttons = [...document.querySelectorAll('[data-testid=buttons] button')].filter((b) => !b.hidden);
  return {
    phase: action.dataset.phase, action: action.dataset.action,
    last_hand_known: document.querySelector('[data-testid="table-facts"]').textContent.includes("last hand:"),
    enabled: buttons.filter((b) => !b.disabled).map((b) => b.dataset.action).sort(),
    shown: buttons.map((b) => b.dataset.action).sort(),
  };
}"""

# Does the page fit the viewport? Its scroll size, and what of the job-critical parts is not wholly in view.
FIT = """() => {
  const doc = document.documentElement;
  const visible = (node) => node.getClientRects().length > 0;
  const inView = (node) => {
    const box = node.getBoundingClientRect();
    return box.top >= 0 && box.left >= 0 && box.bottom <= innerHeight + 0.5 && box.right <= innerWidth + 0.5;
  };
  const parts = [...document.querySelectorAll('[data-testid=buttons] button')].filter((b) => !b.hidden);
  for (const id of ["next-action", "light", "seconds-left", "hand-player", "hand-banker", "pit-boss-alert",
    "winner", "burn-box", "decision", "suspension-read", "last-result", "big-road", "bead-plate"]) {
    const node = document.querySelector(`[data-testid="${id}"]`);
    if (node && visible(node)) parts.push(node);
  }
  return {
    size: [doc.scrollWidth, doc.scrollHeight, innerWidth, innerHeight],
    scrolled: [scrollX, scrollY],
    out: parts.filter((node) => !inView(node)).map((node) => node.dataset.testid),
  };
}"""

# The big road: wider than its box, and scrolled so that its latest column is in view.
ROAD = """() => {
  const road = document.querySelector('[data-testid="big-road"]');
  const cells = [...road.querySelectorAll('[data-testid="big-road-cell"]')];
  const last = cells.reduce((a, b) => (Number(b.style.gridColumn) >= Number(a.style.gridColumn) ? b : a));
  const box = road.getBoundingClientRect();
  const cell = last.getBoundingClientRect();
  return { wide: road.scrollWidth > road.clientWidth + 1, columns: Number(last.style.gridColumn),
           last_in_view: cell.left >= box.left - 1 && cell.right <= box.right + 1 };
}"""

IDLE = "() => !document.querySelector('[data-testid=buttons]').dataset.busy"


@pytest.fixture(scope="module")
def short_shoe_studio(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StudioServer]:
    folder = tmp_path_factory.mktemp("studio-short-shoe")
    table = folder / "t1.toml"
    table.write_text(SHORT_SHOE_TOML)
    with running_studio(folder, table) as server:
        yield server


def press(page: Page, key: str) -> None:
    """Press a shortcut once the console is idle, and wait until what it asked for is done (a drawn card shown)."""
    page.wait_for_function(IDLE)
    page.keyboard.press(key)
    page.wait_for_function(IDLE)


def check_buttons(page: Page) -> dict[str, Any]:
    """The buttons enabled are exactly those the procedure allows in the phase the console shows."""
    shown: dict[str, Any] = page.evaluate(READ)
    expected = set(ALLOWED[shown["phase"]])
    if shown["last_hand_known"]:
        expected.discard("cut_card_out")
    assert set(shown["enabled"]) == expected, f"in phase {shown['phase']}: {shown}"
    assert "draw" in shown["shown"], "a simulated shoe: the console can draw"
    return shown


def check_fit(page: Page, shots: str | None = None) -> None:
    """At both sizes: no scrolling, every job-critical part in view; screenshots if asked. Back to 1280x720."""
    for width, height in VIEWPORTS:
        page.set_viewport_size({"width": width, "height": height})
        page.wait_for_timeout(100)  # a frame for the layout
        fit = page.evaluate(FIT)
        assert fit["size"][0] <= width and fit["size"][1] <= height, f"the page scrolls at {width}x{height}: {fit}"
        assert fit["scrolled"] == [0, 0], fit
        assert fit["out"] == [], f"out of view at {width}x{height}: {fit['out']}"
        if shots:
            screenshot(page, f"{shots}-{width}x{height}")
    page.set_viewport_size({"width": VIEWPORTS[0][0], "height": VIEWPORTS[0][1]})


def wait_for_phase(page: Page, phase: str) -> None:
    expect(page.get_by_test_id("next-action")).to_have_attribute("data-phase", phase)


def test_a_whole_shoe_on_the_console_fits_the_screen_and_offers_only_what_the_procedure_allows(
    short_shoe_studio: StudioServer, new_context: Any
) -> None:
    server = short_shoe_studio
    dealer_api = ApiClient(server.url, "dealer", "dealer")
    boss_api = ApiClient(server.url, "pitboss", "pitboss")
    context = new_context()
    page = sign_in(context, server, "dealer", "dealer", CONSOLE)
    page.set_viewport_size({"width": 1280, "height": 720})
    expect(page.get_by_test_id("connection")).to_have_attribute("data-state", "live")
    wait_for_phase(page, "awaiting_shuffle")
    check_buttons(page)
    check_fit(page, "e01-console-new-shoe")

    press(page, "s")
    wait_for_phase(page, "awaiting_cut")
    check_buttons(page)
    press(page, "c")
    wait_for_phase(page, "burning")
    burn_box = page.get_by_test_id("burn-box")
    expect(burn_box).to_be_visible()
    expect(page.get_by_test_id("burn-count")).to_have_text("Burning after the shuffle: 0 of 6")
    for burned in range(1, 7):
        check_buttons(page)
        press(page, "Space")
        expect(burn_box).to_have_attribute("data-count", str(burned))
        if burned == 3:
            check_fit(page, "e02-console-burning")
    # After the burn: the six cards burned stay in view, with their count, until the first card is dealt.
    wait_for_phase(page, "ready")
    expect(page.get_by_test_id("burn-count")).to_have_text("Burned 6 cards after the shuffle")
    expect(page.get_by_test_id("burn-cards").get_by_test_id("card")).to_have_count(6)
    expect(page.get_by_test_id("hand-player")).not_to_have_class(re.compile(r"\bdue\b"))

    rounds = 0
    while True:
        shown = check_buttons(page)
        action = shown["action"]
        if action == "shuffle":
            break  # the last hand is dealt: the shoe has ended
        if action == "open_betting":
            rounds += 1
            press(page, "o")
            wait_for_phase(page, "betting_open")
            check_buttons(page)
            # No card is due while betting is open: neither hand is outlined.
            expect(page.locator('[data-testid="hands"] .hand.due')).to_have_count(0)
            if rounds == 2:
                card_out_during_betting(page, dealer_api, boss_api)
            press(page, "n")
            wait_for_phase(page, "dealing")
        elif action == "deal":
            expect(page.locator('[data-testid="hands"] .hand.due')).to_have_count(1)
            press(page, "Space")
            if rounds == 3 and page.get_by_test_id("hands").get_attribute("data-showing") == "round":
                check_fit(page, "e05-console-dealing")
        elif action == "burn":
            press(page, "Space")
        else:
            raise AssertionError(f"unexpected next action {action!r} in the shoe: {shown}")
        if page.get_by_test_id("hands").get_attribute("data-showing") == "result" and rounds == 3:
            # The winner, large, in its colour; the winning hand marked.
            winner = page.get_by_test_id("winner")
            expect(winner).to_be_visible()
            expect(winner.get_by_test_id("winner-text")).to_have_text(re.compile(r"^(PLAYER WINS|BANKER WINS|TIE)$"))
            check_fit(page, "e06-console-result")
        assert rounds < 60, "the shoe never ended"
    assert rounds >= 12, f"a whole shoe of two decks has more rounds than {rounds}"

    # After the whole shoe: the big road is wider than its box, which shows its latest column; nothing scrolls.
    road = page.evaluate(ROAD)
    assert road["wide"] and road["last_in_view"], road
    check_fit(page, "e07-console-shoe-ended")

    # Space after the last hand: no card is drawn (it would suspend the table); the console says why.
    before = dealer_api.call("GET", "/api/tables/T1")
    press(page, "Space")
    banner = page.get_by_test_id("banner")
    expect(banner).to_be_visible()
    expect(banner).to_contain_text("You cannot take a card: no card is due while the shoe is waiting to be shuffled")
    page.wait_for_timeout(500)  # a card drawn would be logged within this
    after = dealer_api.call("GET", "/api/tables/T1")
    assert (after["seq"], after["cards_drawn"], after["phase"]) == (before["seq"], before["cards_drawn"],
                                                                   "awaiting_shuffle")  # fmt: skip
    check_fit(page, "e08-console-space-after-the-last-hand")
    assert_no_js_errors(page)


def card_out_during_betting(page: Page, dealer_api: ApiClient, boss_api: ApiClient) -> None:
    """A card read while betting is open (keyed in through the API): the console stops with the read in view; the
    pit boss lets play go on; the console shows that decision, the error burn with its cards, and betting open again
    with the time given back."""
    dealer_api.call("POST", "/api/tables/T1/card", {"card": "QH"})
    wait_for_phase(page, "suspended")
    alert = page.get_by_test_id("pit-boss-alert")
    expect(alert).to_be_visible()
    read = page.get_by_test_id("suspension-read")
    expect(read).to_contain_text("Read that stopped the table")
    expect(read).to_contain_text("keyed")
    expect(read.locator('[data-testid="card"][data-code="QH"]')).to_have_count(1)
    check_buttons(page)  # only "cut card out": the rest waits for the pit boss
    check_fit(page, "e03-console-call-the-pit-boss")

    boss_api.call("POST", "/api/tables/T1/continue", {"reason": "card set aside, play on"})
    wait_for_phase(page, "burning")
    decision = page.get_by_test_id("decision")
    expect(decision).to_be_visible()
    expect(decision).to_contain_text("Pit boss pitboss let play continue")
    expect(decision.get_by_test_id("decision-reason")).to_contain_text("card set aside, play on")
    expect(decision).to_contain_text("a card came out while betting was open")
    expect(page.get_by_test_id("burn-count")).to_have_text("Burning after the error: 0 of 3")
    for burned in range(1, 4):
        check_buttons(page)
        press(page, "Space")
        expect(page.get_by_test_id("burn-box")).to_have_attribute("data-count", str(burned))
    # The players get their betting time back: the light is green again, the timer runs.
    wait_for_phase(page, "betting_open")
    expect(page.get_by_test_id("burn-count")).to_have_text("Burned 3 cards after the error")
    expect(page.get_by_test_id("light")).to_have_attribute("data-light", re.compile("green|yellow"))
    expect(page.get_by_test_id("seconds-left")).to_have_text(re.compile(r"^[1-6] s$"))
    check_buttons(page)
    check_fit(page, "e04-console-betting-back-after-the-error")
