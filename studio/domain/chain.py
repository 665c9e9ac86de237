"""The hash chain of the event log: how a record is sealed and how a stream is proven unaltered.

Rules held here:

- A record's hash is the sha256 (hex) of a canonical JSON encoding of every field but the hash itself: keys sorted, no
  whitespace, ASCII only, no NaN or infinity, and `at` written as ISO-8601 UTC with microseconds
  (`2024-05-01T12:00:00.000000Z`). The encoding never depends on the store, so a record hashes the same in memory, in
  SQLite and in PostgreSQL, and anyone with the records and this page can check them.
- The first record of a stream has seq 1 and `prev_hash` `GENESIS_HASH`; each next record has the previous seq + 1 and
  the previous record's hash as its `prev_hash`. Editing a record breaks its own hash; deleting, inserting or
  reordering records breaks a seq or a link.
- Timestamps are timezone-aware UTC. A naive or offset timestamp is refused when sealing and flagged when verifying.
- The chain alone cannot see the *last* records of a stream being cut off (what is left is still a valid chain), nor a
  record rewritten with every record after it re-hashed. A `Head` kept elsewhere (a stream's seq and the hash of its
  record there: printed by `studio log head`, carried by every result and void on the results feed, signed in
  checkpoints) catches both: the log must still reach that seq, with that hash (`head_problem`).

Pure: standard library only, no I/O.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from json.encoder import encode_basestring_ascii  # json's own C string encoder
from typing import Any

from studio.domain.records import GENESIS_HASH, NewRecord, Record, StoredRow, StoreError

_ZERO = timedelta(0)
# One encoder for every call: json.dumps with options builds a new one each time, a tenth of the cost of a replay.
_ENCODER = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False)
_DECODER = json.JSONDecoder()
_DECODE = _DECODER.decode
_SCAN: Callable[[str, int], tuple[Any, int]] = _DECODER.scan_once  # type: ignore[attr-defined]  # json's C scanner
# The one text `format_at` writes: anything else in a stored `at` is not what was hashed (ASCII digits only).
_CANONICAL_AT = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{6}Z")


class InvalidRecord(StoreError, ValueError):
    """A record cannot be logged as given (a naive or non-UTC timestamp, data that is not JSON, ...)."""


@dataclass(frozen=True, slots=True)
class ChainVerdict:
    """The outcome of `verify_chain`.

    `records` counts the records that verified: all of them when `ok`, else those before `first_bad_seq`.
    """

    ok: bool
    records: int
    first_bad_seq: int | None
    reason: str


@dataclass(frozen=True, slots=True)
class Head:
    """A witness of a stream: its record at `seq` has `hash`. Written "T1:812:<64 hex digits>"."""

    stream: str
    seq: int
    hash: str

    @classmethod
    def parse(cls, text: str) -> Head:
        """Read "TABLE:SEQ:HASH"; `ValueError` saying what is wrong otherwise."""
        parts = text.strip().rsplit(":", 2)
        if len(parts) != 3 or not parts[0]:
            raise ValueError(f"a head is written TABLE:SEQ:HASH, not {text.strip()!r}")
        stream, seq_text, digest = parts
        if not seq_text.isdigit() or int(seq_text) < 1:
            raise ValueError(f"the seq of head {text.strip()!r} is not a whole number from 1")
        if len(digest) != 64 or any(ch not in "0123456789abcdef" for ch in digest):
            raise ValueError(f"the hash of head {text.strip()!r} is not 64 lower-case hex digits")
        return cls(stream, int(seq_text), digest)

    def __str__(self) -> str:
        return f"{self.stream}:{self.seq}:{self.hash}"


def head_problem(head: Head, record: Record | None) -> str | None:
    """What is wrong with the log against `head`, given the stream's record at `head.seq` (None if there is none), or
    None if the log reaches that seq with that hash. Whether the records themselves verify is `verify_chain`'s."""
    if record is None:
        return f"table {head.stream}: the log does not reach seq {head.seq} (cut short?)"
    if record.hash != head.hash:
        return f"table {head.stream}: the record at seq {head.seq} has hash {record.hash}, not {head.hash} (rewritten?)"
    return None


