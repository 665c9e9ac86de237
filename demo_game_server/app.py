"""The demo game server's web app: the player page and the few routes it calls, each relayed to the studio.

The page never talks to the studio: it talks to its game server, which holds the studio's API key and knows which
player is which, as an operator's platform does. Every route below is one call (or two) of the studio's public API;
their order for one round is told in docs/integration.md. A refusal comes back with the studio's status and reason.

Demo players are not signed in: `?player=` picks one of DEMO_PLAYERS. A real game server authenticates its players
and never lets a page choose the player id.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import websockets
from fastapi import FastAPI, HTTPException, Request, Response, WebSocket
from fastapi.responses import JSONResponse, RedirectResponse
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, Field

from demo_game_server.studio_client import StudioClient, StudioRefused, StudioUnreachable

log = logging.getLogger(__name__)

STATIC = Path(__file__).parent / "static"
# Player id at the studio -> the nickname the table sees. Ids are this game server's own; the studio never shows them.
DEMO_PLAYERS = {"demo-ana": "Ana", "demo-ben": "Ben", "demo-cleo": "Cleo", "demo-dev": "Dev"}
STARTING_BALANCE = 500_000  # minor units: 5,000.00, topped up to this when the demo first sees a player below it
CHIPS = [100, 500, 2_500, 10_000, 50_000]  # seed 004's chips, 1 5 25 100 500, in minor units
SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'self'; connect-src 'self'; img-src 'self' data:; object-src 'none'; "
    "base-uri 'none'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}


class PlayerBody(BaseModel):
    player: str = Field(min_length=1, max_length=64)


class Stake(BaseModel):
    bet_type: str = Field(min_length=1, max_length=32)
    stake: int = Field(gt=0, le=10**12, description="minor units")


class Bets(PlayerBody):
    bets: list[Stake] = Field(min_length=1, max_length=16)


class SeatBody(PlayerBody):
    seat: int | None = Field(default=None, ge=1, le=64)


class ChatBody(PlayerBody):
    text: str = Field(min_length=1, max_length=500)


class BankBody(PlayerBody):
    auto_approve: bool = False


def create_app(studio_url: str, api_key: str) -> FastAPI:
    studio = StudioClient(studio_url, api_key)
    funded: set[str] = set()
    funding = asyncio.Lock()

    async def player_id(name: str) -> str:
        """One of the demo's players, with money at the studio: the first time this process sees them, their wallet is
        topped up to STARTING_BALANCE through the public deposit route (a new player's deposit creates the wallet)."""
        if name not in DEMO_PLAYERS:
            raise HTTPException(404, f"no demo player {name!r}; the demo's players are {', '.join(DEMO_PLAYERS)}")
        async with funding:
            if name not in funded:
                try:
                    balance = (await studio.get(f"/api/wallets/{name}"))["balance"]
                except StudioRefused as error:
                    if error.status != 404:
                        raise
                    balance = 0
                if balance < STARTING_BALANCE:
                    await studio.post(f"/api/wallets/{name}/deposit",
                                      {"amount": STARTING_BALANCE - balance, "reference": "demo top-up"})  # fmt: skip
                funded.add(name)
        return name

    app = FastAPI(title="Demo game server", docs_url=None, redoc_url=None, openapi_url=None)
    app.mount("/static", StaticFiles(directory=STATIC), name="static")

    @app.middleware("http")
    async def security_headers(request: Request, call_next: Callable[[Request], Awaitable[Response]]) -> Response:
        response = await call_next(request)
        response.headers.update(SECURITY_HEADERS)
        return response

    @app.exception_handler(StudioRefused)
    async def refused(_: Request, error: StudioRefused) -> JSONResponse:
        return JSONResponse({"detail": error.detail}, status_code=error.status)

    @app.exception_handler(StudioUnreachable)
    async def unreachable(_: Request, error: StudioUnreachable) -> JSONResponse:
        return JSONResponse({"detail": str(error)}, status_code=502)

    @app.get("/", include_in_schema=False)
    def home() -> RedirectResponse:
        return RedirectResponse("/static/player.html")

    @app.get("/api/players")
    def players() -> dict[str, Any]:
        return {"players": [{"id": pid, "nickname": nick} for pid, nick in DEMO_PLAYERS.items()], "chips": CHIPS}

    # What the page reads: the player's wallet and bets, the table as players see it, the bank, the seats, the chat.

    @app.get("/api/players/{name}")
    async def me(name: str) -> dict[str, Any]:
        pid = await player_id(name)
        wallet, history = await asyncio.gather(
            studio.get(f"/api/wallets/{pid}"), studio.get(f"/api/players/{pid}/bets")
        )
        return {"player": pid, "nickname": DEMO_PLAYERS[pid], "chips": CHIPS, "balance": wallet["balance"],
                "points": wallet["points"], "bets": history["bets"][-60:], "last_round": history["last_round"],
                "events": history["events"][-20:]}  # fmt: skip

    @app.get("/api/tables/{table}/public")
    async def public(table: str) -> Any:
        return await studio.get(f"/api/tables/{table}/public")

    @app.get("/api/tables/{table}/banker")
    async def banker(table: str) -> Any:
        try:
            return await studio.get(f"/api/tables/{table}/banker")
        except StudioRefused as error:
            if error.status != 409:
                raise
            return {"house_only": True, "detail": error.detail}  # a table the house always banks

    @app.get("/api/tables/{table}/chat")
    async def chat(table: str, after: int = 0) -> Any:
        return await studio.get(f"/api/tables/{table}/chat?after={max(after, 0)}&limit=50")

    # Bets. The game server makes each bet's id, so that a retry after a lost answer is not a second bet.

    @app.post("/api/tables/{table}/bets")
    async def place(table: str, body: Bets) -> dict[str, Any]:
        """The bets the player confirmed ("Deal"), one call each; each answers with the bet as placed (its `notice`
        says "maximum reached" when the stake was capped) or the studio's refusal."""
        pid = await player_id(body.player)
        answers: list[dict[str, Any]] = []
        for bet in body.bets:
            try:
                placed = await studio.post(f"/api/tables/{table}/bets", {"bet_id": f"{pid}-{uuid.uuid4().hex}",
                                           "player_id": pid, "bet_type": bet.bet_type, "stake": bet.stake})  # fmt: skip
                answers.append({"bet_type": bet.bet_type, "bets": placed["bets"]})
            except StudioRefused as error:
                answers.append({"bet_type": bet.bet_type, "refused": error.detail, "status": error.status})
        return {"answers": answers}

    @app.post("/api/tables/{table}/bets/{action}")
    async def bet_action(table: str, action: str, body: PlayerBody) -> Any:
        """undo (the last bet), double (every bet, once a round), repeat (the bets of the player's previous round)."""
        pid = await player_id(body.player)
        if action in ("undo", "double"):
            return await studio.post(f"/api/tables/{table}/bets/{action}", {"player_id": pid})
        if action != "repeat":
            raise HTTPException(404, f"no bet action {action!r}")
        current = (await studio.get(f"/api/tables/{table}/public"))["round"]
        bets = (await studio.get(f"/api/players/{pid}/bets"))["bets"]
        previous = [b["game_id"] for b in bets if b["table_id"] == table and b["status"] != "cancelled"
                    and (current is None or b["game_id"] != current["game_id"])]  # fmt: skip
        if not previous:
            raise HTTPException(409, "nothing to repeat: no bets of a previous round at this table")
        return await studio.post(
            f"/api/tables/{table}/bets/repeat", {"player_id": pid, "previous_game_id": previous[-1]}
        )

    # Seats (a table with seats): take one (no number: the first free), change, leave, pass the round.

    @app.get("/api/tables/{table}/seats")
    async def seats(table: str) -> Any:
        return await studio.get(f"/api/tables/{table}/seats")

    @app.post("/api/tables/{table}/seats/{action}")
    async def seat_action(table: str, action: str, body: SeatBody) -> Any:
        pid = await player_id(body.player)
        if action == "take":
            return await studio.post(f"/api/tables/{table}/seats",
                                     {"player_id": pid, "nickname": DEMO_PLAYERS[pid], "seat": body.seat})  # fmt: skip
        if action == "change":
            return await studio.post(f"/api/tables/{table}/seats/change", {"player_id": pid, "seat": body.seat})
        if action in ("leave", "pass"):
            return await studio.post(f"/api/tables/{table}/seats/{action}", {"player_id": pid})
        raise HTTPException(404, f"no seat action {action!r}")

    # The bank (a table with banker = "player"): take it, approve the round, leave it.

    @app.post("/api/tables/{table}/banker/{action}")
    async def bank_action(table: str, action: str, body: BankBody) -> Any:
        pid = await player_id(body.player)
        if action == "take":
            return await studio.post(
                f"/api/tables/{table}/banker", {"player_id": pid, "auto_approve": body.auto_approve}
            )
        if action in ("approve", "leave"):
            return await studio.post(f"/api/tables/{table}/banker/{action}", {"player_id": pid})
        raise HTTPException(404, f"no bank action {action!r}")

    @app.post("/api/tables/{table}/chat")
    async def say(table: str, body: ChatBody) -> Any:
        pid = await player_id(body.player)
        return await studio.post(f"/api/tables/{table}/chat", {"player_id": pid, "nickname": DEMO_PLAYERS[pid],
                                                               "text": body.text})  # fmt: skip

    # The results feed, relayed message by message: the page opens this after reading the public state, with
    # after = its seq, and misses nothing (each page has its own subscription to the studio's feed).

    @app.websocket("/ws/tables/{table}")
    async def feed(websocket: WebSocket, table: str) -> None:
        try:
            after = max(int(websocket.query_params.get("after", "0")), 0)
        except ValueError:
            await websocket.close(code=4400, reason="after must be a whole number")
            return
        await websocket.accept()
        try:
            async with websockets.connect(studio.feed_url(table, after),
                                          additional_headers=studio.feed_headers()) as upstream:  # fmt: skip
                relay = asyncio.create_task(_relay(upstream, websocket))
                page_gone = asyncio.create_task(websocket.receive_text())  # the page sends nothing: ends when it goes
                done, pending = await asyncio.wait({relay, page_gone}, return_when=asyncio.FIRST_COMPLETED)
                for task in pending:
                    task.cancel()
                    with contextlib.suppress(asyncio.CancelledError, Exception):
                        await task
                failure = relay.exception() if relay in done else None
                if failure is not None:
                    raise failure
        except (OSError, websockets.WebSocketException) as error:
            log.warning("results feed of %s: %s", table, error)
            with contextlib.suppress(RuntimeError, OSError):
                await websocket.close(code=1011, reason="the studio's results feed went away; reconnect")

    return app


async def _relay(upstream: websockets.ClientConnection, page: WebSocket) -> None:
    """Each message of the studio's feed to the page as it comes (the page reconnects with its last seq if it drops)."""
    async for message in upstream:
        await page.send_text(message if isinstance(message, str) else message.decode())
