"""Log lines for what an operator watching the studio's log needs to see: a table suspended and why, resumed, a round
voided and by whom, a card corrected, a table closed or opened, an early shuffle ordered, decks inspected or replaced,
a shoe ended (why, and its composition check), each round's result. One line per logged record of those kinds, with
`table`, `game_id` (when the record names a round), `actor` and `seq` as structured fields (`extra`), so a JSON log can
be searched by table or game number.

These lines describe; the event log proves. Card-by-card detail stays in the log (`studio log show`) and in the
metrics; source state changes are logged by the supervisor.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from studio.domain.records import Record
from studio.table_service import Logged

log = logging.getLogger(__name__)


def observe(table_id: str, logged: Sequence[Logged]) -> None:
    """Studio's hook for logged records. Never raises: the records are durable already, whatever happens here."""
    for entry in logged:
        try:
            line = describe(entry.record)
            if line is not None:
                level, message = line
                log.log(level, message, extra=fields(table_id, entry.record))
        except Exception:
            log.exception("could not describe record %d of table %s", entry.record.seq, table_id)


def fields(table_id: str, record: Record) -> dict[str, Any]:
    extra: dict[str, Any] = {"table": table_id, "actor": record.actor, "seq": record.seq}
    if record.data.get("game_id"):
        extra["game_id"] = record.data["game_id"]
    return extra


def describe(record: Record) -> tuple[int, str] | None:
    """(level, message) for a record worth a log line; None for the others (cards, bets closing, burns, ...)."""
    data = record.data
    match record.kind:
        case "TableSuspended":
            card = f" (card {data['card']} from {data['source']})" if data.get("card") else ""
            return logging.WARNING, f"table {record.stream} suspended: {data['reason']}: {data['detail']}{card}"
        case "PlayContinued":
            return logging.INFO, f"table {record.stream} resumed by {data['by']}: {data['reason'] or 'no reason given'}"
        case "RoundVoided":
            return logging.WARNING, f"round {data['game_id']} voided by {data['by']}: {data['reason']}"
        case "CardCorrected":
            where = "the waiting read" if data["position"] == 0 else f"card {data['position']}"
            return logging.WARNING, (
                f"table {record.stream}: {where} corrected from {data['original']} to {data['corrected']} "
                f"by {data['by']}: {data['reason']}"
            )
        case "TableClosed":
            return logging.INFO, f"table {record.stream} closed by {data['by']}: {data['reason']}"
        case "TableOpened":
            return logging.INFO, f"table {record.stream} opened by {data['by']}"
        case "LogOutage":
            return logging.WARNING, (
                f"table {record.stream}: the log could not be written from {data['since']} until {data['until']} "
                f"({data['refused']} commands refused): {data['reason']}"
            )
        case "DealerChanged":
            return logging.INFO, f"table {record.stream}: dealer {data['dealer']} took over"
        case "ShuffleOrdered":
            return logging.INFO, (
                f"table {record.stream}: early shuffle of shoe {data['shoe']} ordered by {data['by']}: {data['reason']}"
            )
        case "DecksInspected":
            return logging.INFO, (
                f"table {record.stream}: decks of shoe {data['shoe']} inspected ({data['stage']}) by {data['dealer']}, "
                f"approved by {data['approved_by']}"
            )
        case "DeckReplaced":
            return logging.WARNING, (
                f"table {record.stream}: deck {data['deck']} replaced by {data['by']} at the {data['stage']} "
                f"inspection of shoe {data['shoe']}: {data['reason']}"
            )
        case "ShoeEnded":
            ok = data["composition_ok"]
            check = "composition checked" if ok else f"composition WRONG: {data['composition_detail']}"
            why = " (early shuffle)" if data.get("reason") == "early_shuffle" else ""
            return logging.INFO if ok else logging.ERROR, (
                f"table {record.stream}: shoe {data['shoe']} ended{why} after {data['rounds']} rounds "
                f"({data['voids']} voided, {data['corrections']} corrections); {check}"
            )
        case "RoundCompleted":
            outcome = "tie" if data["winner"] == "tie" else f"{data['winner']} wins"
            totals = f"player {data['player_total']}, banker {data['banker_total']}"
            return logging.INFO, f"round {data['game_id']}: {outcome} ({totals})"
    return None
