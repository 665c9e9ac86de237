"""The results feed served by uvicorn with the studio's WebSocket protocol (`studio run`'s, dealer_ui/ws_protocol.py),
where the hub writes each message's frame straight to the subscribers' sockets: the contract game servers rely on
holds as it does through the ASGI queue (tests/server/test_feed.py): the backlog from `after`, then live, nothing
lost, twice or out of order; a subscriber too slow is closed 1013 and resumes from its last seq; a message other
than a ping closes that connection 1008; pings keep it open."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx2
import pytest
import uvicorn
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from dealer_ui.runtime import Studio
from dealer_ui.ws_protocol import DirectWebSocketProtocol
from studio.clock import ManualClock
from studio.domain.roles import Role
from studio.users import Principal
from tests.server.conftest import BURN_CARDS, NATURAL, T0, T1, studio_app

Scenario = Callable[["Served"], Awaitable[None]]


class Served:
    """The studio on a real socket, a dealer's HTTP client, and a game server's API key."""

    def __init__(self, studio: Studio, base: str, http: httpx2.AsyncClient, key: str) -> None:
        self.studio, self.base, self.http, self.key = studio, base, http, key

    async def ok(self, action: str, body: Any = None) -> None:
        response = await self.http.post(f"/api/tables/T1/{action}", json=body)
        assert response.status_code == 200, response.text

    async def deal(self, *codes: str) -> None:
        for code in codes:
            await self.ok("card", {"card": code})

    async def round(self, cards: tuple[str, ...] = NATURAL) -> None:
        await self.ok("open-betting")
        await self.ok("close-betting")
        await self.deal(*cards)

    async def feed(self) -> list[dict[str, Any]]:
        page = await self.http.get("/api/feed/T1", params={"after": 0}, headers={"X-API-Key": self.key})
        messages: list[dict[str, Any]] = page.json()["messages"]
        return messages

    def subscribe(self, after: int = 0) -> Any:
        return connect(f"{self.base.replace('http', 'ws')}/ws/feed/T1?after={after}",
                       additional_headers={"X-API-Key": self.key})  # fmt: skip

    def direct_subscribers(self) -> int:
        return sum(subscription.socket is not None for subscription in self.studio.hub._subscriptions.get("T1", ()))


@asynccontextmanager
async def served(folder: Path) -> AsyncIterator[Served]:
    app = studio_app(folder, ManualClock(T0), T1)
    config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", ws=DirectWebSocketProtocol,
                            ws_per_message_deflate=False)  # fmt: skip
    server = uvicorn.Server(config)
    serving = asyncio.create_task(server.serve())
    try:
        while not server.started:
            assert not serving.done(), "the server did not start"
            await asyncio.sleep(0.01)
        port = server.servers[0].sockets[0].getsockname()[1]
        studio: Studio = app.state.studio
        key = studio.users.add_api_key("operator-1")
        dealer = {"Authorization": f"Bearer {studio.users.open_session(Principal('dealer', Role.DEALER))}"}
        base = f"http://127.0.0.1:{port}"
        async with httpx2.AsyncClient(base_url=base, headers=dealer, timeout=10) as http:
            desk = Served(studio, base, http, key)
            await desk.ok("shuffle")
            await desk.ok("cut", {})
            await desk.deal(*BURN_CARDS[:2])
            yield desk
    finally:
        server.should_exit = True
        await serving


def run(folder: Path, scenario: Scenario) -> None:
    async def main() -> None:
        async with asyncio.timeout(60), served(folder) as desk:
            await scenario(desk)

    asyncio.run(main())


async def receive(ws: ClientConnection, count: int) -> list[dict[str, Any]]:
    return [json.loads(await ws.recv()) for _ in range(count)]


async def until_direct(desk: Served, count: int) -> None:
    """Until `count` subscribers have caught up and are written to directly."""
    while desk.direct_subscribers() < count:
        await asyncio.sleep(0.01)


def test_subscribers_from_the_start_and_from_a_seq_get_the_backlog_then_live_each_message_once(tmp_path: Path) -> None:
    async def scenario(desk: Served) -> None:
        await desk.round()
        logged = await desk.feed()
        async with desk.subscribe() as first, desk.subscribe(after=logged[2]["seq"]) as middle:
            seen_first = await receive(first, len(logged))
            seen_middle = await receive(middle, len(logged) - 3)
            await until_direct(desk, 2)  # both on the direct path: what follows is written by the hub itself
            await desk.round(("2H", "3H", "4H", "5H"))
            everything = await desk.feed()
            live = len(everything) - len(logged)
            seen_first += await receive(first, live)
            seen_middle += await receive(middle, live)
        assert seen_first == everything and seen_middle == everything[3:]
        assert [message["type"] for message in everything[len(logged) :]] == [
            "round_opened", "betting_closed", "card", "card", "card", "card", "result"]  # fmt: skip

    run(tmp_path, scenario)


def test_a_subscriber_too_slow_is_closed_1013_and_resumes_from_its_last_seq(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def scenario(desk: Served) -> None:
        async with desk.subscribe() as slow:
            seen = await receive(slow, len(await desk.feed()))
            await until_direct(desk, 1)
            monkeypatch.setattr("dealer_ui.hub.WRITE_LIMIT", -1)  # any byte the socket holds is too much
            await desk.ok("open-betting")
            seen += await receive(slow, 1)  # what was written before the close frame arrives first
            with pytest.raises(ConnectionClosed) as closed:
                await slow.recv()
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 1013
        assert closed.value.rcvd.reason.startswith("too slow")
        assert desk.studio.hub.subscribers("T1") == 0
        monkeypatch.undo()
        await desk.ok("close-betting")
        await desk.deal(*NATURAL)
        async with desk.subscribe(after=seen[-1]["seq"]) as again:
            everything = await desk.feed()
            seen += await receive(again, len(everything) - len(seen))
        assert seen == everything

    run(tmp_path, scenario)


@pytest.mark.parametrize(("sent", "reason"), [("hello", "the feed accepts only pings"),
                                              (b"\x00binary", "the feed accepts only"),
                                              ("x" * 2000, "message too large")])  # fmt: skip
def test_on_a_direct_socket_pings_keep_the_connection_and_anything_else_closes_it_1008(
    tmp_path: Path, sent: str | bytes, reason: str
) -> None:
    async def scenario(desk: Served) -> None:
        async with desk.subscribe() as bad, desk.subscribe() as good:
            backlog = len(await desk.feed())
            await receive(bad, backlog)
            await receive(good, backlog)
            await until_direct(desk, 2)
            for ping in ("ping", '{"type":"ping"}'):
                await bad.send(ping)
            await bad.ping()  # a WebSocket ping frame, answered by the server
            await desk.ok("open-betting")
            assert [message["type"] for message in await receive(bad, 1)] == ["round_opened"]
            await bad.send(sent)
            with pytest.raises(ConnectionClosed) as closed:
                await bad.recv()
            await desk.ok("close-betting")
            assert [message["type"] for message in await receive(good, 2)] == ["round_opened", "betting_closed"]
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 1008
        assert closed.value.rcvd.reason.startswith(reason)

    run(tmp_path, scenario)
