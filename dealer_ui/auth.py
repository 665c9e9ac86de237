"""Who is asking: a session cookie or bearer token (people) or an API key (game servers), and what their role allows.

Unauthenticated → 401; authenticated with the wrong role → 403. Every command records the principal as its actor.
"""

from __future__ import annotations

from collections.abc import Callable

from fastapi import Depends, HTTPException, Request, WebSocket

from studio.domain.roles import Role
from studio.users import Principal, UserStore

SESSION_COOKIE = "studio_session"


def _users(request: Request) -> UserStore:
    users: UserStore = request.app.state.users
    return users


def principal_from(users: UserStore, headers: dict[str, str] | object, cookies: dict[str, str]) -> Principal | None:
    get = getattr(headers, "get")  # noqa: B009 - Starlette's Headers and a dict alike
    key = get("x-api-key")
    if key:
        return users.principal_for_api_key(key)
    authorization = get("authorization") or ""
    token = authorization[7:] if authorization.lower().startswith("bearer ") else cookies.get(SESSION_COOKIE)
    return users.principal_for_session(token) if token else None


def current_principal(request: Request) -> Principal:
    principal = principal_from(_users(request), request.headers, request.cookies)
    if principal is None:
        # A game server that sent a key is told its key is wrong; a person, to sign in.
        reason = "invalid API key" if request.headers.get("x-api-key") else "sign in first"
        raise HTTPException(401, reason, headers={"WWW-Authenticate": "Bearer"})
    return principal


def require(*roles: Role) -> Callable[..., Principal]:
    """A dependency that admits only the given roles (admin is admitted everywhere people are)."""

    def dependency(principal: Principal = Depends(current_principal)) -> Principal:
        allowed = set(roles) | ({Role.ADMIN} if Role.GAME_SERVER not in roles or len(roles) > 1 else set())
        if principal.role not in allowed:
            names = ", ".join(role.value for role in roles)
            raise HTTPException(403, f"{principal.role.value} may not do this (needs: {names})")
        return principal

    return dependency


def websocket_principal(websocket: WebSocket) -> Principal | None:
    users: UserStore = websocket.app.state.users
    principal = principal_from(users, websocket.headers, websocket.cookies)
    if principal is None and websocket.query_params.get("token"):
        principal = users.principal_for_session(websocket.query_params["token"]) or users.principal_for_api_key(
            websocket.query_params["token"]
        )
    return principal