def canonical_json(value: Any) -> str:
    """The one JSON text of `value` that the chain hashes and the stores keep: sorted keys, no spaces, ASCII only."""
    try:
        return _ENCODER.encode(value)
    except (TypeError, ValueError) as error:  # a set, a datetime, NaN, keys of mixed types, ...
        raise InvalidRecord(f"record data is not canonical JSON: {error}") from None


def is_utc(at: datetime) -> bool:
    """Whether `at` is timezone-aware with a zero offset (any tzinfo that says UTC, not only `datetime.UTC`)."""
    return at.tzinfo is not None and at.utcoffset() == _ZERO


def format_at(at: datetime) -> str:
    """`at` as ISO-8601 UTC with microseconds and a `Z`; the form hashed and stored. Refuses non-UTC times."""
    if not is_utc(at):
        raise InvalidRecord(f"timestamp {at.isoformat()} is not timezone-aware UTC")
    return _utc_text(at)


def _utc_text(at: datetime) -> str:
    # isoformat, not strftime, so that years below 1000 still have four digits; a zero offset always ends "+00:00".
    return at.isoformat(timespec="microseconds")[:-6] + "Z"


def record_hash(
    stream: str,
    seq: int,
    at: datetime,
    actor: str,
    kind: str,
    data: Mapping[str, Any],
    raw: str | None,
    prev_hash: str,
) -> str:
    """The sha256 hex of the canonical JSON of all these fields (see the module's rules)."""
    return _digest(stream, seq, format_at(at), actor, kind, data, raw, prev_hash)


def _digest(
    stream: str, seq: int, at: str, actor: str, kind: str, data: Mapping[str, Any], raw: str | None, prev_hash: str
) -> str:
    # dict(data): json cannot encode an arbitrary Mapping (e.g. MappingProxyType), only a dict.
    envelope = {
        "actor": actor,
        "at": at,
        "data": data if isinstance(data, dict) else dict(data),
        "kind": kind,
        "prev_hash": prev_hash,
        "raw": raw,
        "seq": seq,
        "stream": stream,
    }
    return hashlib.sha256(canonical_json(envelope).encode("ascii")).hexdigest()


def _text_digest(
    stream: str, seq: int, at: str, actor: str, kind: str, data: str, raw: str | None, prev_hash: str
) -> str:
    """`_digest` of a record whose `data` is given as its canonical JSON text: the envelope written around that text
    as `canonical_json` writes it (keys in sorted order, no spaces, strings as json's ASCII encoder writes them), so
    the data is not encoded again. The same text, so the same hash, when the fields are what `seal` checks them to be
    (strings, `seq` an int, `data` canonical); `stored_chain_fault` checks that of a stored row before trusting it."""
    envelope = (
        f'{{"actor":{encode_basestring_ascii(actor)},"at":{encode_basestring_ascii(at)},"data":{data},'
        f'"kind":{encode_basestring_ascii(kind)},"prev_hash":{encode_basestring_ascii(prev_hash)},'
        f'"raw":{"null" if raw is None else encode_basestring_ascii(raw)},"seq":{seq:d},'
        f'"stream":{encode_basestring_ascii(stream)}}}'
    )
    return hashlib.sha256(envelope.encode("ascii")).hexdigest()


def check_stream(stream: str) -> None:
    """Refuse a stream name that is not a non-empty string."""
    if not isinstance(stream, str) or not stream:
        raise InvalidRecord(f"a stream name must be a non-empty string, not {stream!r}")


def check_expected_seq(expected_seq: int) -> None:
    """Refuse an `expected_seq` that no stream can be at."""
    if not isinstance(expected_seq, int) or isinstance(expected_seq, bool) or expected_seq < 0:
        raise InvalidRecord(f"expected_seq must be an integer >= 0, not {expected_seq!r}")


