"""The reference player client (issue 16) in Chromium: two players on the demo game server's player page beside a
dealer console, the simulated shoe dealing. Bets by clicks and by seed 004's keys, a result settled to the cent, a
suspension seen and resolved, a void refunded, seats changed between rounds, a player as banker approving a round;
the page at 1280x720 and 390x844 without horizontal scrolling (screenshots kept in artifacts/screenshots/p0*)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from tests.api_client import ApiClient
from tests.browser.conftest import running_studio
from tests.browser.support import StudioServer, assert_no_js_errors, screenshot, sign_in
from tests.browser.test_shoe_procedure_pages import bring_to_ready

pytestmark = pytest.mark.slow

BETTING_SECONDS = 8  # time for two players to bet through the page
TABLE = """\
[table]
id = "T1"
seats = 5
banker = "player"
over_maximum = "cap"

[procedure]
betting_seconds = 8
warning_seconds = 2
"""
START = 500_000  # the demo's starting balance, minor units
NO_SCROLL_X = "() => document.documentElement.scrollWidth <= document.documentElement.clientWidth"


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[StudioServer, str]]:
    """`studio run` in demo mode with the demo game server on a second free port; T1 with seats and a player bank."""
    folder = tmp_path_factory.mktemp("demo")
    (folder / "t1.toml").write_text(TABLE)
    with running_studio(folder, folder / "t1.toml") as server:
        yield server, server.demo_url


def player_page(context: Any, demo_url: str, player: str) -> Page:
    page: Page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(f"{demo_url}/static/player.html?player={player}&table=T1")
    expect(page.get_by_test_id("balance")).not_to_have_text("—")
    page.errors = errors  # type: ignore[attr-defined]
    return page


def money(cents: int) -> str:
    return f"{cents // 100:,}.{cents % 100:02d}"


def open_round(dealer: ApiClient) -> dict[str, Any]:
    dealer.call("POST", "/api/tables/T1/open-betting")
    return dealer.call("GET", "/api/tables/T1/public")["round"]  # type: ignore[no-any-return]


def close_betting(dealer: ApiClient) -> None:
    deadline = time.monotonic() + BETTING_SECONDS + 5
    while dealer.call("POST", "/api/tables/T1/close-betting", ok=(409,)).get("status") == 409:
        assert time.monotonic() < deadline, "betting did not close"
        time.sleep(0.2)


def deal_until(dealer: ApiClient, game_id: str, cards: int = 99) -> None:
    """The simulated shoe draws (burns included) until the round `game_id` is over, or `cards` cards are dealt."""
    for _ in range(40):
        public = dealer.call("GET", "/api/tables/T1/public")
        last = public["last_result"]
        if (last and last["game_id"] == game_id) or (public["round"] and len(public["round"]["cards"]) >= cards):
            return
        if public["round"] is None and public["phase"] != "dealing" and not public["suspended"]:
            return  # voided
        dealer.call("POST", "/api/tables/T1/simulator/draw", ok=(200, 409))
        time.sleep(0.15)
    raise AssertionError(f"round {game_id} did not finish")


def expected_return(bet_type: str, stake: int, result: dict[str, Any]) -> int:
    """What a bet returns (stake included), from the seeds' pay table, for the bets these tests place."""
    winner = result["winner"]
    if bet_type == "tie":
        return stake * 9 if winner == "tie" else 0
    if winner == "tie":
        return stake  # Player and Banker push on a tie
    if bet_type != winner:
        return 0
    return stake * 2 if bet_type == "player" else stake * 2 - stake * 5 // 100


