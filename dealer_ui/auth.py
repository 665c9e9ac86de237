"""Who is asking: a session cookie or bearer token (people) or an API key (game servers), and what their role allows.

Unauthenticated → 401 (an ended session says so); authenticated with the wrong role → 403; a client address locked
for wrong API keys → 429; the accounts unreadable (database outage) → 503 with the reason, never 401: a console keeps
its session through an outage. Every command records the principal as its actor.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from fastapi import HTTPException, Request, WebSocket, WebSocketException
from starlette.concurrency import run_in_threadpool

from studio.domain.records import StoreError
from studio.domain.roles import Role
from studio.users import Locked, Principal, SessionEnded, UserStore

SESSION_COOKIE = "studio_session"
TRY_AGAIN_LATER = 1013  # WebSocket close code: the server cannot serve now; the client reconnects later


def client_address(connection: Request | WebSocket) -> str | None:
    """The client's address (behind a reverse proxy, uvicorn takes it from X-Forwarded-For when the proxy is trusted:
    `FORWARDED_ALLOW_IPS`)."""
    return connection.client.host if connection.client else None


def accounts_unavailable(error: StoreError) -> HTTPException:
    reason = str(error).splitlines()[0] if str(error) else type(error).__name__
    return HTTPException(503, f"the studio cannot read its accounts (database unavailable): {reason}",
                         headers={"Retry-After": "5"})  # fmt: skip


def locked_out(error: Locked) -> HTTPException:
    return HTTPException(429, str(error), headers={"Retry-After": str(error.seconds)})


def _users(request: Request) -> UserStore:
    users: UserStore = request.app.state.users
    return users


def principal_from(users: UserStore, headers: dict[str, str] | object, cookies: dict[str, str],
                   address: str | None = None, touch: bool = True) -> Principal | None:  # fmt: skip
    get = getattr(headers, "get")  # noqa: B009 - Starlette's Headers and a dict alike
    key = get("x-api-key")
    if key:
        return users.principal_for_api_key(key, address)
    authorization = get("authorization") or ""
    token = authorization[7:] if authorization.lower().startswith("bearer ") else cookies.get(SESSION_COOKIE)
    return users.principal_for_session(token, address, touch) if token else None


def current_principal(request: Request) -> Principal:
    try:
        principal = principal_from(_users(request), request.headers, request.cookies, client_address(request))
    except SessionEnded as ended:
        raise HTTPException(401, str(ended), headers={"WWW-Authenticate": "Bearer"}) from None
    except Locked as locked:
        raise locked_out(locked) from None
    except StoreError as error:
        raise accounts_unavailable(error) from None
    if principal is None:
        # A game server that sent a key is told its key is wrong; a person, to sign in.
        reason = "invalid API key" if request.headers.get("x-api-key") else "sign in first"
        raise HTTPException(401, reason, headers={"WWW-Authenticate": "Bearer"})
    return principal


def require(*roles: Role) -> Callable[..., Awaitable[Principal]]:
    """A dependency that admits only the given roles (admin is admitted everywhere people are)."""

    async def dependency(request: Request) -> Principal:
        # A game server's key the database confirmed a moment ago is known without I/O, here on the event loop;
        # anything else is read from the database off the loop.
        key = request.headers.get("x-api-key")
        principal = _users(request).confirmed_api_key(key, client_address(request)) if key else None
        if principal is None:
            principal = await run_in_threadpool(current_principal, request)
        allowed = set(roles) | ({Role.ADMIN} if Role.GAME_SERVER not in roles or len(roles) > 1 else set())
        if principal.role not in allowed:
            names = ", ".join(role.value for role in roles)
            raise HTTPException(403, f"{principal.role.value} may not do this (needs: {names})")
        return principal

    return dependency


def websocket_principal(websocket: WebSocket, touch: bool = True) -> Principal | None:
    """Who opens this WebSocket; None when nobody is (the route closes it 4401). A database outage closes it 1013
    (try again later) with the reason, so that the page keeps its session and reconnects. `touch=False`: a re-check
    of the session while the stream is open, which is no activity of the person's."""
    users: UserStore = websocket.app.state.users
    address = client_address(websocket)
    try:
        principal = principal_from(users, websocket.headers, websocket.cookies, address, touch)
        if principal is None and websocket.query_params.get("token"):
            token = websocket.query_params["token"]
            principal = (users.principal_for_session(token, address, touch)
                         or users.principal_for_api_key(token, address))  # fmt: skip
    except (SessionEnded, Locked):
        return None
    except StoreError as error:
        raise WebSocketException(TRY_AGAIN_LATER, accounts_unavailable(error).detail[:120]) from None
    return principal