def seal(stream: str, seq: int, new: NewRecord, prev_hash: str) -> Record:
    """`new` logged as record `seq` of `stream` after a record whose hash is `prev_hash`.

    The record's data is a fresh plain copy decoded from its canonical JSON (tuples become lists, and so on), so that
    what a store hands back equals what it hashed, whatever the store, and later changes to `new.data` change nothing.
    """
    return seal_stored(stream, seq, new, prev_hash)[0]


def seal_stored(stream: str, seq: int, new: NewRecord, prev_hash: str) -> tuple[Record, StoredRow]:
    """`seal`, and the row a SQL store keeps of the record: its time and data as the texts that were hashed. The data
    is encoded once, for the hash and for the row (a card's append pays for every encoding, issue 17)."""
    check_stream(stream)
    if not isinstance(seq, int) or isinstance(seq, bool) or seq < 1:
        raise InvalidRecord(f"seq must be a positive integer, not {seq!r}")
    if not isinstance(new.actor, str) or not isinstance(new.kind, str) or not new.kind:
        raise InvalidRecord(f"actor and kind must be strings, kind not empty: {new.actor!r}, {new.kind!r}")
    if new.raw is not None and not isinstance(new.raw, str):
        raise InvalidRecord(f"raw device data must be text or None, not {type(new.raw).__name__}")
    if not isinstance(new.at, datetime):
        raise InvalidRecord(f"a record's time must be a datetime, not {type(new.at).__name__}")
    if not isinstance(new.data, Mapping):
        raise InvalidRecord(f"record data must be a mapping, not {type(new.data).__name__}")
    at = new.at.astimezone(UTC) if is_utc(new.at) else new.at  # one tzinfo everywhere; format_at refuses the rest
    at_text = format_at(at)
    data = _DECODE(canonical_json(dict(new.data)))
    # Encoded again from the decoded copy: a key that is not a string sorts differently once it has become one
    # ({10: .., 9: ..} is written "9" first, its decoded copy "10" first), and the hash is of what is stored.
    data_text = _ENCODER.encode(data)
    digest = _text_digest(stream, seq, at_text, new.actor, new.kind, data_text, new.raw, prev_hash)
    record = Record(stream, seq, at, new.actor, new.kind, data, new.raw, prev_hash, digest)
    return record, (stream, seq, at_text, new.actor, new.kind, data_text, new.raw, prev_hash, digest)


def verify_chain(records: Iterable[Record]) -> ChainVerdict:
    """Check that `records` (one stream, read in order from seq 1) form an unbroken, unaltered chain.

    Stops at the first bad record and names its seq. Checks, in order: same stream, UTC timestamp, seq = previous + 1
    (1 for the first), `prev_hash` = previous hash (`GENESIS_HASH` for the first), and the record's own hash.
    """
    stream: str | None = None
    prev_seq = 0
    prev_hash = GENESIS_HASH
    count = 0
    for record in records:
        if stream is None:
            stream = record.stream
        reason = chain_fault(record, stream, prev_seq, prev_hash)
        if reason is not None:
            return ChainVerdict(ok=False, records=count, first_bad_seq=record.seq, reason=reason)
        prev_seq, prev_hash = record.seq, record.hash
        count += 1
    return ChainVerdict(ok=True, records=count, first_bad_seq=None, reason=f"{count} record(s) verified")


def chain_fault(record: Record, stream: str, prev_seq: int, prev_hash: str) -> str | None:
    """Why `record` cannot follow the record (`prev_seq`, `prev_hash`) of `stream` (0 and `GENESIS_HASH` before the
    first record), or None if it can: `verify_chain`'s check of one record."""
    seq = record.seq
    if record.stream != stream:
        return f"seq {seq} belongs to stream {record.stream!r}, not {stream!r}"
    if not is_utc(record.at):
        return f"seq {seq} has a timestamp that is not UTC: {record.at.isoformat()}"
    if seq != prev_seq + 1:
        if prev_seq == 0:
            return f"seq {seq} is the first record, but a stream starts at seq 1"
        return f"seq {seq} follows seq {prev_seq}: a record is missing or out of order"
    if record.prev_hash != prev_hash:
        if prev_seq == 0:
            return f"seq {seq} is the first record, but its prev_hash is not the genesis hash"
        return (
            f"seq {seq} does not link to seq {prev_seq} (prev_hash mismatch): a record was deleted, inserted or moved"
        )
    if not isinstance(record.data, Mapping):  # sealed data is always an object (`seal`): another hand wrote this
        return f"seq {seq} has data that is not a JSON object: the record was edited"
    try:
        at = _utc_text(record.at)  # checked UTC above
        expected = _digest(stream, seq, at, record.actor, record.kind, record.data, record.raw, record.prev_hash)
    except InvalidRecord as error:
        return f"seq {seq} cannot be hashed: {error}"
    if record.hash != expected:
        return f"seq {seq} does not match its hash: the record was edited"
    return None


