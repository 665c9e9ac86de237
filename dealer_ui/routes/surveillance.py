"""Surveillance (read-only): search rounds, a round's whole timeline, the hash-chain verdict, exports, recall."""

from __future__ import annotations

import csv
import io
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from fastapi import APIRouter, Depends, HTTPException, Query, Request
from fastapi.responses import Response

from dealer_ui import evidence
from dealer_ui.auth import require
from dealer_ui.routes.access import exported
from dealer_ui.routes.lookup import runtime_of, studio_of
from dealer_ui.routes.problems import BAD_INPUT
from dealer_ui.runtime import Studio
from studio.domain.audit import audit
from studio.domain.chain import canonical_json
from studio.domain.log_views import CSV_COLUMNS, RoundIndex, as_row, round_records, shoe_records
from studio.domain.records import Record
from studio.domain.roles import Role
from studio.users import Principal

router = APIRouter(prefix="/api/surveillance", tags=["surveillance"])
watcher = require(Role.SURVEILLANCE, Role.PIT_BOSS)
EXPORT: dict[int | str, dict[str, Any]] = {
    200: {
        "description": "the records, as a JSON array or as CSV (`format`)",
        "content": {"application/json": {"schema": {"type": "array", "items": {"type": "object"}}},
                    "text/csv": {"schema": {"type": "string"}}},
    }
}  # fmt: skip


def _index(request: Request, table: str) -> RoundIndex:
    runtime_of(request, table)  # 404 for an unknown table
    return studio_of(request).round_index(table)


def _time(text: str | None, name: str) -> str | None:
    if not text:
        return None
    try:
        at = datetime.fromisoformat(text)
    except ValueError:
        raise HTTPException(422, f"{name}: {text!r} is not an ISO-8601 time") from None
    return (at if at.tzinfo else at.replace(tzinfo=UTC)).astimezone(UTC).isoformat()


def _public(summary: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in summary.items() if key != "first_seq"}


@router.get("/rounds", responses=BAD_INPUT)
def search_rounds(
    request: Request,
    *,
    game: str | None = Query(None, max_length=64, description="the start of a game number (a prefix is enough)"),
    table: str | None = Query(None, max_length=64),
    shoe: int | None = Query(None, ge=1),
    dealer: str | None = Query(None, max_length=64),
    since: str | None = Query(None, max_length=40, description="ISO-8601, UTC if no zone"),
    until: str | None = Query(None, max_length=40, description="ISO-8601, UTC if no zone"),
    status: Literal["completed", "voided", "in_play", "corrected", "error"] | None = None,
    limit: int = Query(100, ge=1, le=1000),
    _: Principal = Depends(watcher),
) -> dict[str, Any]:
    studio = studio_of(request)
    tables = [table] if table else list(studio.tables)
    found: list[dict[str, Any]] = []
    for name in tables:
        found += _index(request, name).search(shoe, dealer, _time(since, "since"), _time(until, "until"), status, game)
    found.sort(key=lambda summary: summary["opened_at"], reverse=True)
    return {"rounds": [_public(summary) for summary in found[:limit]]}


def _locate(studio: Studio, game_id: str) -> tuple[str, dict[str, Any]]:
    for table in studio.tables:
        summary = studio.round_index(table).find(game_id)
        if summary is not None:
            return table, summary
    raise HTTPException(404, f"no round {game_id!r}")


def _timeline(records: list[Record], table: str, evidence_roots: list[Path]) -> list[dict[str, Any]]:
    """Each record; a camera read also gets `evidence`: its crop's url and whether the file matches the log."""
    return [{"seq": r.seq, "at": r.at.isoformat(), "actor": r.actor, "kind": r.kind, "data": dict(r.data),
             "raw": r.raw, "evidence": evidence.status(table, r, evidence_roots)} for r in records]  # fmt: skip


@router.get("/rounds/{game_id}")
def round_timeline(game_id: str, request: Request, _: Principal = Depends(watcher)) -> dict[str, Any]:
    studio = studio_of(request)
    table, summary = _locate(studio, game_id)
    records = round_records(studio.store.read(table, after=summary["first_seq"] - 1), game_id)
    roots = evidence.roots_of(studio.tables[table].sources)
    return {"round": _public(summary), "timeline": _timeline(records, table, roots)}


@router.get("/tables/{table}/verify")
def verify(table: str, request: Request, _: Principal = Depends(watcher)) -> dict[str, Any]:
    runtime_of(request, table)  # 404 for an unknown table
    studio = studio_of(request)
    verdict = audit(studio.store.read(table))
    return {"table": table, "ok": verdict.ok, "records": verdict.records, "rounds": verdict.rounds,
            "first_bad_seq": verdict.first_bad_seq, "reason": verdict.reason}  # fmt: skip


@router.get("/tables/{table}/recent")
def recent(table: str, request: Request, _: Principal = Depends(watcher)) -> dict[str, Any]:
    return {"rounds": [_public(summary) for summary in _index(request, table).search()[:10]]}


def _export(records: list[Record], name: str, file_format: str) -> Response:
    rows = [as_row(record, canonical_json(dict(record.data))) for record in records]
    if file_format == "csv":
        text = io.StringIO()
        writer = csv.DictWriter(text, fieldnames=CSV_COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
        body, media = text.getvalue(), "text/csv"
    else:
        for row in rows:
            row["data"] = json.loads(row["data"])
        body, media = json.dumps(rows, indent=2), "application/json"
    headers = {"Content-Disposition": f'attachment; filename="{name}.{file_format}"'}
    return Response(body, media_type=media, headers=headers)


@router.get("/rounds/{game_id}/export", response_class=Response, responses=EXPORT)
def export_round(
    game_id: str, request: Request, format: Literal["json", "csv"] = "json", who: Principal = Depends(watcher)
) -> Response:
    studio = studio_of(request)
    table, summary = _locate(studio, game_id)
    records = round_records(studio.store.read(table, after=summary["first_seq"] - 1), game_id)
    exported(request, who, "round", game_id, table, format, len(records))  # on the access log before it is sent
    return _export(records, game_id, format)


@router.get("/tables/{table}/shoes/{shoe}/export", response_class=Response, responses=EXPORT)
def export_shoe(
    table: str, shoe: int, request: Request, format: Literal["json", "csv"] = "json", who: Principal = Depends(watcher)
) -> Response:
    runtime_of(request, table)  # 404 for an unknown table
    studio = studio_of(request)
    records = shoe_records(studio.store.read(table), shoe)
    if not records:
        raise HTTPException(404, f"no shoe {shoe} at table {table}")
    exported(request, who, "shoe", str(shoe), table, format, len(records))  # on the access log before it is sent
    return _export(records, f"{table}-shoe-{shoe}", format)
