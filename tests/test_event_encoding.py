"""The logged form of every event (`studio.domain.events.encode`), against an encoding written here from the form's
description, independently of the compiled encoders: every event class, with its fields all set and with every field
that may be left out left at its default, with and without a read and with and without the read's later fields."""

from __future__ import annotations

import dataclasses
import enum
import types
import typing
from datetime import UTC, datetime
from typing import Any

import pytest

from studio.domain import events as e
from studio.domain.cards import Card
from studio.domain.commands import CardRead

AT = datetime(2026, 3, 14, 15, 9, 26, 535000, tzinfo=UTC)
QH, NINE = Card.parse("QH"), Card.parse("9S")
FULL_READ = CardRead(QH, "cam-1", 12, 0.97, "evidence/cam-1/000012.png", "ab" * 32, "cd" * 32, "boot-3")
BARE_READ = CardRead(NINE, "shoe-1", 7)
READ_ALWAYS = ("card", "source", "device_seq", "confidence")  # written even when None; `raw` travels apart


def sample(annotation: Any, full: bool) -> Any:
    """A value of a field's type: a telling one when `full`, else the plainest (None where the type allows it)."""
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        members = [arg for arg in typing.get_args(annotation) if arg is not type(None)]
        return sample(members[0], full) if full else None
    if annotation is CardRead:
        return FULL_READ if full else BARE_READ
    if annotation is Card:
        return QH
    if annotation == tuple[Card, ...]:
        return (QH, NINE)
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        members = list(annotation)
        return members[-1] if full else members[0]
    return {bool: True, int: 3, str: "text", datetime: AT}[annotation]


def event_of(cls: type[e.Event], full: bool) -> e.Event:
    hints = typing.get_type_hints(cls)
    values = {}
    for field in dataclasses.fields(cls):
        later = field.metadata.get("later")
        values[field.name] = field.default if later and not full else sample(hints[field.name], full)
    return cls(**values)


def json_value(value: Any) -> Any:
    if isinstance(value, Card):
        return value.code
    if isinstance(value, tuple):
        return [json_value(item) for item in value]
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, datetime):
        return value.isoformat()
    return value


def expected(event: e.Event) -> tuple[str, dict[str, Any], str | None]:
    data: dict[str, Any] = {}
    raw = None
    for field in dataclasses.fields(event):
        value = getattr(event, field.name)
        hint = typing.get_type_hints(type(event))[field.name]
        if hint in (CardRead, CardRead | None):
            read = value
            for read_field in dataclasses.fields(CardRead):
                held = None if read is None else getattr(read, read_field.name)
                if read_field.name == "raw":
                    raw = held
                elif read_field.name in READ_ALWAYS or held is not None:
                    data[read_field.name] = json_value(held)
        elif not (field.metadata.get("later") and value == field.default):
            data[field.name] = json_value(value)
    return type(event).__name__, data, raw


CASES = [pytest.param(cls, full, id=f"{name}-{'full' if full else 'plain'}")
         for name, cls in sorted(e.EVENT_TYPES.items()) for full in (True, False)]  # fmt: skip


@pytest.mark.parametrize(("cls", "full"), CASES)
def test_every_event_encodes_to_its_logged_form_and_decodes_back(cls: type[e.Event], full: bool) -> None:
    event = event_of(cls, full)
    encoded = e.encode(event)
    assert encoded == expected(event)
    assert e.decode(*encoded) == event


def test_the_samples_reach_every_optional_part_of_the_form() -> None:
    suspended_without_read = event_of(e.TableSuspended, full=False)
    assert isinstance(suspended_without_read, e.TableSuspended) and suspended_without_read.read is None
    assert e.encode(suspended_without_read) == ("TableSuspended", {"reason": "text", "detail": "text",
                                                                   **dict.fromkeys(READ_ALWAYS)}, None)  # fmt: skip
    _, data, raw = e.encode(event_of(e.CardDealt, full=True))
    assert {"evidence_sha256", "evidence_boxes_sha256", "device_session"} <= data.keys()
    assert raw == FULL_READ.raw and "raw" not in data
    assert "reason" not in e.encode(event_of(e.ShoeEnded, full=False))[1]  # a field added later, at its default
    assert e.encode(event_of(e.ShoeEnded, full=True))[1]["reason"] == e.ShoeEndReason.EARLY_SHUFFLE.value


@pytest.mark.parametrize(("cls", "full"), CASES)
def test_a_record_written_before_the_later_fields_decodes_to_their_defaults(cls: type[e.Event], full: bool) -> None:
    kind, data, raw = e.encode(event_of(cls, full))
    later = {f.name for f in dataclasses.fields(cls) if f.metadata.get("later")}
    read_added = {"evidence_sha256", "evidence_boxes_sha256", "device_session"}  # the read's fields added later
    older = {name: value for name, value in data.items() if name not in later | read_added}
    decoded = e.decode(kind, {**older, "a field of a newer version": 1}, raw)  # and what it does not know is ignored
    for item in dataclasses.fields(cls):
        value = getattr(decoded, item.name)
        if item.name in later:
            assert value == item.default
        elif isinstance(value, CardRead):
            assert (value.evidence_sha256, value.evidence_boxes_sha256, value.device_session) == (None, None, None)
            assert value.card == getattr(event_of(cls, full), item.name).card


@pytest.mark.parametrize(("cls", "full"), CASES)
def test_a_record_missing_a_field_or_holding_a_wrong_value_is_a_decode_error_naming_its_kind(
    cls: type[e.Event], full: bool
) -> None:
    kind, data, raw = e.encode(event_of(cls, full))
    required = [f.name for f in dataclasses.fields(cls) if f.default is dataclasses.MISSING and f.name in data]
    for name in required:
        with pytest.raises(e.EventDecodeError, match=kind):
            e.decode(kind, {key: value for key, value in data.items() if key != name}, raw)
    coded = [name for name, value in data.items() if isinstance(value, str) and name in {"side", "card", "winner"}]
    for name in coded:
        with pytest.raises(e.EventDecodeError, match=kind):
            e.decode(kind, {**data, name: "not a value of its type"}, raw)
    for not_an_object in ([], "text", 3, None):
        with pytest.raises(e.EventDecodeError, match=kind):
            e.decode(kind, not_an_object, raw)  # type: ignore[arg-type]  # what a damaged record might hold
