"""The table service: the only writer of a table's log.

A command is decided against the current state; the events that follow are appended to the log (durable, hash-chained)
before the state moves on and before anything is published. A refused command raises and changes nothing. On start
the state is rebuilt by replaying the log, so a table interrupted by a crash resumes exactly where it was.

While the table is suspended nothing is published: records logged meanwhile are published, in order, once the pit
boss has resolved the error.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass

from studio import commands as c
from studio.events import Event, decode, encode
from studio.ports import Clock, EventStore, NewRecord, Publisher, Record
from studio.procedure import TableState, decide, evolve
from studio.procedure_config import ProcedureConfig


@dataclass(frozen=True, slots=True)
class Logged:
    """An event as the table decided it, and the record that holds it in the log."""

    event: Event
    record: Record


class TableService:
    def __init__(
        self,
        table_id: str,
        store: EventStore,
        clock: Clock,
        config: ProcedureConfig | None = None,
        publisher: Publisher | None = None,
    ) -> None:
        self.table_id = table_id
        self._store = store
        self._clock = clock
        self._publisher = publisher
        self._lock = threading.Lock()
        state = TableState(table_id, config or ProcedureConfig())
        seq = 0
        suspended_since = 0
        for record in store.read(table_id):
            state = evolve(state, decode(record.kind, record.data, record.raw))
            seq = record.seq
            if state.suspended and not suspended_since:
                suspended_since = seq
            elif not state.suspended:
                suspended_since = 0
        self._state = state
        self._seq = seq
        # What was logged before this start counts as published (subscribers resume from the log itself), except
        # what was logged while the table is still suspended: that waits for the pit boss, as it would have.
        self._published = suspended_since - 1 if suspended_since else seq

    @property
    def state(self) -> TableState:
        return self._state

    @property
    def published_seq(self) -> int:
        """The seq of the last record that may be published (a suspended table holds back what came after)."""
        return self._published

    @property
    def seq(self) -> int:
        """The seq of the last record logged for this table."""
        return self._seq

    def handle(self, command: c.Command) -> list[Logged]:
        """Apply one command; return what it logged (nothing if the command had no effect)."""
        with self._lock:
            now = self._clock.now()
            events = decide(self._state, command, now)
            if not events:
                return []
            new = [NewRecord(now, command.actor, *encode(event)) for event in events]
            records = self._store.append(self.table_id, new, self._seq)
            state = self._state
            for event in events:
                state = evolve(state, event)
            self._state, self._seq = state, records[-1].seq
            self._publish_if_open(records)
            return [Logged(event, record) for event, record in zip(events, records, strict=True)]

    def _publish_if_open(self, just_logged: Sequence[Record]) -> None:
        if self._state.suspended or self._published == self._seq:
            return
        if self._publisher is not None:
            held_back = self._published < just_logged[0].seq - 1  # records logged during a suspension
            pending = list(self._store.read(self.table_id, after=self._published)) if held_back else just_logged
            self._publisher.publish(pending)
        self._published = self._seq
