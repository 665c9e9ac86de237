"""The in-memory twin of the event store: same contract as the SQL store (tests/test_store_contract.py), no durability.

For tests, simulations and demos. Records are sealed into the same hash chain as in the database, and each record's
data is kept as its canonical JSON text and decoded afresh for every caller, so that no caller can change the log by
mutating what it was handed (the database gives that for free).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace

from studio.domain.chain import canonical_json, check_expected_seq, check_stream, seal
from studio.domain.records import GENESIS_HASH, ConcurrentAppend, NewRecord, Record, StoreError


@dataclass(frozen=True, slots=True)
class _Stored:
    record: Record
    data_json: str

    def copy(self) -> Record:
        return replace(self.record, data=json.loads(self.data_json))


class MemoryEventStore:
    """An `EventStore` in a dict of lists, guarded by one lock (appends from several threads are serialized)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._streams: dict[str, list[_Stored]] = {}
        self._closed = False

    def append(self, stream: str, records: Sequence[NewRecord], expected_seq: int) -> list[Record]:
        check_stream(stream)
        check_expected_seq(expected_seq)
        with self._lock:
            self._check_open()
            log = self._streams.get(stream, [])
            if len(log) != expected_seq:
                raise ConcurrentAppend(stream, expected_seq, len(log))
            # Seal the whole batch before touching the log, so that a bad record appends nothing.
            prev_hash = log[-1].record.hash if log else GENESIS_HASH
            batch: list[_Stored] = []
            for seq, new in enumerate(records, start=expected_seq + 1):
                sealed = seal(stream, seq, new, prev_hash)
                batch.append(_Stored(sealed, canonical_json(sealed.data)))
                prev_hash = sealed.hash
            if batch:
                self._streams.setdefault(stream, log).extend(batch)
        # The sealed records' data are fresh dicts decoded by `seal`, shared with nobody: hand them over as they are.
        return [stored.record for stored in batch]

    def read(self, stream: str, after: int = 0) -> Iterator[Record]:
        with self._lock:
            self._check_open()
            # Seqs are 1..n, so record `seq` sits at index seq - 1; a snapshot keeps the iterator stable under appends.
            snapshot = self._streams.get(stream, [])[max(after, 0) :]
        return (stored.copy() for stored in snapshot)

    def last_seq(self, stream: str) -> int:
        with self._lock:
            self._check_open()
            return len(self._streams.get(stream, []))

    def streams(self) -> list[str]:
        with self._lock:
            self._check_open()
            return sorted(self._streams)

    def close(self) -> None:
        with self._lock:
            self._closed = True

    def __enter__(self) -> MemoryEventStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _check_open(self) -> None:
        if self._closed:
            raise StoreError("the in-memory event store is closed")
