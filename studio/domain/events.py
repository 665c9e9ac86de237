"""Events: the facts a table logs, past tense, frozen. State is a fold of them (`studio.domain.procedure.evolve`).

`encode` turns an event into its kind and a JSON-compatible mapping (with the raw device data apart, for the log's
`raw` column); `decode` turns them back. Both are exact inverses, which the replay relies on.

The four events that carry a device's read (`CardBurned`, `CardDealt`, `TableSuspended`, `CardReadWhileSuspended`)
hold one `CardRead` record. In the log its fields are written beside the event's own (`card`, `source`,
`device_seq`, `confidence`, and the raw data apart), the form records have always had; a field added to `CardRead`
later is left out while it is None, so that a record without it keeps that form and an older record decodes to its
default. An event's own field added later is declared with `metadata=LATER`: it is left out of the record while it
holds its default, for the same reason.
"""

from __future__ import annotations

import enum
import operator
import typing
from collections.abc import Callable, Mapping
from dataclasses import MISSING, dataclass, field, fields
from datetime import datetime
from typing import Any

from studio.domain.cards import Card
from studio.domain.commands import CardRead
from studio.domain.errors import StudioError
from studio.domain.rules import Side, Winner


@dataclass(frozen=True, slots=True)
class Event:
    """Base of every event."""


# The metadata of a field added to an event after records of it were logged (`field(default=..., metadata=LATER)`):
# left out of a record while it holds its default, which an older record, without it, decodes to; so old and new
# records keep one form.
LATER = {"later": True}


def _accepted(read: CardRead) -> Card:
    """The card of a read the table accepted (dealt or burned): always a card, never an unreadable one."""
    if read.card is None:
        raise ValueError(f"a read from {read.source} without a card cannot be dealt or burned")
    return read.card


@dataclass(frozen=True, slots=True)
class ShuffleConfirmed(Event):
    shoe: int
    dealer: str


@dataclass(frozen=True, slots=True)
class CutCardPlaced(Event):
    shoe: int
    cards_in_front: int
    decks: int | None = field(default=None, metadata=LATER)  # the shoe's decks


class BurnReason(enum.StrEnum):
    """Why cards are burned (each is also the text the log keeps)."""

    SHUFFLE = "shuffle"  # a new shoe
    ERROR = "error"  # play resumes after an error, on the pit boss's approval
    DEALER_CHANGE = "dealer_change"  # a new dealer at the table


@dataclass(frozen=True, slots=True)
class BurnRequired(Event):
    reason: BurnReason
    count: int
    approved_by: str | None = None


@dataclass(frozen=True, slots=True)
class CardBurned(Event):
    read: CardRead  # as the table accepted it: its card is the pit boss's correction, if there was one

    def __post_init__(self) -> None:
        if self.read.card is None:  # `_accepted`'s check, without the call for a card that is there
            _accepted(self.read)

    @property
    def card(self) -> Card:
        return _accepted(self.read)


@dataclass(frozen=True, slots=True)
class BurnCompleted(Event):
    reason: BurnReason


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
class BettingReopened(Event):
    """Betting is open again once the pit boss let a round interrupted during betting go on and the error burn is
    done: the players get their betting time back (`betting_seconds_after_error`), the round keeps its number."""

    round: int
    game_id: str
    closes_at: datetime  # the round's new betting deadline


@dataclass(frozen=True, slots=True)
class CardDealt(Event):
    round: int
    position: int  # 1.. in dealing order
    side: Side
    read: CardRead  # as the table accepted it: its card is the pit boss's correction, if there was one
    game_id: str = ""  # the round's game number, so that a card can be quoted on its own

    def __post_init__(self) -> None:
        if self.read.card is None:  # `_accepted`'s check, without the call for a card that is there
            _accepted(self.read)

    @property
    def card(self) -> Card:
        return _accepted(self.read)


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
    dealer: str  # the account ("dealer:alice"), for the audit
    display_name: str | None = field(
        default=None, metadata=LATER
    )  # what players are shown (the feed's `dealer_changed`)


@dataclass(frozen=True, slots=True)
class TableSuspended(Event):
    reason: str  # a `SuspensionReason` value
    detail: str
    read: CardRead | None = None  # the read that caused it, if any
    game_id: str | None = field(default=None, metadata=LATER)  # the round it interrupted, if any


