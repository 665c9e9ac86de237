"""Signed checkpoints for the running studio: each table's head signed at every shoe's end and, while its log grows,
at least every `minutes` (studio/signing.py does the signing and the keeping)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence

from studio.domain.chain import Head
from studio.domain.checkpoints import CheckpointReason
from studio.domain.records import Record, StoreError
from studio.ports import Clock
from studio.signing import CheckpointStore, Signer
from studio.table_service import Logged

log = logging.getLogger(__name__)


class Checkpointer:
    def __init__(self, signer: Signer, store: CheckpointStore, clock: Clock, minutes: float,
                 sleep: Callable[[float], Awaitable[None]] = asyncio.sleep) -> None:  # fmt: skip
        self.signer, self.store, self.clock, self.minutes, self._sleep = signer, store, clock, minutes, sleep

    def take(self, record: Record, reason: CheckpointReason) -> None:
        checkpoint = self.signer.sign(Head(record.stream, record.seq, record.hash), self.clock.now(), reason)
        try:
            self.store.add(checkpoint)
        except (StoreError, OSError) as error:  # the next checkpoint covers this one's head: play goes on
            log.error("table %s: checkpoint at seq %s not kept: %s", record.stream, record.seq, error)

    def observe(self, table_id: str, logged: Sequence[Logged]) -> None:
        """After each command: a shoe that ended is checkpointed at once."""
        if any(entry.record.kind == "ShoeEnded" for entry in logged):
            self.take(logged[-1].record, CheckpointReason.SHOE_END)

    async def run(self, heads: Callable[[], Sequence[Record]]) -> None:
        """Every `minutes`: each table whose log grew since its last checkpoint (`heads` gives each table's last
        record) is checkpointed."""
        while True:
            await self._sleep(self.minutes * 60)
            for record in heads():
                try:
                    due = record.seq > self.store.last_seq(record.stream)
                except StoreError as error:
                    log.error("table %s: checkpoints wait for the database: %s", record.stream, error)
                    continue
                if due:
                    self.take(record, CheckpointReason.INTERVAL)
