"""Camera evidence (staff only: pit boss, surveillance, admin): the crop of a logged camera read and the frame's
boxes, each served only once its SHA-256 matches the one logged with the read (`dealer_ui.evidence`).

The dealer is not admitted: evidence is for those who decide on a suspended read and those who review the log, and
the dealer on duty never decides on their own table's errors.
"""

from __future__ import annotations

import json
from typing import Any

from fastapi import APIRouter, Depends, HTTPException, Path, Request
from fastapi.responses import Response

from dealer_ui import evidence
from dealer_ui.auth import require
from dealer_ui.routes.lookup import runtime_of, studio_of
from dealer_ui.routes.problems import MAX_ID
from studio.domain.roles import Role
from studio.users import Principal

router = APIRouter(prefix="/api/evidence", tags=["evidence"])
staff = require(Role.PIT_BOSS, Role.SURVEILLANCE)  # and admin


def _message(description: str) -> dict[str, Any]:
    return {"description": description,
            "content": {"application/json": {"schema": {"type": "object", "properties": {"detail": {"type": "string"}},
                                                         "required": ["detail"]}}}}  # fmt: skip


REFUSALS: dict[int | str, dict[str, Any]] = {
    403: _message("a role that may not see evidence, or a logged path outside the cameras' evidence folders"),
    404: _message("no such table or seq, no evidence logged with that read, or its file is missing"),
    409: _message("the file was altered: its SHA-256 differs from the one in the log"),
}
CROP: dict[int | str, dict[str, Any]] = {
    200: {"description": "the crop (PNG), exactly the bytes whose SHA-256 the log holds (also in X-Evidence-SHA256)",
          "content": {"image/png": {"schema": {"type": "string", "format": "binary"}}}},
    **REFUSALS,
}  # fmt: skip
BOXES: dict[int | str, dict[str, Any]] = {
    200: {"description": "the frame's size and every card box read in it, as the camera wrote them beside the crop",
          "content": {"application/json": {"schema": {"type": "object"}}}},
    **REFUSALS,
}  # fmt: skip
SeqPath = Path(ge=1, le=MAX_ID, description="the seq of the read's record in the table's log")


def _locate(request: Request, table: str, seq: int) -> evidence.Evidence:
    runtime = runtime_of(request, table)  # 404 for an unknown table
    record = next(iter(studio_of(request).store.read(table, after=seq - 1)), None)
    if record is None or record.seq != seq:
        raise HTTPException(404, f"table {table} has no record {seq}")
    try:
        return evidence.locate(table, record, evidence.roots_of(runtime.sources))
    except evidence.EvidenceProblem as problem:
        raise HTTPException(problem.status, problem.message) from None


@router.get("/{table}/{seq}", response_class=Response, responses=CROP)
def crop(table: str, request: Request, seq: int = SeqPath, _: Principal = Depends(staff)) -> Response:
    """The camera's crop of the card read at `seq`, verified against the log."""
    found = _locate(request, table, seq)
    try:
        content = evidence.crop_bytes(found)
    except evidence.EvidenceProblem as problem:
        raise HTTPException(problem.status, problem.message) from None
    headers = {"X-Evidence-SHA256": found.crop_sha256, "Cache-Control": "no-store"}
    return Response(content, media_type="image/png", headers=headers)


@router.get("/{table}/{seq}/boxes", response_class=Response, responses=BOXES)
def boxes(table: str, request: Request, seq: int = SeqPath, _: Principal = Depends(staff)) -> Response:
    """The frame's size and card boxes kept beside the crop of the read at `seq`, verified against the log."""
    found = _locate(request, table, seq)
    try:
        content = evidence.boxes_bytes(found)
        json.loads(content)
    except evidence.EvidenceProblem as problem:
        raise HTTPException(problem.status, problem.message) from None
    except ValueError:
        raise HTTPException(409, f"the boxes file of seq {seq} is not JSON, though its hash matches") from None
    headers = {"X-Evidence-SHA256": found.boxes_sha256 or "", "Cache-Control": "no-store"}
    return Response(content, media_type="application/json", headers=headers)
