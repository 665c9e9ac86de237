"""Auditing a table's log: the hash chain, then a replay of every event through the engine that confirms each
recorded card went where the rules send it and each recorded result is what the rules make of its cards.

Pure: takes records, returns a verdict. `studio log verify` reads the records from a database and prints this; on a
long log it checks the chain in a second process while this one replays (`studio.log_audit`), and this module puts
the two halves together into the verdict the one-pass `audit` gives.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from studio.domain import events as e
from studio.domain.chain import ChainVerdict, UnreadableRecord, chain_fault
from studio.domain.errors import InvalidDeal, StudioError
from studio.domain.procedure import TableState, evolve
from studio.domain.procedure_config import ProcedureConfig
from studio.domain.records import GENESIS_HASH, Record, StoredEvent
from studio.domain.rules import outcome

_RESULT = e.RoundCompleted.__name__  # the kind of a result's record: the results confirmed are counted by it
_DECODER = json.JSONDecoder()
_SCAN: Callable[[str, int], tuple[Any, int]] = _DECODER.scan_once  # type: ignore[attr-defined]  # json's C scanner


@dataclass(frozen=True, slots=True)
class AuditVerdict:
    stream: str
    ok: bool
    records: int
    rounds: int  # results confirmed
    first_bad_seq: int | None
    reason: str


def _replay_fault(state: TableState, event: e.Event) -> str | None:
    """What is wrong with `event` in `state`, or None."""
    if isinstance(event, e.CardDealt):
        if state.round is None:
            return "a card was dealt with no round in play"
        if state.round.next_side is not event.side:
            expected = state.round.next_side.value if state.round.next_side else "nobody"
            return f"{event.card.code} went to the {event.side.value}; the rules give the card to {expected}"
    if isinstance(event, e.RoundCompleted):
        if state.round is None:
            return "a result was recorded with no round in play"
        try:
            result = outcome(state.round.player, state.round.banker)
        except InvalidDeal as error:
            return f"the recorded cards do not make a complete deal: {error}"
        recorded = (list(event.player), list(event.banker), event.player_total, event.banker_total, event.winner)
        replayed = (list(result.player), list(result.banker), result.player_total, result.banker_total, result.winner)
        if recorded != replayed:
            return (
                f"round {event.round} records {event.winner.value} {event.player_total}-{event.banker_total}; "
                f"its cards give {result.winner.value} {result.player_total}-{result.banker_total}"
            )
    return None


def _replay_one(
    state: TableState, kind: str, data: Mapping[str, Any], raw: str | None
) -> tuple[TableState, str | None]:
    """The state after the record (kind, data, raw), and what is wrong with it, if anything (then the state is the
    one before it)."""
    try:
        event = e.decode(kind, data, raw)
        fault = _replay_fault(state, event)
        if fault is None:
            return evolve(state, event), None
    except (StudioError, AssertionError, TypeError, KeyError, AttributeError) as error:
        fault = f"the engine cannot replay it: {error or type(error).__name__}"
    return state, fault


def audit(records: Iterable[Record], config: ProcedureConfig | None = None) -> AuditVerdict:
    """Verify one stream's records: the hash chain, then the replay. Stops replaying at the first bad record.

    One pass, holding one record at a time (a table-year is millions of records): each record's link and hash are
    checked, then it is replayed. The verdict is the same as checking the whole chain first: a broken chain anywhere
    is reported as such, even after a replay fault, so the chain is checked to the end once the replay has stopped.
    """
    stream: str | None = None
    state = TableState("", config or ProcedureConfig())
    prev_seq, prev_hash, count, rounds = 0, GENESIS_HASH, 0, 0
    replay_fault: AuditVerdict | None = None
    for record in records:
        if stream is None:
            stream = record.stream
            state = TableState(stream, config or ProcedureConfig())
        broken = chain_fault(record, stream, prev_seq, prev_hash)
        if broken is not None:
            return AuditVerdict(stream, False, count, 0, record.seq, f"hash chain broken: {broken}")
        prev_seq, prev_hash = record.seq, record.hash
        count += 1
        if replay_fault is not None:
            continue
        state, fault = _replay_one(state, record.kind, record.data, record.raw)
        if fault is not None:
            replay_fault = AuditVerdict(
                stream, False, record.seq - 1, rounds, record.seq, f"seq {record.seq} ({record.kind}): {fault}"
            )
            continue
        rounds += record.kind == _RESULT
    if replay_fault is not None:
        return replay_fault
    return AuditVerdict(stream or "", True, count, rounds, None, f"{count} records, {rounds} results confirmed")


def replay_stored(
    stream: str, rows: Iterable[StoredEvent], config: ProcedureConfig | None = None
) -> AuditVerdict | UnreadableRecord:
    """The replay half of `audit` on rows as the SQL store keeps them, the chain left to `verify_stored_chain`
    (another process checks it meanwhile: `studio.log_audit`); `audit_verdict` puts the two halves together.

    Stops at the first replay fault, or at a row whose data is not JSON (returned, for the chain's check to judge).
    """
    state = TableState(stream, config or ProcedureConfig())
    count = rounds = 0
    for seq, kind, text, raw in rows:
        data = _decoded(text)
        if isinstance(data, Exception):
            return UnreadableRecord(seq, data)
        state, fault = _replay_one(state, kind, data, raw)
        if fault is not None:
            return AuditVerdict(stream, False, seq - 1, rounds, seq, f"seq {seq} ({kind}): {fault}")
        rounds += kind == _RESULT
        count += 1
    return AuditVerdict(stream, True, count, rounds, None, f"{count} records, {rounds} results confirmed")


def _decoded(text: str) -> Any:
    """The JSON value of `text`, or the error that says it is not JSON. The scanner straight away where the text is
    canonical, as the store writes it (no white space to skip around the value: a tenth of a replay's decoding)."""
    try:
        value, end = _SCAN(text, 0)
        if end == len(text):
            return value
    except (StopIteration, TypeError, ValueError):
        pass
    try:
        return _DECODER.decode(text)  # white space around the value, or not JSON: json's own verdict and message
    except (TypeError, ValueError) as error:
        return error


def audit_verdict(stream: str, chain: ChainVerdict, replay: AuditVerdict) -> AuditVerdict:
    """`audit`'s verdict from its two halves over the same rows: a broken chain is the verdict wherever it breaks
    (the records after a replay fault are still chained), else the replay's."""
    if not chain.ok:
        return AuditVerdict(stream, False, chain.records, 0, chain.first_bad_seq, f"hash chain broken: {chain.reason}")
    if replay.ok and replay.records != chain.records:  # both read up to the same seq: a log changed between reads
        return AuditVerdict(stream, False, min(replay.records, chain.records), 0, None,
                            f"the log changed while it was checked ({chain.records} records chained, "
                            f"{replay.records} replayed): check it again")  # fmt: skip
    return replay
