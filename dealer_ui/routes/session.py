"""Signing in and out. Too many failed sign-ins of a name (or from an address) lock it for a while: 429, saying
until when, the same whether or not an account has that name."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, HTTPException, Request, Response
from pydantic import BaseModel, Field

from dealer_ui.auth import SESSION_COOKIE, accounts_unavailable, client_address, current_principal, locked_out
from dealer_ui.routes.lookup import studio_of
from dealer_ui.runtime import DEMO_ACCOUNTS
from studio.domain.records import StoreError
from studio.users import Locked, Principal

router = APIRouter(prefix="/api", tags=["session"])


class Credentials(BaseModel):
    name: str = Field(min_length=1, max_length=64)
    password: str = Field(min_length=1, max_length=256)


@router.post("/login", responses={401: {"description": "wrong name or password"},
                                   429: {"description": "locked after too many failures: says until when"},
                                   503: {"description": "the accounts cannot be read (database outage)"}})  # fmt: skip
def login(credentials: Credentials, request: Request, response: Response) -> dict[str, Any]:
    users = studio_of(request).users
    try:
        signed_in = users.sign_in(credentials.name, credentials.password, client_address(request))
    except Locked as locked:
        raise locked_out(locked) from None
    except StoreError as error:
        raise accounts_unavailable(error) from None
    if signed_in is None:
        raise HTTPException(401, "wrong name or password")
    principal, token = signed_in
    response.set_cookie(SESSION_COOKIE, token, httponly=True, samesite="strict", secure=users.policy.https)
    return {"token": token, "name": principal.name, "role": principal.role.value}


@router.post("/logout")
def logout(request: Request, response: Response) -> dict[str, str]:
    authorization = request.headers.get("authorization") or ""
    bearer = authorization[7:] if authorization.lower().startswith("bearer ") else None
    token = bearer or request.cookies.get(SESSION_COOKIE)  # the session that asks, as `current_principal` reads it
    users = studio_of(request).users
    if token:
        users.close_session(token, client_address(request))
    response.delete_cookie(SESSION_COOKIE, httponly=True, samesite="strict", secure=users.policy.https)
    return {"status": "signed out"}


@router.get("/studio")
def studio_info(request: Request) -> dict[str, Any]:
    """Public: what the sign-in page needs before anyone signs in (the demo accounts only in demo mode)."""
    studio = studio_of(request)
    demo = bool(studio.settings.demo)
    accounts = [{"name": n, "password": p, "role": r.value} for n, r, p in DEMO_ACCOUNTS] if demo else []
    return {"demo": demo, "demo_accounts": accounts, "tables": list(studio.tables)}


@router.get("/me")
def me(request: Request, principal: Principal = Depends(current_principal)) -> dict[str, Any]:
    return {"name": principal.name, "role": principal.role.value, "demo": studio_of(request).settings.demo}
