"""The OpenAPI page works on a studio's closed network (issue 15, point 5): with every request outside the studio
server blocked, /docs still renders its operations, and no page asks for anything from elsewhere."""

from __future__ import annotations

from collections.abc import Callable

from playwright.sync_api import BrowserContext, Route, expect

from tests.browser.support import StudioServer, screenshot

PAGES = ("/docs", "/static/index.html", "/static/console.html", "/static/pitboss.html", "/static/surveillance.html")


def offline(context: BrowserContext, server: StudioServer) -> list[str]:
    """Block every request that does not go to the studio server; return the list of those blocked."""
    blocked: list[str] = []

    def only_the_studio(route: Route) -> None:
        if route.request.url.startswith(server.url):
            route.continue_()
        else:
            blocked.append(route.request.url)
            route.abort()

    context.route("**/*", only_the_studio)
    return blocked


def test_the_api_page_renders_its_operations_with_the_outside_network_blocked(
    studio_server: StudioServer, new_context: Callable[[], BrowserContext]
) -> None:
    context = new_context()
    blocked = offline(context, studio_server)
    page = context.new_page()
    page.goto(f"{studio_server.url}/docs")
    expect(page.locator(".opblock").first).to_be_visible()
    expect(page.get_by_text("/api/feed/{table}", exact=True).first).to_be_visible()
    assert page.locator(".opblock").count() > 40  # every route of the studio, not an empty shell
    screenshot(page, "docs-offline")
    assert blocked == []


def test_no_page_asks_for_anything_outside_the_studio(
    studio_server: StudioServer, new_context: Callable[[], BrowserContext]
) -> None:
    context = new_context()
    blocked = offline(context, studio_server)
    page = context.new_page()
    for path in PAGES:
        page.goto(f"{studio_server.url}{path}")
        page.wait_for_load_state("networkidle")
    assert blocked == []