class UnreadableRecord(ValueError):
    """A stored row that is not a record at all (its data is not JSON, its time not a time): edited by another hand."""

    def __init__(self, seq: int, reason: object) -> None:
        super().__init__(seq, str(reason))  # the arguments again: an error that crosses processes is rebuilt of them
        self.seq = seq

    def __str__(self) -> str:
        return f"seq {self.args[0]} is unreadable: {self.args[1]}"


def stored_record(row: StoredRow) -> Record:
    """The record a stored row holds; `ValueError` or `TypeError` if another hand made it unreadable."""
    stream, seq, at, actor, kind, data, raw, prev_hash, digest = row
    return Record(stream, seq, datetime.fromisoformat(at), actor, kind, _DECODE(data), raw, prev_hash, digest)


def verify_stored_chain(rows: Iterable[StoredRow]) -> ChainVerdict:
    """`verify_chain` on rows as the SQL store keeps them (`stored_chain_fault`): the same verdict, the same reasons.
    Raises `UnreadableRecord` at the first row that is not a record, where reading it as a `Record` fails."""
    stream: str | None = None
    prev_seq = 0
    prev_hash = GENESIS_HASH
    count = 0
    for row in rows:
        if stream is None:
            stream = row[0]
        reason = stored_chain_fault(row, stream, prev_seq, prev_hash)
        if reason is not None:
            return ChainVerdict(ok=False, records=count, first_bad_seq=row[1], reason=reason)
        prev_seq, prev_hash = row[1], row[8]
        count += 1
    return ChainVerdict(ok=True, records=count, first_bad_seq=None, reason=f"{count} record(s) verified")


def stored_chain_fault(row: StoredRow, stream: str, prev_seq: int, prev_hash: str) -> str | None:
    """`chain_fault` of the record a stored row holds, or `UnreadableRecord`: the same answer, computed on the stored
    text where it can be (a replay of a table-year checks millions of rows).

    The fast way hashes the envelope around the stored `at` and `data` texts as they are, with no decoding and
    re-encoding of the record: when the texts are the canonical ones (the time in `format_at`'s form, the data equal
    to its own canonical JSON) that envelope is the very text `_digest` hashes, so the hash compared is the same. Any
    row that fails a test of the fast way (a link, the hash, a text not canonical, a field not text) is decoded and
    judged by `chain_fault` itself, so a tampered log gets exactly the verdict and the reason it always got.
    """
    r_stream, seq, at, actor, kind, data, raw, r_prev, digest = row
    if r_stream == stream and seq == prev_seq + 1 and r_prev == prev_hash:
        try:
            if (
                _text_digest(r_stream, seq, at, actor, kind, data, raw, r_prev) == digest
                and _CANONICAL_AT.fullmatch(at) is not None
                and datetime.fromisoformat(at).tzinfo is not None  # a real date and time, not only its digits' form
                and data[:1] == "{"  # an object, as every record's data is
                and _ENCODER.encode(_SCAN(data, 0)[0]) == data  # the scanner: trailing text makes them differ
            ):
                return None
        except (
            TypeError,
            ValueError,
            StopIteration,
        ):  # UnicodeEncodeError too: not the stored form of any record; decoded below
            pass
    try:
        record = stored_record(row)
    except (TypeError, ValueError) as error:
        raise UnreadableRecord(seq, error) from None
    return chain_fault(record, stream, prev_seq, prev_hash)
