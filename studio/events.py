"""Events: the facts a table logs, past tense, frozen. State is a fold of them (`studio.procedure.evolve`).

`encode` turns an event into its kind and a JSON-compatible mapping (with the raw device data apart, for the log's
`raw` column); `decode` turns them back. Both are exact inverses, which the replay relies on.
"""

from __future__ import annotations

import enum
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from datetime import datetime
from typing import Any

from studio.cards import Card
from studio.errors import StudioError
from studio.rules import Side, Winner


@dataclass(frozen=True, slots=True)
class Event:
    """Base of every event."""


@dataclass(frozen=True, slots=True)
class ShuffleConfirmed(Event):
    shoe: int
    dealer: str


@dataclass(frozen=True, slots=True)
class CutCardPlaced(Event):
    shoe: int
    cards_in_front: int


@dataclass(frozen=True, slots=True)
class BurnRequired(Event):
    reason: str  # "shuffle", "error", "dealer_change"
    count: int
    approved_by: str | None = None


@dataclass(frozen=True, slots=True)
class CardBurned(Event):
    card: Card
    source: str
    device_seq: int | None = None
    confidence: float | None = None
    raw: str | None = None
    evidence_sha256: str | None = None  # camera evidence (see `CardRead`); absent from records older than it
    evidence_boxes_sha256: str | None = None


@dataclass(frozen=True, slots=True)
class BurnCompleted(Event):
    reason: str


@dataclass(frozen=True, slots=True)
class BettingOpened(Event):
    round: int
    game_id: str
    opened_at: datetime
    closes_at: datetime


@dataclass(frozen=True, slots=True)
class BettingClosed(Event):
    round: int
    game_id: str
    early: bool = False


@dataclass(frozen=True, slots=True)
class CardDealt(Event):
    round: int
    position: int  # 1.. in dealing order
    side: Side
    card: Card
    source: str
    device_seq: int | None = None
    confidence: float | None = None
    raw: str | None = None
    game_id: str = ""  # the round's game number, so that a card can be quoted on its own
    evidence_sha256: str | None = None  # camera evidence (see `CardRead`); absent from records older than it
    evidence_boxes_sha256: str | None = None


@dataclass(frozen=True, slots=True)
class CutCardAppeared(Event):
    source: str
    last_round: int  # the round after which the shoe ends


@dataclass(frozen=True, slots=True)
class RoundCompleted(Event):
    round: int
    game_id: str
    player: tuple[Card, ...]
    banker: tuple[Card, ...]
    player_total: int
    banker_total: int
    winner: Winner
    natural: bool
    player_pair: bool
    banker_pair: bool
    last_hand: bool


@dataclass(frozen=True, slots=True)
class DealerChanged(Event):
    dealer: str


@dataclass(frozen=True, slots=True)
class TableSuspended(Event):
    reason: str  # a `SuspensionReason` value
    detail: str
    card: Card | None = None  # the read that caused it, if any
    source: str | None = None
    device_seq: int | None = None
    confidence: float | None = None
    raw: str | None = None
    evidence_sha256: str | None = None  # camera evidence (see `CardRead`); absent from records older than it
    evidence_boxes_sha256: str | None = None


@dataclass(frozen=True, slots=True)
class CardReadWhileSuspended(Event):
    """A card came out while the table waited for the pit boss: kept for the pit boss, not dealt."""

    card: Card | None
    source: str
    device_seq: int | None = None
    confidence: float | None = None
    raw: str | None = None
    evidence_sha256: str | None = None  # camera evidence (see `CardRead`); absent from records older than it
    evidence_boxes_sha256: str | None = None


@dataclass(frozen=True, slots=True)
class CardCorrected(Event):
    round: int | None
    position: int  # 0: the read that suspended the table
    original: Card | None
    corrected: Card
    reason: str
    by: str


@dataclass(frozen=True, slots=True)
class PlayContinued(Event):
    by: str
    reason: str


