"""Views of a logged table for people: one round or one shoe of records, readable lines, and flat rows for export."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from studio.domain.records import Record


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


_INSPECTIONS = frozenset({"DecksInspected", "DeckReplaced"})  # of a shoe's decks, before its shuffle and after its end


def shoe_records(records: Iterable[Record], shoe: int) -> list[Record]:
    """The records of one shoe, from its shuffle to its summary, with the inspections of its decks before and after."""
    selected: list[Record] = []
    inside = False
    for record in records:
        if record.kind == "ShuffleConfirmed":
            if record.data.get("shoe", 0) > shoe:
                break
            inside = record.data.get("shoe") == shoe
        if inside or (record.kind in _INSPECTIONS and record.data.get("shoe") == shoe):
            selected.append(record)
        if record.kind == "ShoeEnded":
            inside = False
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


class RoundIndex:
    """Every round of one table, summarised for surveillance search, kept up to date from the log incrementally."""

    def __init__(self, table: str) -> None:
        self.table = table
        self.seq = 0  # the last record folded in
        self.rounds: list[dict[str, Any]] = []
        self._open: dict[str, Any] | None = None
        self._shoe = 0
        self._dealer: str | None = None

    def update(self, records: Iterable[Record]) -> None:
        for record in records:
            self._fold(record)
            self.seq = record.seq

    def _fold(self, record: Record) -> None:
        data, kind = record.data, record.kind
        if kind == "ShuffleConfirmed":
            self._shoe = data["shoe"]
            self._dealer = self._dealer or data["dealer"]
        elif kind == "DealerChanged":
            self._dealer = data["dealer"]
        elif kind == "BettingOpened":
            self._open = {
                "table": self.table, "game_id": data["game_id"], "round": data["round"], "shoe": self._shoe,
                "dealer": self._dealer, "opened_at": record.at.isoformat(), "closed_at": None, "status": "in_play",
                "corrected": False, "error": False, "winner": None, "player": [], "banker": [],
                "player_total": None, "banker_total": None, "void_reason": None, "first_seq": record.seq,
            }  # fmt: skip
            self.rounds.append(self._open)
        elif self._open is not None:
            if kind == "TableSuspended":
                self._open["error"] = True
            elif kind == "CardCorrected":
                self._open["corrected"] = True
            elif kind == "RoundCompleted":
                self._open.update(status="completed", closed_at=record.at.isoformat(), winner=data["winner"],
                                  player=data["player"], banker=data["banker"], player_total=data["player_total"],
                                  banker_total=data["banker_total"], player_pair=data["player_pair"],
                                  banker_pair=data["banker_pair"], natural=data["natural"])  # fmt: skip
                self._open = None
            elif kind == "RoundVoided":
                self._open.update(status="voided", closed_at=record.at.isoformat(), void_reason=data["reason"])
                self._open = None

    def shoe_results(self, shoe: int, up_to: str | None = None) -> list[dict[str, Any]]:
        """The completed rounds of a shoe (up to and including round `up_to`): what the roads are drawn from."""
        last = self.find(up_to) if up_to is not None else None
        return [r for r in self.rounds if r["shoe"] == shoe and r["status"] == "completed"
                and (last is None or r["first_seq"] <= last["first_seq"])]  # fmt: skip

    def find(self, game_id: str) -> dict[str, Any] | None:
        return next((summary for summary in self.rounds if summary["game_id"] == game_id), None)

    def search(self, shoe: int | None = None, dealer: str | None = None, since: str | None = None,
               until: str | None = None, status: str | None = None, game: str | None = None,
               ) -> list[dict[str, Any]]:  # fmt: skip
        """Newest first. `status` is completed, voided, in_play, corrected or error; times are ISO-8601 UTC; `game` is
        the start of a game number, whatever the case ("T1-20240501-12" finds every round of T1 opened that hour)."""
        found = []
        prefix = game.strip().casefold() if game else ""
        for summary in reversed(self.rounds):
            if prefix and not summary["game_id"].casefold().startswith(prefix):
                continue
            if shoe is not None and summary["shoe"] != shoe:
                continue
            if dealer and dealer.lower() not in (summary["dealer"] or "").lower():
                continue
            if since and summary["opened_at"] < since:
                continue
            if until and summary["opened_at"] > until:
                continue
            if status in ("corrected", "error"):
                if not summary[status]:
                    continue
            elif status and summary["status"] != status:
                continue
            found.append(summary)
        return found
