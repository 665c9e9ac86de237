"""Views of a logged table for people: one round or one shoe of records, readable lines, and flat rows for export."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from studio.ports import Record


def round_records(records: Iterable[Record], game_id: str) -> list[Record]:
    """The records of one round, from betting opened to its result or void (with any error in between)."""
    selected: list[Record] = []
    number: int | None = None
    for record in records:
        if number is None:
            if record.kind == "BettingOpened" and record.data.get("game_id") == game_id:
                number = record.data["round"]
                selected.append(record)
            continue
        selected.append(record)
        if record.kind in ("RoundCompleted", "RoundVoided") and record.data.get("round") == number:
            break
    return selected


def shoe_records(records: Iterable[Record], shoe: int) -> list[Record]:
    """The records of one shoe, from its shuffle to its summary."""
    selected: list[Record] = []
    inside = False
    for record in records:
        if record.kind == "ShuffleConfirmed":
            inside = record.data.get("shoe") == shoe
        if inside:
            selected.append(record)
            if record.kind == "ShoeEnded":
                break
    return selected


def _fields(data: Mapping[str, Any]) -> str:
    return " ".join(f"{key}={value}" for key, value in data.items() if value is not None)


def describe(record: Record) -> str:
    """One readable line: seq, UTC time, actor, event and its fields, raw device data if any."""
    raw = f"  raw={record.raw}" if record.raw else ""
    at = f"{record.at:%Y-%m-%d %H:%M:%S.%f}Z"
    return f"{record.seq:>6}  {at}  {record.actor:<18} {record.kind:<22} {_fields(record.data)}{raw}"


CSV_COLUMNS = ("stream", "seq", "at", "actor", "kind", "data", "raw", "prev_hash", "hash")


def as_row(record: Record, data_json: str) -> dict[str, Any]:
    return {
        "stream": record.stream,
        "seq": record.seq,
        "at": record.at.isoformat(),
        "actor": record.actor,
        "kind": record.kind,
        "data": data_json,
        "raw": record.raw or "",
        "prev_hash": record.prev_hash,
        "hash": record.hash,
    }
