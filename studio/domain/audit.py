"""Auditing a table's log: the hash chain, then a replay of every event through the engine that confirms each
recorded card went where the rules send it and each recorded result is what the rules make of its cards.

Pure: takes records, returns a verdict. `studio log verify` reads the records from a database and prints this.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from studio.domain import events as e
from studio.domain.chain import chain_fault
from studio.domain.errors import InvalidDeal, StudioError
from studio.domain.procedure import TableState, evolve
from studio.domain.procedure_config import ProcedureConfig
from studio.domain.records import GENESIS_HASH, Record
from studio.domain.rules import outcome


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
        try:
            event = e.decode(record.kind, record.data, record.raw)
            fault = _replay_fault(state, event)
            if fault is None:
                state = evolve(state, event)
        except (StudioError, AssertionError, TypeError, KeyError, AttributeError) as error:
            fault = f"the engine cannot replay it: {error or type(error).__name__}"
        if fault is not None:
            replay_fault = AuditVerdict(
                stream, False, record.seq - 1, rounds, record.seq, f"seq {record.seq} ({record.kind}): {fault}"
            )
            continue
        rounds += isinstance(event, e.RoundCompleted)
    if replay_fault is not None:
        return replay_fault
    return AuditVerdict(stream or "", True, count, rounds, None, f"{count} records, {rounds} results confirmed")