@dataclass(frozen=True, slots=True)
class RoundVoided(Event):
    round: int
    game_id: str
    reason: str
    by: str


@dataclass(frozen=True, slots=True)
class ShoeEnded(Event):
    shoe: int
    rounds: int
    voids: int
    corrections: int
    cards_dealt: int
    cards_burned: int
    cards_set_aside: int
    composition_ok: bool
    composition_detail: str


@dataclass(frozen=True, slots=True)
class TableClosed(Event):
    reason: str
    by: str
    reopens_in: str  # the phase the table returns to when opened


@dataclass(frozen=True, slots=True)
class TableOpened(Event):
    by: str


class SuspensionReason(enum.Enum):
    CARD_WHILE_BETTING = "card_while_betting"
    CARD_NOT_DUE = "card_not_due"
    DUPLICATE_READ = "duplicate_read"
    UNREADABLE_CARD = "unreadable_card"
    TOO_MANY_COPIES = "too_many_copies"
    SOURCE_FAILED = "source_failed"
    SOURCES_DISAGREE = "sources_disagree"
    DEALER_DECLARED = "dealer_declared"


# ---------------------------------------------------------------------------------------------------------------------
# Encoding for the log.


class EventDecodeError(StudioError):
    """A logged record does not decode to a known event."""


EVENT_TYPES: dict[str, type[Event]] = {cls.__name__: cls for cls in Event.__subclasses__()}


def _field_codec(annotation: Any) -> tuple[Callable[[Any], Any], Callable[[Any], Any]]:
    """(encode, decode) for one field type."""
    if annotation is Card:
        return (lambda c: c.code), Card.parse
    if annotation == (Card | None):
        return (lambda c: None if c is None else c.code), (lambda v: None if v is None else Card.parse(v))
    if annotation == tuple[Card, ...]:
        return (lambda cs: [c.code for c in cs]), (lambda vs: tuple(Card.parse(v) for v in vs))
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        by_value = {member.value: member for member in annotation}
        return (lambda e: e.value), by_value.__getitem__
    if annotation is datetime:
        return (lambda d: d.isoformat()), datetime.fromisoformat
    return (lambda v: v), (lambda v: v)


_CODECS: dict[type[Event], list[tuple[str, Callable[[Any], Any], Callable[[Any], Any]]]] = {}
for _cls in EVENT_TYPES.values():
    _hints = typing.get_type_hints(_cls)
    _CODECS[_cls] = [(f.name, *_field_codec(_hints[f.name])) for f in fields(_cls)]


_CARRIES_RAW = frozenset(cls for cls, codecs in _CODECS.items() if any(name == "raw" for name, _, _ in codecs))

# Fields added after records were first logged: left out of the data while they are None, so that a record without
# them keeps the form it always had (a shoe's read logs exactly what it did before the camera's evidence was hashed),
# and an older record, which lacks them, decodes to their default.
_ADDED_LATER = frozenset({"evidence_sha256", "evidence_boxes_sha256"})


def encode(event: Event) -> tuple[str, dict[str, Any], str | None]:
    """(kind, data, raw): the raw device data travels apart from the data."""
    data = {
        name: enc(value)
        for name, enc, _ in _CODECS[type(event)]
        if (value := getattr(event, name)) is not None or name not in _ADDED_LATER
    }
    raw = data.pop("raw", None)
    return type(event).__name__, data, raw


def decode(kind: str, data: Mapping[str, Any], raw: str | None = None) -> Event:
    cls = EVENT_TYPES.get(kind)
    if cls is None:
        raise EventDecodeError(f"unknown event kind {kind!r}")
    try:
        values = {name: dec(data[name]) for name, _, dec in _CODECS[cls] if name in data}
        if cls in _CARRIES_RAW:
            values["raw"] = raw
        return cls(**values)
    except (TypeError, ValueError, KeyError, StudioError) as error:
        raise EventDecodeError(f"{kind}: cannot decode {dict(data)!r}: {error}") from None
