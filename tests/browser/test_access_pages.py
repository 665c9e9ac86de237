"""Staff access in a real browser (issue 18): the pit boss page refuses to load in a frame, every page works under its
Content-Security-Policy with no violation reported, and the surveillance page shows the access log to surveillance
(and admin), never to a pit boss."""

from __future__ import annotations

from collections.abc import Callable

from playwright.sync_api import BrowserContext, ConsoleMessage, Page, expect

from tests.browser.support import StudioServer, assert_no_js_errors, sign_in


def _violations(page: Page) -> list[str]:
    found: list[str] = []

    def note(message: ConsoleMessage) -> None:
        if "Content Security Policy" in message.text or "Refused to" in message.text:
            found.append(message.text)

    page.on("console", note)
    return found


def test_the_pit_boss_page_refuses_to_load_in_a_frame(
    studio_server: StudioServer, new_context: Callable[[], BrowserContext]
) -> None:
    context = new_context()
    signed_in = sign_in(context, studio_server, "pitboss", "pitboss", "/static/pitboss.html")
    expect(signed_in.get_by_test_id("who-name")).to_contain_text("pitboss")  # it loads on its own
    framing = context.new_page()  # the same browser, signed in: a framing page would get the real thing
    refused = _violations(framing)
    framing.set_content(f'<iframe id="target" src="{studio_server.url}/static/pitboss.html" width="800" height="600">'
                        "</iframe>")  # fmt: skip
    framing.wait_for_timeout(1500)
    frame = framing.frame_locator("#target")
    expect(frame.get_by_test_id("who")).to_have_count(0)
    assert any("frame-ancestors" in text or "X-Frame-Options" in text for text in refused), refused


def test_every_page_runs_under_its_policy_without_a_violation(
    studio_server: StudioServer, new_context: Callable[[], BrowserContext]
) -> None:
    context = new_context()
    surveillance = sign_in(context, studio_server, "surveillance", "surveillance", "/static/surveillance.html")
    expect(surveillance.get_by_test_id("who-name")).to_be_visible()  # signed in and on the page
    seen = _violations(surveillance)
    surveillance.reload()
    expect(surveillance.get_by_test_id("access-log-panel")).to_be_visible()
    expect(surveillance.get_by_test_id("access-row").first).to_be_visible()
    # The surveillance officer's own sign-in is on it, with where from.
    expect(surveillance.locator('[data-testid="access-row"][data-kind="SignedIn"]').first).to_contain_text(
        "surveillance:surveillance"
    )
    surveillance.get_by_test_id("access-verify").click()
    expect(surveillance.get_by_test_id("access-verdict")).to_contain_text("hash chain intact")
    expect(surveillance.get_by_test_id("figures-panel")).to_be_visible()
    pages = [surveillance]
    for path, ready in (
        ("/static/pitboss.html", "who-name"),
        ("/static/display.html?table=T1", "who-name"),
        ("/static/index.html", "who-name"),
    ):
        page = context.new_page()
        seen += _violations(page)
        page.goto(f"{studio_server.url}{path}")
        expect(page.get_by_test_id(ready)).to_be_visible()
        pages.append(page)
    docs = context.new_page()
    seen += _violations(docs)
    docs.goto(f"{studio_server.url}/docs")
    expect(docs.locator(".swagger-ui .info")).to_be_visible()  # Swagger UI started: its inline script ran
    expect(docs.locator(".opblock").first).to_be_visible()
    assert seen == []
    assert_no_js_errors(surveillance)


def test_the_dealer_console_runs_under_its_policy(
    studio_server: StudioServer, new_context: Callable[[], BrowserContext]
) -> None:
    console = sign_in(new_context(), studio_server, "dealer", "dealer", "/static/console.html?table=T1")
    expect(console.get_by_test_id("who-name")).to_be_visible()
    seen = _violations(console)
    console.reload()
    expect(console.get_by_test_id("who-name")).to_be_visible()
    console.wait_for_timeout(500)
    assert seen == []


def test_a_pit_boss_on_the_surveillance_page_gets_no_access_log(
    studio_server: StudioServer, new_context: Callable[[], BrowserContext]
) -> None:
    page = sign_in(new_context(), studio_server, "pitboss", "pitboss", "/static/surveillance.html")
    expect(page.get_by_test_id("who-name")).to_be_visible()
    page.wait_for_timeout(500)
    expect(page.get_by_test_id("access-log-panel")).to_have_count(0)
