"""Auditing a table's log in the SQL store, as `studio log verify` does: the domain's audit (studio/domain/audit.py)
with the reading around it.

Rules held here:

- The verdict is `audit`'s, record for record and reason for reason: the chain half (`verify_stored_chain`) and the
  replay half (`replay_stored`) read the same rows, up to the seq the stream had when the check began (records
  appended meanwhile are the next check's), and `audit_verdict` puts them together as the one pass would have.
- A long log's two halves run side by side: a second process checks the hash chain on the stored text while this one
  replays the events through the engine (issue 17: a table-year is 4.4 million records). Each record's link needs
  only its own row and its predecessor's, so the chain needs nothing from the replay. A log shorter than
  `PARALLEL_FROM` records is checked here, chain then replay: starting a process costs more than it would save.
- A row another hand made unreadable (its data not JSON, its time not a time) is the store's error, as when reading
  it, unless the chain broke before it.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor

from studio.domain.audit import AuditVerdict, audit_verdict, replay_stored
from studio.domain.chain import ChainVerdict, UnreadableRecord, verify_stored_chain
from studio.domain.procedure_config import ProcedureConfig
from studio.domain.records import StoredEvent, StoreError
from studio.store_sql import SqlEventStore

PARALLEL_FROM = 50_000
"""Records from which the chain is checked in a second process (about a second of replay)."""

Watch = Callable[[Iterable[StoredEvent], int], Iterable[StoredEvent]]
"""Passes the rows being replayed through, given their number: for a progress bar."""


def audit_stream(
    store: SqlEventStore, stream: str, config: ProcedureConfig | None = None, watch: Watch | None = None
) -> AuditVerdict:
    """`audit` of `stream` as `store` holds it (see the module's rules)."""
    until = store.last_seq(stream)
    rows: Iterable[StoredEvent] = store.stored_events(stream, 0, until)
    if watch is not None:
        rows = watch(rows, until)
    if until < PARALLEL_FROM:
        chain = chain_half(store, stream, until)
        replay = replay_stored(stream, rows, config)
    else:
        # spawn, not fork: the child opens its own connections instead of inheriting this process's SQLite handles.
        with ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn")) as pool:
            chained = pool.submit(chain_of, store.url, stream, until)
            replay = replay_stored(stream, rows, config)
            chain = chained.result()
    if isinstance(chain, UnreadableRecord):
        raise unreadable(store, stream, chain)
    if isinstance(replay, UnreadableRecord):
        if chain.ok:  # the chain half read the row whole: it was edited between the two reads
            raise unreadable(store, stream, replay)
        replay = AuditVerdict(stream, False, replay.seq - 1, 0, replay.seq, str(replay))  # the broken chain prevails
    return audit_verdict(stream, chain, replay)


def chain_half(store: SqlEventStore, stream: str, until: int) -> ChainVerdict | UnreadableRecord:
    """The chain of `stream` up to seq `until`, checked on the stored text."""
    try:
        return verify_stored_chain(store.stored_rows(stream, 0, until))
    except UnreadableRecord as problem:
        return problem


def chain_of(url: str, stream: str, until: int) -> ChainVerdict | UnreadableRecord:
    """`chain_half` in a process of its own, on its own connection to the database at `url`."""
    with SqlEventStore(url) as store:
        return chain_half(store, stream, until)


def unreadable(store: SqlEventStore, stream: str, problem: UnreadableRecord) -> StoreError:
    """The store's own error for the unreadable row (the one reading it gives); a plainer one if it reads now."""
    try:
        next(store.read(stream, after=problem.seq - 1), None)
    except StoreError as error:
        return error
    return StoreError(f"{store!r}, stream {stream!r}: {problem} (and readable now: was it being edited?)")
