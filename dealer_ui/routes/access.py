"""The access log (who signed in, failed, was locked, signed out, exported what, changed which account) for admin and
surveillance: read, verify and export it; nobody can change it. Admin unlocks an account or an address."""

from __future__ import annotations

import csv
import io
import json
from typing import Any, Literal

from fastapi import APIRouter, Depends, HTTPException, Query, Request
from fastapi.responses import Response
from pydantic import BaseModel, Field

from dealer_ui.auth import client_address, require
from dealer_ui.routes.lookup import studio_of
from studio import access as a
from studio.domain.chain import verify_chain
from studio.domain.roles import Role
from studio.users import Principal, UserError

router = APIRouter(prefix="/api", tags=["access"])
auditor = require(Role.SURVEILLANCE)  # and admin, who is admitted wherever people are
admin = require(Role.ADMIN)
PAGE = 1000
COLUMNS = ["seq", "at", "actor", "kind", "name", "address", "detail", "hash"]


def exported(request: Request, who: Principal, what: str, ident: str, table: str, file_format: str, count: int) -> None:
    """Put the export of a round or a shoe on the access log."""
    log = studio_of(request).users.access_log
    log.record(a.RECORDS_EXPORTED, str(who.actor), client_address(request), what=what, id=ident, table=table,
               format=file_format, records=count)  # fmt: skip


@router.get("/access-log")
def access_log(request: Request, after: int = Query(0, ge=0), limit: int = Query(200, ge=1, le=PAGE),
               _: Principal = Depends(auditor)) -> dict[str, Any]:  # fmt: skip
    """The access log's records after seq `after`, oldest first, `limit` at most (page on with the last seq)."""
    log = studio_of(request).users.access_log
    records = log.read(after, limit)
    return {"records": [a.describe_access(record) for record in records], "head": log.store.last_seq(a.ACCESS_STREAM)}


@router.get("/access-log/verify")
def verify_access_log(request: Request, _: Principal = Depends(auditor)) -> dict[str, Any]:
    """The hash chain of the access log, checked now (`studio log verify` checks it too)."""
    verdict = verify_chain(studio_of(request).users.access_log.read())
    return {"ok": verdict.ok, "records": verdict.records, "first_bad_seq": verdict.first_bad_seq,
            "reason": verdict.reason}  # fmt: skip


@router.get("/access-log/export", response_class=Response)
def export_access_log(request: Request, format: Literal["json", "csv"] = "json",
                      who: Principal = Depends(auditor)) -> Response:  # fmt: skip
    """The whole access log as a file; the export itself is logged first (so it is the file's last record)."""
    log = studio_of(request).users.access_log
    log.record(a.ACCESS_LOG_EXPORTED, str(who.actor), client_address(request), format=format)
    rows = [a.describe_access(record) for record in log.read()]
    if format == "csv":
        text = io.StringIO()
        writer = csv.DictWriter(text, fieldnames=COLUMNS, extrasaction="ignore")
        writer.writeheader()
        for row in rows:
            known = {key: row.get(key, "") for key in COLUMNS if key != "detail"}
            rest = {key: value for key, value in row.items() if key not in COLUMNS}
            writer.writerow({**known, "detail": json.dumps(rest, sort_keys=True) if rest else ""})
        body, media = text.getvalue(), "text/csv"
    else:
        body, media = json.dumps(rows, indent=2), "application/json"
    headers = {"Content-Disposition": f'attachment; filename="access-log.{format}"'}
    return Response(body, media_type=media, headers=headers)


class Unlock(BaseModel):
    address: str = Field(min_length=1, max_length=64)


@router.post("/accounts/{name}/unlock")
def unlock_account(name: str, request: Request, who: Principal = Depends(admin)) -> dict[str, Any]:
    """End an account's lockout (the same answer whether or not the account exists, or was locked)."""
    try:
        studio_of(request).users.unlock(name, by=str(who.actor), from_address=client_address(request))
    except UserError as error:
        raise HTTPException(422, str(error)) from None
    return {"status": "unlocked", "name": name}


@router.post("/addresses/unlock")
def unlock_address(body: Unlock, request: Request, who: Principal = Depends(admin)) -> dict[str, Any]:
    """End a client address's lockout (for sign-ins and API keys)."""
    studio_of(request).users.unlock(address=body.address, by=str(who.actor), from_address=client_address(request))
    return {"status": "unlocked", "address": body.address}
