"""The table service: the only writer of a table's log.

A command is decided against the current state; the events that follow are appended to the log (durable, hash-chained)
before the state moves on and before anything is published. A refused command raises and changes nothing. On start
the state is rebuilt by replaying the log, so a table interrupted by a crash resumes exactly where it was.

When the table suspends, the suspension itself is published at once (game servers tell their players); records
logged after it are published, in order, once the pit boss has resolved the error. `public_state` is the state as
published: what players may be shown while the rest waits.

When the log cannot be written (the database is unreachable), nothing happens at the table: the command is refused
with `LogUnavailable`, the state stays where it was, and `log_unavailable` says why, for consoles and health checks,
until a write or `check_log` succeeds again. A card that could not be logged is not lost: its source offers it again
(the smart shoe is acknowledged only once its card is logged). Once the log answers again, a `LogOutage` record
(from when, until when, how many commands were refused) goes into the table's log before anything else, so that the
outage is part of the audited history, not only of the process's own log.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime

from studio.domain import commands as c
from studio.domain import events as e
from studio.domain.events import Event, decode, encode
from studio.domain.feed import PublicationFrontier
from studio.domain.procedure import TableState, decide, evolve
from studio.domain.procedure_config import ProcedureConfig
from studio.domain.records import ConcurrentAppend, NewRecord, Record, StoreError
from studio.ports import Clock, EventStore, Publisher

OUTAGE_ACTOR = "system:table-service"  # who logs an outage: the service itself, not a person or a device


class LogUnavailable(StoreError):
    """The table's log cannot be written now: the command changed nothing; the table waits for the database."""


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
        self.log_unavailable: str | None = None  # why the log cannot be written, while it cannot
        self._outage: e.LogOutage | None = None  # since when the log has refused writes, and how many (`until` unset)
        self._state = TableState(table_id, config or ProcedureConfig())
        self._seq = 0
        self._frontier = PublicationFrontier()  # how far the log may be published
        self._public = (0, self._state)  # (seq, state) as published, set at once: read together without a lock
        self._catch_up()
        # What was logged before this start counts as published (subscribers resume from the log itself), except
        # what was logged while the table is still suspended: that waits for the pit boss, as it would have.
        self._published = self._frontier.published

    def _catch_up(self) -> list[Record]:
        """Apply what the log holds beyond our seq (at start: everything); return those records."""
        caught_up = list(self._store.read(self.table_id, after=self._seq))
        for record in caught_up:
            self._apply(decode(record.kind, record.data, record.raw), record)
        return caught_up

    def _apply(self, event: Event, record: Record) -> None:
        """The state and the publication frontier after one logged record."""
        self._state, self._seq = evolve(self._state, event), record.seq
        self._frontier.advance(record.seq, record.kind)
        if self._frontier.published == record.seq:
            self._public = (record.seq, self._state)

    @property
    def state(self) -> TableState:
        return self._state

    @property
    def public(self) -> tuple[int, TableState]:
        """The seq of the last record that may be published and the state as of it: while a suspension holds records
        back, the state it began in (what players may see of the table). A game server that draws the table from
        this state follows the feed after that seq without missing or repeating anything."""
        return self._public

    @property
    def public_state(self) -> TableState:
        return self._public[1]

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
            new = [NewRecord(now, str(command.actor), *encode(event)) for event in events]
            ended = self._outage_ended(now)
            if ended is not None:  # the log answers again: the outage goes in first, in the same write
                events = [ended, *events]
                new = [NewRecord(now, OUTAGE_ACTOR, *encode(ended)), *new]
            try:
                records = self._store.append(self.table_id, new, self._seq)
            except ConcurrentAppend:
                # Our last write was committed although its answer was lost (the connection dropped at the commit):
                # take the log as it is, and let the caller offer the command again against that state.
                self._recover()
                raise LogUnavailable("the log held a write this table had not seen; it has caught up: retry") from None
            except StoreError as error:
                self.log_unavailable = str(error)
                self._refused(now, str(error))
                raise LogUnavailable(f"the log of table {self.table_id} cannot be written: {error}") from None
            self.log_unavailable = None
            self._outage = None
            for event, record in zip(events, records, strict=True):
                self._apply(event, record)
            self._publish(records)
            return [Logged(event, record) for event, record in zip(events, records, strict=True)]

    def probe_log(self) -> bool:
        """Whether the log answers a question (the database is back), changing nothing else: safe to ask from another
        thread, so that a database that takes its time to fail does not hold up the caller's event loop."""
        try:
            self._store.last_seq(self.table_id)
        except StoreError as error:
            self.log_unavailable = str(error)
            return False
        return True

    def check_log(self) -> bool:
        """Whether the log answers again (then `log_unavailable` is cleared and anything logged that this table had
        not seen is applied and published); False if it still does not."""
        with self._lock:
            try:
                self._recover()
                ended = self._outage_ended(self._clock.now())
                if ended is not None:
                    new = NewRecord(ended.until, OUTAGE_ACTOR, *encode(ended))
                    records = self._store.append(self.table_id, [new], self._seq)
                    self._apply(ended, records[-1])
                    self._outage = None
                    self._publish(records)
            except ConcurrentAppend:
                self._recover()
                return False  # another writer came first: the next check logs the outage
            except StoreError as error:
                self.log_unavailable = str(error)
                return False
            self.log_unavailable = None
            return True

    def _refused(self, now: datetime, reason: str) -> None:
        first_line = reason.splitlines()[0] if reason else "the log cannot be written"
        if self._outage is None:
            self._outage = e.LogOutage(now, now, 0, first_line)
        self._outage = replace(self._outage, refused=self._outage.refused + 1)

    def _outage_ended(self, now: datetime) -> e.LogOutage | None:
        return None if self._outage is None else replace(self._outage, until=now)

    def _recover(self) -> None:
        caught_up = self._catch_up()
        if caught_up:
            self._publish(caught_up)

    def _publish(self, just_logged: Sequence[Record]) -> None:
        """Publish what the frontier now allows: the records just logged, or, once a suspension is resolved, also
        those it held back (read again from the log), in order."""
        up_to = self._frontier.published
        if up_to <= self._published:
            return
        if self._publisher is not None:
            held_back = self._published < just_logged[0].seq - 1  # records logged during a suspension
            pending = list(self._store.read(self.table_id, after=self._published)) if held_back else just_logged
            self._publisher.publish([record for record in pending if record.seq <= up_to])
        self._published = up_to