@dataclass(frozen=True, slots=True)
class CardReadWhileSuspended(Event):
    """A card came out while the table waited for the pit boss: kept for the pit boss, not dealt."""

    read: CardRead


@dataclass(frozen=True, slots=True)
class CardCorrected(Event):
    round: int | None
    position: int  # 0: the read that suspended the table
    original: Card | None
    corrected: Card
    reason: str
    by: str
    game_id: str | None = field(default=None, metadata=LATER)  # the round's game number


@dataclass(frozen=True, slots=True)
class PlayContinued(Event):
    by: str
    reason: str


class Resumption(enum.StrEnum):
    """How the pit boss ended a suspension, as game servers are told (the feed's `table_resumed`)."""

    CONTINUED = "continued"  # play goes on as it was
    CORRECTED = "corrected"  # play goes on, with cards the pit boss corrected
    VOIDED = "voided"  # the round was voided and its stakes refunded


@dataclass(frozen=True, slots=True)
class TableResumed(Event):
    """The suspension is over: logged right after the pit boss's decision (`PlayContinued` or `RoundVoided`)."""

    decision: Resumption


@dataclass(frozen=True, slots=True)
class RoundVoided(Event):
    round: int
    game_id: str
    reason: str
    by: str


class ShoeEndReason(enum.StrEnum):
    """Why a shoe ended (each is also the text the log keeps)."""

    CUT_CARD = "cut_card"  # the last hand after the cut card appeared was played
    EARLY_SHUFFLE = "early_shuffle"  # a pit boss ordered a shuffle after a completed round (seed 000 §3.2.3)


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
    reason: ShoeEndReason = field(default=ShoeEndReason.CUT_CARD, metadata=LATER)  # older records: the cut card


@dataclass(frozen=True, slots=True)
class ShuffleOrdered(Event):
    """A pit boss ordered the shoe reshuffled after a completed round; the `ShoeEnded` that follows says so."""

    shoe: int
    reason: str
    by: str


class InspectionStage(enum.StrEnum):
    """When decks are inspected (seed 000 §1.3.3): before a shoe's shuffle, and once the shoe has ended."""

    START = "start"
    END = "end"


@dataclass(frozen=True, slots=True)
class DecksInspected(Event):
    """The dealer spread the decks of `shoe` face up and face down with the pit boss, who approved them (§3.1.2)."""

    shoe: int
    stage: InspectionStage
    decks: int
    dealer: str
    approved_by: str


@dataclass(frozen=True, slots=True)
class DeckReplaced(Event):
    """During an inspection, a pit boss replaced a damaged or incomplete deck, noting the defect (§3.1.3)."""

    shoe: int
    stage: InspectionStage
    deck: str
    reason: str
    by: str


@dataclass(frozen=True, slots=True)
class TableClosed(Event):
    reason: str
    by: str
    reopens_in: str  # the phase the table returns to when opened


@dataclass(frozen=True, slots=True)
class TableOpened(Event):
    by: str


@dataclass(frozen=True, slots=True)
class LogOutage(Event):
    """The table's log could not be written from `since` until `until`: `refused` commands were refused meanwhile
    (each changed nothing; a device's card was offered again). Logged by the table service once the log answers again,
    not decided by the procedure: the outage is part of the audited history, and changes no state."""

    since: datetime
    until: datetime
    refused: int
    reason: str  # the first error, in one line


# Seats (seed 004). Each names the player by their game server's id (for the audit; the feed shows only the seat and
# the nickname).


@dataclass(frozen=True, slots=True)
class SeatTaken(Event):
    seat: int
    player_id: str
    game_server: str  # the game server that seated the player: the only one that may move them
    nickname: str  # what the table is shown
    first_round: int  # the first round the player plays: the next round to open


@dataclass(frozen=True, slots=True)
class SeatChanged(Event):
    from_seat: int
    seat: int
    player_id: str
    nickname: str


@dataclass(frozen=True, slots=True)
class SeatLeft(Event):
    seat: int
    player_id: str
    nickname: str


@dataclass(frozen=True, slots=True)
class RoundPassed(Event):
    """A seated player passed the round before betting closed."""

    round: int
    game_id: str
    seat: int
    player_id: str
    nickname: str


