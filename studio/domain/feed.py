"""The results feed for game servers: which logged facts are published, and in what shape.

Rules held here:
- A game server sees the round opened (game number, betting deadline), betting reopened after an error (its new
  deadline), betting closed, each card as dealt, the result only once final, voids and corrections; and the table
  itself: suspended and resumed, a shoe started and ended, the last hand announced, the table closed and opened,
  the dealer changed; and the seats (seed 004): taken, changed, left, a round passed or sat out, each by seat
  number and nickname only, never the player's id or their game server (another operator's player ids are not a
  game server's to see). Burns, raw reads, staff names and everything internal stay in the studio. Seat messages
  are not chat notices: the table's seats show them.
- Each message carries the table and the seq of its record in the table's log: numbers only grow (with gaps where
  internal facts were logged), so a client that reconnects asks for what came after the last number it saw and
  the studio serves it from the log, without loss.
- A suspension is announced at once (`table_suspended`, with a message for players, never the card or the read);
  what is logged after it waits for the pit boss's decision and is then released in log order, `table_resumed`
  among it (seed 002: players are told that a problem is under investigation).
- Every result and void carries `log_head`, the seq and hash of its own record: each game server holds witnesses of
  the table's hash chain that the studio cannot take back (`studio log verify --witness`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from studio.domain.records import Record

FEED_KINDS = {
    "BettingOpened": "round_opened",
    "BettingClosed": "betting_closed",
    "BettingReopened": "betting_reopened",
    "CardDealt": "card",
    "RoundCompleted": "result",
    "RoundVoided": "void",
    "CardCorrected": "correction",
    "TableSuspended": "table_suspended",
    "TableResumed": "table_resumed",
    "CutCardPlaced": "shoe_started",
    "ShoeEnded": "shoe_ended",
    "CutCardAppeared": "last_hand",
    "TableClosed": "table_closed",
    "TableOpened": "table_opened",
    "DealerChanged": "dealer_changed",
    "SeatTaken": "seat_taken",
    "SeatChanged": "seat_changed",
    "SeatLeft": "seat_left",
    "RoundPassed": "round_passed",
    "PlayerSatOut": "sat_out",
}

_FIELDS = {
    "round_opened": ("round", "game_id", "opened_at", "closes_at"),
    "betting_closed": ("round", "game_id"),
    "betting_reopened": ("round", "game_id", "closes_at"),
    "card": ("round", "game_id", "position", "side", "card"),
    "result": ("round", "game_id", "player", "banker", "player_total", "banker_total", "winner", "natural",
               "player_pair", "banker_pair", "last_hand"),
    "void": ("round", "game_id", "reason"),
    "correction": ("round", "game_id", "position", "original", "corrected", "reason"),
    "table_suspended": ("game_id",),
    "table_resumed": ("decision",),
    "shoe_started": ("shoe", "decks"),
    "shoe_ended": ("shoe", "rounds", "voids"),
    "table_closed": (),
    "table_opened": (),
    "seat_taken": ("seat", "nickname", "first_round"),
    "seat_changed": ("from_seat", "seat", "nickname"),
    "seat_left": ("seat", "nickname"),
    "round_passed": ("round", "game_id", "seat", "nickname"),
    "sat_out": ("round", "game_id", "seat", "nickname"),
}  # fmt: skip

# A suspension's reason (`SuspensionReason` values) as the category players are told, never the detail.
SUSPENSION_CATEGORIES = {
    "card_while_betting": "procedure",
    "card_not_due": "procedure",
    "dealer_declared": "procedure",
    "duplicate_read": "card_reading",
    "unreadable_card": "card_reading",
    "too_many_copies": "card_reading",
    "sources_disagree": "card_reading",
    "source_failed": "equipment",
}
UNDER_INVESTIGATION = (
    "A problem at the table is under investigation. The round resumes shortly, or is voided and refunded."
)
CLOSED_MESSAGE = "The table is closed for now."


def _suspended(data: Mapping[str, Any]) -> dict[str, Any]:
    return {"reason": SUSPENSION_CATEGORIES.get(data.get("reason", ""), "other"), "message": UNDER_INVESTIGATION}


def _shoe_started(data: Mapping[str, Any]) -> dict[str, Any]:
    return {"cut_position": data["cards_in_front"]}  # cards dealt before the cut card comes out


def _shoe_ended(data: Mapping[str, Any]) -> dict[str, Any]:
    return {"reason": data.get("reason") or "cut_card"}


def _last_hand(data: Mapping[str, Any]) -> dict[str, Any]:
    return {"round": data["last_round"]}  # the round after which the shoe ends


def _dealer(data: Mapping[str, Any]) -> dict[str, Any]:
    return {"dealer": data.get("display_name")}  # the display name only: None until the account has one


_EXTRA: dict[str, Callable[[Mapping[str, Any]], dict[str, Any]]] = {
    "table_suspended": _suspended,
    "shoe_started": _shoe_started,
    "shoe_ended": _shoe_ended,
    "last_hand": _last_hand,
    "table_closed": lambda data: {"message": CLOSED_MESSAGE},
    "dealer_changed": _dealer,
}
TABLE_NOTICES = frozenset(_EXTRA) | {"table_resumed", "table_opened"}  # also posted to the table chat


def feed_message(record: Record) -> dict[str, Any] | None:
    """The feed message for a logged record, or None if game servers do not see it."""
    kind = FEED_KINDS.get(record.kind)
    if kind is None:
        return None
    message: dict[str, Any] = {"table": record.stream, "seq": record.seq, "type": kind, "at": record.at.isoformat()}
    message.update({name: record.data.get(name) for name in _FIELDS.get(kind, ())})
    extra = _EXTRA.get(kind)
    if extra is not None:
        message.update(extra(record.data))
    if kind in ("result", "void"):
        message["log_head"] = {"seq": record.seq, "hash": record.hash}
    return message


def chat_notice(message: Mapping[str, Any]) -> str | None:
    """The table-state notice as the studio posts it to the table chat (a system message); None for the rest."""
    kind = message["type"]
    if kind not in TABLE_NOTICES:
        return None
    if kind == "table_suspended":
        return str(message["message"])
    if kind == "table_resumed":
        return {"continued": "The problem is resolved: play continues.",
                "corrected": "The problem is resolved: the cards were corrected and play continues.",
                "voided": "The round was voided: every stake is refunded."}.get(str(message["decision"]),
                                                                               "Play continues.")  # fmt: skip
    if kind == "shoe_started":
        return f"A new shoe (shoe {message['shoe']}) has started."
    if kind == "shoe_ended":
        return "The shoe has ended; the cards are being shuffled." if message["reason"] == "cut_card" else (
            "The casino is reshuffling: a new shoe follows.")  # fmt: skip
    if kind == "last_hand":
        return f"The cut card is out: round {message['round']} is the last of this shoe."
    if kind == "table_closed":
        return CLOSED_MESSAGE
    if kind == "table_opened":
        return "The table is open again."
    dealer = message.get("dealer")
    return f"{dealer} is now dealing." if dealer else "A new dealer has taken over."


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
    what was logged after the suspension is held back until the pit boss resolves it (then all of it is released,
    in order). Fed the log's records in order, by anyone reading it: the table itself, or a feed server."""

    __slots__ = ("held_from", "published")

    def __init__(self) -> None:
        self.published = 0  # the seq up to which records may be published
        self.held_from = 0  # the seq of the suspension that holds the rest back; 0 when nothing is held

    def advance(self, seq: int, kind: str) -> None:
        if self.held_from:
            if kind in RESOLVES:
                self.held_from, self.published = 0, seq
        elif kind == SUSPENDS:  # the suspension itself goes out at once (`table_suspended`); what follows waits
            self.held_from = self.published = seq
        else:
            self.published = seq
