"""After signing in, each person lands on the view their job is done from (issue 15, point 6): a dealer on the
console of the studio's table, a surveillance officer on the surveillance page, a pit boss on the pit boss page; an
admin gets the list of views."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from playwright.sync_api import BrowserContext, expect

from tests.browser.support import StudioServer


@pytest.mark.parametrize(
    ("name", "lands_on"),
    [
        ("dealer", "/static/console.html?table=T1"),
        ("surveillance", "/static/surveillance.html"),
        ("pitboss", "/static/pitboss.html"),
    ],
)
def test_a_person_signing_in_lands_on_their_view(
    studio_server: StudioServer, new_context: Callable[[], BrowserContext], name: str, lands_on: str
) -> None:
    page = new_context().new_page()
    page.goto(f"{studio_server.url}/static/index.html")
    page.get_by_test_id("login-name").fill(name)
    page.get_by_test_id("login-password").fill(name)
    page.get_by_test_id("login-submit").click()
    page.wait_for_url(f"{studio_server.url}{lands_on}")


def test_an_admin_signing_in_chooses_from_the_list_of_views(
    studio_server: StudioServer, new_context: Callable[[], BrowserContext]
) -> None:
    page = new_context().new_page()
    page.goto(f"{studio_server.url}/static/index.html")
    page.get_by_test_id("login-name").fill("admin")
    page.get_by_test_id("login-password").fill("admin")
    page.get_by_test_id("login-submit").click()
    expect(page.get_by_test_id("link-console-T1")).to_be_visible()
    expect(page.get_by_test_id("link-surveillance")).to_be_visible()
    assert page.url.endswith("/static/index.html")