@dataclass(frozen=True, slots=True)
class PlayerSatOut(Event):
    """A seated player neither bet nor passed before betting closed: they sit the round out (seed 004)."""

    round: int
    game_id: str
    seat: int
    player_id: str
    nickname: str


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
    # The encoders are C-level getters where they can be: every event a table logs is encoded.
    if annotation is Card:
        return operator.attrgetter("code"), Card.parse
    if annotation == (Card | None):
        return (lambda c: None if c is None else c.code), (lambda v: None if v is None else Card.parse(v))
    if annotation == tuple[Card, ...]:
        return (lambda cs: [c.code for c in cs]), (lambda vs: tuple(Card.parse(v) for v in vs))
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        by_value = {member.value: member for member in annotation}
        return operator.attrgetter("_value_"), by_value.__getitem__  # `_value_`: what the `value` property reads
    if annotation is datetime:
        return datetime.isoformat, datetime.fromisoformat
    return _same, _same


def _same(value: Any) -> Any:
    """The codec of a JSON value as it is (tested by identity where speed counts: a replay decodes every event)."""
    return value


Codec = tuple[str, Callable[[Any], Any], Callable[[Any], Any]]
_CODECS: dict[type[Event], list[Codec]] = {}
_READ_FIELD: dict[type[Event], str] = {}  # the event's `CardRead` field, for the four events that carry one
_LATER: dict[type[Event], tuple[tuple[str, Any], ...]] = {}  # fields added later, with the default left out
for _cls in EVENT_TYPES.values():
    _hints = typing.get_type_hints(_cls)
    _later = tuple((f.name, f.default) for f in fields(_cls) if f.metadata.get("later"))
    if _later:
        _LATER[_cls] = _later
    _CODECS[_cls] = [(f.name, *_field_codec(_hints[f.name])) for f in fields(_cls)
                     if _hints[f.name] not in (CardRead, CardRead | None)]  # fmt: skip
    _READ_FIELD.update((_cls, f.name) for f in fields(_cls) if _hints[f.name] in (CardRead, CardRead | None))

_READ_HINTS = typing.get_type_hints(CardRead)
_READ_CODECS: list[Codec] = [(f.name, *_field_codec(_READ_HINTS[f.name])) for f in fields(CardRead)]

# The read's fields that records have always had: written even when None (a suspension without a read has them all
# None). Any other was added later, and is left out while it is None.
_READ_ALWAYS = frozenset({"card", "source", "device_seq", "confidence", "raw"})  # a session, evidence: added later


def _constructor_source(cls: type, decoders: dict[str, Callable[[Any], Any]], namespace: dict[str, Any],
                        read_field: str | None = None) -> str:  # fmt: skip
    """The source of `decode(data, raw)` for dataclass `cls`: each field in `decoders` decoded from `data` (a field
    with a default: only if `data` has it), `read_field` the read decoded from the same `data`, `raw` the field of
    that name. What it interpolates are the dataclass's field names (identifiers)."""
    namespace[f"_{cls.__name__}"] = cls
    arguments = []
    for item in fields(cls):
        name = item.name
        if name == read_field:
            arguments.append(f"{name}=_read_of(data, raw)")
            continue
        if name not in decoders:  # `raw`: the record's, beside its data
            arguments.append(f"{name}=raw")
            continue
        value = f"data[{name!r}]"
        if item.default is not MISSING:
            namespace[f"_default_{name}"] = item.default
        if decoders[name] is not _same:
            namespace[f"_decode_{name}"] = decoders[name]
            value = f"_decode_{name}({value})"
            if item.default is not MISSING:
                value = f"({value} if {name!r} in data else _default_{name})"
        elif item.default is not MISSING:
            value = f"data.get({name!r}, _default_{name})"
        arguments.append(f"{name}={value}")
    return f"def decode(data, raw):\n    return _{cls.__name__}({', '.join(arguments)})"


def _compile_decoder(cls: type, decoders: dict[str, Callable[[Any], Any]],
                     read_field: str | None = None) -> Callable[[Mapping[str, Any], str | None], Any]:  # fmt: skip
    """`cls`'s decoder, written out from its fields and compiled once, as the encoders are (`_compile_encoder`): a
    replay decodes every event of the log, and a loop over the fields with a test of each cost 40% more."""
    namespace: dict[str, Any] = {"_read_of": _decode_read}
    exec(_constructor_source(cls, decoders, namespace, read_field), namespace)  # made of field names only
    decoder: Callable[[Mapping[str, Any], str | None], Any] = namespace["decode"]
    return decoder