def test_two_players_play_rounds_beside_the_dealer_console(demo: tuple[StudioServer, str], new_context: Any) -> None:
    server, demo_url = demo
    dealer = ApiClient(server.url, "dealer", "dealer")
    boss = ApiClient(server.url, "pitboss", "pitboss")
    console = sign_in(new_context(), server, "dealer", "dealer", "/static/console.html?table=T1")
    ana = player_page(new_context(), demo_url, "demo-ana")
    ben = player_page(new_context(), demo_url, "demo-ben")
    for page in (ana, ben):
        expect(page.get_by_test_id("balance")).to_have_text(money(START))
        expect(page.get_by_test_id("shortcuts")).to_contain_text("Shift")
        expect(page.get_by_test_id("seats").locator("button")).to_have_count(5)

    # Seats: Ana takes the first free one, Ben clicks seat 3.
    ana.get_by_test_id("seat-take").click()
    ben.get_by_test_id("seat-3").click()
    expect(ana.get_by_test_id("seat-1")).to_contain_text("Ana")
    expect(ana.get_by_test_id("seat-3")).to_contain_text("Ben")
    bring_to_ready(server)

    # Round 1. Ana by clicks: the 100 chip on Player, the 25 chip twice on Tie, then Deal. Ben by keys: the 5 chip,
    # 2 (Banker 5), Shift+Up (15), Up (16), 3 (Tie 5) and Delete (Tie removed), Enter.
    round1 = open_round(dealer)
    expect(ana.get_by_test_id("game-id")).to_have_text(round1["game_id"])
    expect(ana.get_by_test_id("light")).to_have_attribute("data-light", "green")
    ana.get_by_test_id("chip-100").click()
    ana.get_by_test_id("spot-player").click()
    ana.get_by_test_id("chip-25").click()
    ana.get_by_test_id("spot-tie").click()
    ana.get_by_test_id("spot-tie").click()
    expect(ana.get_by_test_id("staged-total")).to_have_text("150.00")
    ana.get_by_test_id("deal").click()
    expect(ana.get_by_test_id("placed-total")).to_have_text("150.00")
    ben.get_by_test_id("chip-5").click()
    for key in ("2", "Shift+ArrowUp", "ArrowUp", "3", "Delete"):
        ben.keyboard.press(key)
    expect(ben.get_by_test_id("staged-total")).to_have_text("16.00")
    ben.keyboard.press("Enter")
    expect(ben.get_by_test_id("placed-total")).to_have_text("16.00")
    expect(ben.get_by_test_id("balance")).to_have_text(money(START - 1600))
    expect(ana.get_by_test_id("light")).to_have_attribute("data-light", "yellow", timeout=BETTING_SECONDS * 1000)
    ana.set_viewport_size({"width": 1280, "height": 720})
    screenshot(ana, "p01-player-betting-1280x720")
    assert ana.evaluate(NO_SCROLL_X)
    close_betting(dealer)
    expect(ana.get_by_test_id("light")).to_have_attribute("data-light", "red")
    deal_until(dealer, round1["game_id"])
    result1 = dealer.call("GET", "/api/tables/T1/public")["last_result"]
    ana_after = START - 15000 + expected_return("player", 10000, result1) + expected_return("tie", 5000, result1)
    ben_after = START - 1600 + expected_return("banker", 1600, result1)
    expect(ana.get_by_test_id("balance")).to_have_text(money(ana_after))
    expect(ben.get_by_test_id("balance")).to_have_text(money(ben_after))
    expect(ana.get_by_test_id("winner")).to_contain_text(f"{result1['player_total']}–{result1['banker_total']}")
    verdict = {"tie": "push", "banker": "win", "player": "lose"}[result1["winner"]]
    expect(ben.get_by_test_id("outcome")).to_contain_text(
        f"banker 16.00: {verdict}, returned {money(ben_after - START + 1600)}"
    )
    expect(ana.get_by_test_id("outcome")).to_contain_text(f"returned {money(expected_return('tie', 5000, result1))}")
    letter = {"player": "J", "banker": "B", "tie": "–"}[result1["winner"]]
    expect(ana.get_by_test_id("results-list")).to_contain_text(letter)
    expect(ana.get_by_test_id("points")).not_to_have_text("0")  # the tie bet always settles won or lost: >= 50 points

    # Round 2. Ana repeats with the 0 key; Ben passes, and a bet after it is refused with the studio's reason. A card
    # reading problem suspends the table: both players see the notice, then the pit boss lets the round continue.
    round2 = open_round(dealer)
    expect(ana.get_by_test_id("game-id")).to_have_text(round2["game_id"])
    ana.keyboard.press("0")
    expect(ana.get_by_test_id("placed-total")).to_have_text("150.00")
    ben.get_by_test_id("pass").click()
    expect(ben.get_by_test_id("seat-3")).to_contain_text("passed")
    ben.keyboard.press("1")
    ben.keyboard.press("Enter")
    expect(ben.get_by_test_id("bet-messages")).to_contain_text("passed round")
    close_betting(dealer)
    deal_until(dealer, round2["game_id"], cards=1)
    dealer.call("POST", "/api/tables/T1/declare-error", {"kind": "card exposed", "detail": "P1 flashed"})
    for page in (ana, ben):
        expect(page.get_by_test_id("notice")).to_contain_text("under investigation")
        expect(page.get_by_test_id("light-text")).to_have_text("suspended")
    ana.set_viewport_size({"width": 390, "height": 844})
    screenshot(ana, "p02-player-suspended-390x844")
    assert ana.evaluate(NO_SCROLL_X)
    boss.call("POST", "/api/tables/T1/continue", {"reason": "the card was not seen by anyone"})
    for page in (ana, ben):
        expect(page.get_by_test_id("notice")).to_contain_text("the round continues")
    deal_until(dealer, round2["game_id"])
    result2 = dealer.call("GET", "/api/tables/T1/public")["last_result"]
    assert result2["game_id"] == round2["game_id"]
    ana_after += expected_return("player", 10000, result2) + expected_return("tie", 5000, result2) - 15000
    expect(ana.get_by_test_id("balance")).to_have_text(money(ana_after))
    expect(ben.get_by_test_id("balance")).to_have_text(money(ben_after))  # he passed: nothing moved
    ana.set_viewport_size({"width": 1280, "height": 720})

    # Between rounds Ben moves to seat 5. Round 3: Ben stakes 100 on Tie (maximum 50: "maximum reached", the table
    # caps it); the round is voided and every stake refunded.
    ben.get_by_test_id("seat-5").click()
    expect(ana.get_by_test_id("seat-5")).to_contain_text("Ben")
    expect(ana.get_by_test_id("seat-3")).to_contain_text("free")
    round3 = open_round(dealer)
    expect(ben.get_by_test_id("game-id")).to_have_text(round3["game_id"])
    ben.get_by_test_id("chip-25").click()
    ben.get_by_test_id("spot-banker").click()
    ben.get_by_test_id("deal").click()
    expect(ben.get_by_test_id("balance")).to_have_text(money(ben_after - 2500))
    ben.get_by_test_id("undo").click()  # the bet taken back, its stake returned
    expect(ben.get_by_test_id("bet-messages")).to_contain_text("banker 25.00 taken back")
    expect(ben.get_by_test_id("balance")).to_have_text(money(ben_after))
    ben.get_by_test_id("chip-100").click()
    ben.get_by_test_id("spot-tie").click()
    ben.get_by_test_id("deal").click()
    expect(ben.get_by_test_id("bet-messages")).to_contain_text("maximum reached: 50.00 USD accepted")
    ben.get_by_test_id("chip-5").click()
    ben.get_by_test_id("spot-2way").click()  # 2 Way: the stake on each pair bet
    expect(ben.get_by_test_id("staged-total")).to_have_text("10.00")
    ben.get_by_test_id("deal").click()
    expect(ben.get_by_test_id("bet-messages")).to_contain_text("banker pair 5.00 accepted")
    expect(ben.get_by_test_id("bet-messages")).to_contain_text("player pair 5.00 accepted")
    expect(ben.get_by_test_id("spot-player_pair")).to_contain_text("5.00")
    expect(ben.get_by_test_id("balance")).to_have_text(money(ben_after - 6000))
    close_betting(dealer)
    dealer.call("POST", "/api/tables/T1/declare-error", {"kind": "misdeal"})
    expect(ben.get_by_test_id("notice")).to_contain_text("under investigation")
    boss.call("POST", "/api/tables/T1/void", {"reason": "misdeal"})
    expect(ben.get_by_test_id("notice")).to_contain_text("voided")
    expect(ben.get_by_test_id("winner")).to_contain_text("refunded")
    expect(ben.get_by_test_id("balance")).to_have_text(money(ben_after))
    expect(ben.get_by_test_id("outcome")).to_contain_text("tie 50.00: refund, returned 50.00")
    bring_to_ready(server)

    # Round 4: Ana takes the bank (not auto-approve), approves the round; Ben's bet goes against her bank.
    ana.get_by_test_id("bank-take").click()
    expect(ana.get_by_test_id("bank")).to_contain_text("Banker: you")
    expect(ben.get_by_test_id("bank")).to_contain_text("another player")
    round4 = open_round(dealer)
    expect(ana.get_by_test_id("bank")).to_contain_text("waiting for the banker's approval")
    ben.get_by_test_id("chip-25").click()
    ben.get_by_test_id("spot-player").click()
    ben.get_by_test_id("deal").click()
    expect(ben.get_by_test_id("bet-messages")).to_contain_text("refused")  # not approved yet
    ana.get_by_test_id("bank-approve").click()
    expect(ana.get_by_test_id("bank")).to_contain_text("approved")
    ben.get_by_test_id("spot-player").click()
    ben.get_by_test_id("deal").click()
    expect(ben.get_by_test_id("placed-total")).to_have_text("25.00")
    ben.get_by_test_id("double").click()
    expect(ben.get_by_test_id("placed-total")).to_have_text("50.00")
    close_betting(dealer)
    deal_until(dealer, round4["game_id"])
    result4 = dealer.call("GET", "/api/tables/T1/public")["last_result"]
    ben_after += expected_return("player", 5000, result4) - 5000
    expect(ben.get_by_test_id("balance")).to_have_text(money(ben_after))
    expect(ana.get_by_test_id("outcome")).to_contain_text("This round")
    screenshot(ana, "p03-player-banker-1280x720")
    ben.set_viewport_size({"width": 390, "height": 844})
    screenshot(ben, "p04-player-after-rounds-390x844")
    assert ben.evaluate(NO_SCROLL_X)

    # Chat through the game server, seen by the other player.
    ben.get_by_test_id("chat-input").fill("good luck all")
    ben.get_by_test_id("chat-input").press("Enter")
    expect(ana.get_by_test_id("chat")).to_contain_text("Ben: good luck all")
    expect(console.get_by_test_id("connection")).to_have_attribute("data-state", "live")
    assert_no_js_errors(console)
    assert ana.errors == [] and ben.errors == []  # type: ignore[attr-defined]
