"""The results feed for game servers: which logged facts are published, and in what shape.

Rules held here:
- A game server sees the round opened (game number, betting deadline), betting closed, each card as dealt, the
  result only once final, voids and corrections. Burns, suspensions and everything internal stay in the studio.
- Each message carries the table and the seq of its record in the table's log: numbers only grow (with gaps where
  internal facts were logged), so a client that reconnects asks for what came after the last number it saw and
  the studio serves it from the log, without loss.
- Every result and void carries `log_head`, the seq and hash of its own record: each game server holds witnesses of
  the table's hash chain that the studio cannot take back (`studio log verify --witness`).
"""

from __future__ import annotations

from typing import Any

from studio.domain.records import Record

FEED_KINDS = {
    "BettingOpened": "round_opened",
    "BettingClosed": "betting_closed",
    "CardDealt": "card",
    "RoundCompleted": "result",
    "RoundVoided": "void",
    "CardCorrected": "correction",
}

_FIELDS = {
    "round_opened": ("round", "game_id", "opened_at", "closes_at"),
    "betting_closed": ("round", "game_id"),
    "card": ("round", "game_id", "position", "side", "card"),
    "result": ("round", "game_id", "player", "banker", "player_total", "banker_total", "winner", "natural",
               "player_pair", "banker_pair", "last_hand"),
    "void": ("round", "game_id", "reason"),
    "correction": ("round", "position", "original", "corrected", "reason"),
}  # fmt: skip


def feed_message(record: Record) -> dict[str, Any] | None:
    """The feed message for a logged record, or None if game servers do not see it."""
    kind = FEED_KINDS.get(record.kind)
    if kind is None:
        return None
    message: dict[str, Any] = {"table": record.stream, "seq": record.seq, "type": kind, "at": record.at.isoformat()}
    message.update({name: record.data.get(name) for name in _FIELDS[kind]})
    if kind in ("result", "void"):
        message["log_head"] = {"seq": record.seq, "hash": record.hash}
    return message


def compact_roads(roads: dict[str, Any]) -> dict[str, Any]:
    """The roads of `studio.domain.roads` (to_json) in the feed's compact form, as a result message carries them: the
    bead plate as a string ("BPPT"); the big road as columns of [winner, ties] cells; each derived road as a string of
    marks, r for red and b for blue; the ask road as those letters per derived road ("-" for no mark); the counts."""
    letter = {"red": "r", "blue": "b", None: "-"}
    derived = ("big_eye_boy", "small_road", "cockroach_pig")
    return {
        "bead_plate": "".join(roads["bead_plate"]),
        "big_road": [[[cell["winner"], cell["ties"]] for cell in column] for column in roads["big_road"]],
        **{name: "".join(letter[mark] for mark in roads[name]) for name in derived},
        "ask": {side: "".join(letter[roads["ask"][side][name]] for name in derived) for side in ("banker", "player")},
        "counts": roads["counts"],
    }


SUSPENDS = "TableSuspended"
RESOLVES = frozenset({"PlayContinued", "RoundVoided"})  # the pit boss's decisions that end a suspension


class PublicationFrontier:
    """How far a table's log may be published: up to its last record, except while the table is suspended, when
    what was logged from the suspension on is held back until the pit boss resolves it (then all of it is released,
    in order). Fed the log's records in order, by anyone reading it: the table itself, or a feed server."""

    __slots__ = ("held_from", "published")

    def __init__(self) -> None:
        self.published = 0  # the seq up to which records may be published
        self.held_from = 0  # the seq of the suspension that holds the rest back; 0 when nothing is held

    def advance(self, seq: int, kind: str) -> None:
        if self.held_from:
            if kind in RESOLVES:
                self.held_from, self.published = 0, seq
        elif kind == SUSPENDS:
            self.held_from = seq
        else:
            self.published = seq