def _decode_read(data: Mapping[str, Any], raw: str | None) -> CardRead | None:
    if data.get("source") is None:  # a suspension that no read caused
        return None
    read: CardRead = _READ_DECODER(data, raw)
    return read


_READ_DECODER = _compile_decoder(CardRead, {name: dec for name, _, dec in _READ_CODECS if name != "raw"})


Encoded = tuple[str, dict[str, Any], str | None]  # (kind, data, raw)


def _encoder_source(cls: type[Event], namespace: dict[str, Any]) -> str:
    """The source of `cls`'s encoder (the form `encode` describes); the codecs it calls go into `namespace`. What it
    interpolates are the dataclasses' field names (identifiers) and class names."""

    def value(owner: str, name: str, enc: Callable[[Any], Any]) -> str:
        if enc is _same:
            return f"{owner}.{name}"
        namespace[f"_encode_{owner}_{name}"] = enc
        return f"_encode_{owner}_{name}({owner}.{name})"

    own = [f"{name!r}: {value('event', name, enc)}" for name, enc, _ in _CODECS[cls]]
    later = []
    for name, default in _LATER.get(cls, ()):
        namespace[f"_default_{name}"] = default
        later += [f"    if event.{name} == _default_{name}:", f"        del data[{name!r}]"]
    kind = cls.__name__
    read_field = _READ_FIELD.get(cls)
    if read_field is None:
        return "\n".join(["def encode(event):", f"    data = {{{', '.join(own)}}}", *later,
                          f"    return {kind!r}, data, None"])  # fmt: skip
    always = [(name, enc) for name, enc, _ in _READ_CODECS if name in _READ_ALWAYS and name != "raw"]
    no_read = [f"{name!r}: None" for name, _ in always]  # a suspension no read caused: the read's fields, all None
    read = [f"{name!r}: {value('read', name, enc)}" for name, enc in always]
    added = []  # the read's fields added later: written only when they hold something
    for name, enc, _ in _READ_CODECS:
        if name not in _READ_ALWAYS:
            added += [f"    if read.{name} is not None:", f"        data[{name!r}] = {value('read', name, enc)}"]
    return "\n".join(["def encode(event):",
                      f"    read = event.{read_field}",
                      "    if read is None:",
                      f"        data = {{{', '.join(own + no_read)}}}",
                      *(f"    {line}" for line in later),
                      f"        return {kind!r}, data, None",
                      f"    data = {{{', '.join(own + read)}}}",
                      *later, *added,
                      f"    return {kind!r}, data, read.raw"])  # fmt: skip


def _compile_encoder(cls: type[Event]) -> Callable[[Event], Encoded]:
    """`cls`'s encoder, written out from its fields and compiled once, as `dataclasses` writes `__init__`: one dict
    display with each field read once costs a third of building the dict field by field, and every event a table
    logs is encoded (and a replay's audit encodes it again)."""
    namespace: dict[str, Any] = {}
    exec(_encoder_source(cls, namespace), namespace)  # its source is made of the class's field and type names
    encoder: Callable[[Event], Encoded] = namespace["encode"]
    return encoder


_ENCODERS = {cls: _compile_encoder(cls) for cls in EVENT_TYPES.values()}
_DECODERS = {cls: _compile_decoder(cls, {name: dec for name, _, dec in _CODECS[cls]}, _READ_FIELD.get(cls))
             for cls in EVENT_TYPES.values()}  # fmt: skip


def encode(event: Event) -> Encoded:
    """(kind, data, raw): the event's class name; its fields as JSON values (a card as its code, an enum as its value,
    a time in ISO 8601), a field added later left out while it holds its default, and for an event with a read the
    read's fields beside its own (those added to `CardRead` later only when they hold something); the raw device data
    travels apart from the data."""
    return _ENCODERS[type(event)](event)


def decode(kind: str, data: Mapping[str, Any], raw: str | None = None) -> Event:
    cls = EVENT_TYPES.get(kind)
    if cls is None:
        raise EventDecodeError(f"unknown event kind {kind!r}")
    try:
        event: Event = _DECODERS[cls](data, raw)
        return event
    except (TypeError, ValueError, KeyError, AttributeError, StudioError) as error:  # AttributeError: data not a dict
        shown = dict(data) if isinstance(data, Mapping) else data
        raise EventDecodeError(f"{kind}: cannot decode {shown!r}: {error}") from None
