"""How routes refuse input, in terms the OpenAPI document states (a schema check of the API holds them to it).

- Ids and sequence numbers are SQLite INTEGERs (64-bit): a query parameter past `MAX_ID` is a 422, never a database
  overflow turned into a 500.
- A 422 carries FastAPI's list of field errors, or, from a route that reads its fields' content (a card code, an
  ISO-8601 time, a chat message), one message naming what it refuses. Such routes declare `BAD_INPUT`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

MAX_ID = 2**63 - 1


def after_of(query: Mapping[str, str]) -> int | None:
    """A WebSocket's `?after=` (0 when absent), or None when it is not a whole number from 0 to `MAX_ID` (the route
    then closes with 4400)."""
    try:
        after = int(query.get("after", "0"))
    except ValueError:
        return None
    return after if 0 <= after <= MAX_ID else None


BAD_AFTER = f"after must be a whole number from 0 to {MAX_ID}"


class FieldError(BaseModel):
    loc: list[str | int]
    msg: str
    type: str


class BadInput(BaseModel):
    detail: list[FieldError] | str


BAD_INPUT: dict[int | str, dict[str, Any]] = {
    422: {"model": BadInput, "description": "malformed fields (a list of field errors) or refused content (a message)"}
}
